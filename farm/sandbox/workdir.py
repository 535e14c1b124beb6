"""A size-capped work dir: the one host directory a sandboxed program may write.

Everything else it can write is a private tmpfs of its own (/tmp, /dev/shm, capped by
`Limits.tmp_bytes`). The work dir is a host directory that the trusted side writes into too
(the staged submission) and that bwrap / docker bind in, so its cap has to be on the host: a
tmpfs of `Limits.workdir_bytes` mounted on the directory for the life of the sandbox. Writes
beyond it fail with ENOSPC inside the sandbox and the host disk is never touched; the mount
is removed (and its pages freed) when the program ends.

Mounting needs root, which is how node agents run (docs/security.md). Without root (a
developer's machine) the work dir stays a plain directory: each file is still capped by
RLIMIT_FSIZE, and `capped_workdir` returns None.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from farm.sandbox.base import SandboxUnavailable
from farm.sandbox.limits import Limits


def capped_workdir(
    workdir: Path, limits: Limits, *, uid: int | None = None, gid: int | None = None
) -> Callable[[], None] | None:
    """Mount a tmpfs of `limits.workdir_bytes` on `workdir` (owned by uid:gid, mode 0700),
    keeping what was already in it. Returns the function that unmounts it, or None when this
    process cannot mount (not root). Raises SandboxUnavailable when the mount fails as root."""
    if os.geteuid() != 0:
        return None
    mount, umount = shutil.which("mount"), shutil.which("umount")
    if mount is None or umount is None:
        raise SandboxUnavailable("mount/umount are missing", hint="install util-linux")
    owner = f",uid={uid},gid={gid}" if uid is not None and gid is not None else ""
    options = f"size={limits.workdir_bytes},mode=0700,nosuid,nodev{owner}"
    with tempfile.TemporaryDirectory(prefix=".staged-", dir=workdir.parent) as held:
        kept = [workdir / name for name in os.listdir(workdir)]
        for path in kept:
            shutil.move(path, Path(held) / path.name)
        done = subprocess.run(
            [mount, "-t", "tmpfs", "-o", options, "farm-workdir", str(workdir)],
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            raise SandboxUnavailable(
                f"cannot mount the work dir's tmpfs on {workdir}: "
                f"{done.stderr.decode(errors='replace').strip()}",
                hint="the farm needs CAP_SYS_ADMIN on the node to cap the work dir",
            )
        for name in os.listdir(held):
            shutil.move(Path(held) / name, workdir / name)

    def unmount() -> None:
        subprocess.run([umount, "--lazy", str(workdir)], capture_output=True, check=False)

    return unmount
