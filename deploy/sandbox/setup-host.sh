#!/bin/sh
# Make this machine able to sandbox kernels with bubblewrap: install bwrap and prlimit when they
# are missing (Debian/Ubuntu, as root), and create the unprivileged account the bwrap runner drops
# to when the farm runs as root. Idempotent; prints what to do when it cannot do it itself.
set -eu
here=$(dirname "$0")
missing=""
command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
command -v prlimit >/dev/null 2>&1 || missing="$missing util-linux"
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
    else
        echo "the farm sandboxes kernels with bubblewrap: install it (e.g. sudo apt-get install$missing)" >&2
        exit 1
    fi
fi
if [ "$(id -u)" = 0 ]; then
    sh "$here/add-sandbox-user.sh"
fi
