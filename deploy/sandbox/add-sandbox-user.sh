#!/bin/sh
# Create the unprivileged account the bwrap runner drops to when the farm runs as root.
# A system user with no home, no shell and no files: a sandbox escape lands in an account that
# owns nothing. Idempotent. Override the name with FARM_SANDBOX_USER.
set -eu
name="${FARM_SANDBOX_USER:-farm-sandbox}"
if id -u "$name" >/dev/null 2>&1; then
    exit 0
fi
useradd --system --user-group --no-create-home --home-dir /nonexistent \
    --shell /usr/sbin/nologin "$name"
