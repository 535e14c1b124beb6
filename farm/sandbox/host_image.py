"""A docker sandbox image that runs on the node's own software, built without any registry.

    python -m farm.sandbox.host_image [--tag kernel-farm-sandbox:cpu] [--vendor nvidia|amd]

The image holds almost nothing: mount points, the top-level symlinks of a merged-/usr system, an
/etc with two accounts (root, and `sandbox` 10001 that owns nothing) and a label. Everything it
runs comes from the node, bound read-only by the docker runner at run time: /usr and the library
directories, the dynamic loader's files of /etc, the Python environment the farm runs in, the
`farm` package and the toolchain of farm.sandbox.toolchain (the same paths the bwrap runner
binds). The image is made with the engine's import call (`docker import` of a tar built here), so
a node with an engine but no registry, and no base image, can run the docker runner.

The full images (deploy/sandbox/Dockerfile.*) carry their own Python and torch instead; both kinds
get the same container policy (farm.sandbox.docker_runner.container_config).
"""

from __future__ import annotations

import argparse
import io
import sys
import tarfile
from typing import Any

from farm.hardware import kinds
from farm.sandbox.docker_runner import HOST_ENV_LABEL, SANDBOX_UID, connect, image_of
from farm.sandbox.toolchain import host_root

_PASSWD = (
    "root:x:0:0:root:/root:/usr/sbin/nologin\n"
    f"sandbox:x:{SANDBOX_UID}:{SANDBOX_UID}:sandbox:/tmp/home:/usr/sbin/nologin\n"
)
_GROUP = f"root:x:0:\nsandbox:x:{SANDBOX_UID}:\n"
_MOUNT_POINTS = ("proc", "sys", "dev", "etc", "root", "home", "opt", "var", "run")


def rootfs_tar() -> bytes:
    """The image's whole filesystem, as a tar archive."""
    root = host_root()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:

        def add_dir(name: str, mode: int = 0o755) -> None:
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, mode
            tar.addfile(info)

        def add_file(name: str, text: str) -> None:
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))

        dirs = {*_MOUNT_POINTS, *(str(p).lstrip("/") for p in root.binds)}
        for name in sorted(dirs):
            add_dir(name)
        add_dir("tmp", 0o1777)

        def add_link(name: str, target: str) -> None:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)

        for link, target in root.symlinks.items():
            if link == "/sbin":
                # The engine mounts its init at /sbin/docker-init: /sbin must be the image's own
                # directory, not a link into the read-only /usr; it keeps ldconfig reachable.
                add_dir("sbin")
                add_link("sbin/ldconfig", "/usr/sbin/ldconfig")
            else:
                add_link(link.lstrip("/"), target)
        add_file("etc/passwd", _PASSWD)
        add_file("etc/group", _GROUP)
    return buf.getvalue()


def build(client: Any, tag: str) -> str:
    """Import the image into the engine `client` speaks to, as `tag`; returns the image id."""
    repository, _, version = tag.rpartition(":")
    if not repository:
        repository, version = tag, "latest"
    client.api.import_image_from_data(
        rootfs_tar(),
        repository=repository,
        tag=version,
        changes=[
            f"LABEL {HOST_ENV_LABEL}=1",
            f"USER {SANDBOX_UID}:{SANDBOX_UID}",
            "WORKDIR /tmp",
        ],
    )
    return str(client.images.get(tag).id)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--vendor",
        choices=[k.vendor for k in kinds.gpu_kinds()],
        help="the GPUs it serves (default CPU)",
    )
    ap.add_argument("--tag", help="the image name (default: the one the runner uses)")
    args = ap.parse_args(argv)
    tag = args.tag or image_of(args.vendor)
    image_id = build(connect(), tag)
    print(f"built {tag} ({image_id[:19]}): the docker runner binds this node's software into it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
