"""The `bwrap` runner: bubblewrap, every namespace it can unshare, the program as an
unprivileged uid.

What the sandboxed program sees: read-only /usr (and the /bin, /lib links), a few /etc files the
dynamic loader needs, the Python installation and its site-packages, the farm package, the
`ro_binds`; a private, size-capped tmpfs /tmp and /dev/shm; a fresh /proc of its own pid
namespace; a minimal /dev plus the device nodes of the one assigned GPU; the work dir,
read-write. It has its own empty network namespace (no network, not even the host's loopback),
its own IPC and UTS namespaces, no capabilities, no_new_privs, a clean environment and rlimits.

Which uid runs the program:
- The farm runs as root (a node agent): bwrap runs as root so that it can bind paths only root
  can reach (a Python under /root), creates no user namespace, and the last step inside the
  sandbox is `setpriv` to FARM_SANDBOX_USER (default `farm-sandbox`: a system user that owns no
  files; deploy/sandbox/add-sandbox-user.sh creates it), clearing groups, every capability set
  and the bounding set. The program is then a real unprivileged uid on the host, so even a
  mistake in what is bound exposes only world-readable files.
- Any other user: bwrap creates a user namespace and the program runs as that same user.
"""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import farm
from farm.config import node_settings
from farm.sandbox.base import (
    Runner,
    RunnerAbsent,
    SandboxProcess,
    SandboxUnavailable,
    rlimit_args,
    start_piped,
)
from farm.sandbox.limits import DeviceAssignment, Limits
from farm.sandbox.process import prlimit_path
from farm.sandbox.toolchain import host_root, python_paths
from farm.sandbox.workdir import capped_workdir

ADD_USER_HINT = (
    "run deploy/sandbox/add-sandbox-user.sh as root (creates the system user 'farm-sandbox')"
)

# Namespaces when bwrap runs as root (no user namespace: the uid drop happens inside).
_ROOT_NAMESPACES = [
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-uts",
    "--unshare-cgroup-try",
]
# Files under /etc that the dynamic loader and libc read; nothing else of /etc is visible.


def sandbox_user() -> pwd.struct_passwd | None:
    """The account the program runs as when the farm is root; None when not root.

    Raises SandboxUnavailable when root and the account is missing or privileged.
    """
    if os.geteuid() != 0:
        return None
    name = node_settings().sandbox_user
    try:
        user = pwd.getpwnam(name)
    except KeyError:
        raise SandboxUnavailable(
            f"sandbox user '{name}' does not exist", hint=ADD_USER_HINT
        ) from None
    if user.pw_uid == 0 or user.pw_gid == 0:
        raise SandboxUnavailable(
            f"sandbox user '{name}' is privileged (uid or gid 0)", hint=ADD_USER_HINT
        )
    return user


def farm_pythonpath() -> str:
    """The directory that holds the `farm` package (what PYTHONPATH needs inside the sandbox)."""
    return str(Path(farm.__file__).resolve().parent.parent)


def base_env() -> dict[str, str]:
    """The environment every sandboxed program starts from; the caller's `env` is laid over it."""
    bindir = str(Path(sys.executable).parent)
    return {
        "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp/home",
        "TMPDIR": "/tmp",
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "LANG": "C.UTF-8",
        "PYTHONPATH": farm_pythonpath(),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "TRITON_CACHE_DIR": "/tmp/triton-cache",
        "TORCHINDUCTOR_CACHE_DIR": "/tmp/inductor-cache",
    }


class BwrapRunner(Runner):
    name = "bwrap"

    def __init__(self) -> None:
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise RunnerAbsent(
                "bubblewrap (bwrap) is not installed", hint="apt-get install bubblewrap"
            )
        self.bwrap = bwrap
        self.user = sandbox_user()
        self.prlimit = prlimit_path()
        self.setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
        if self.user is not None and not Path(self.setpriv).exists():
            raise SandboxUnavailable("setpriv (util-linux) is missing", hint="install util-linux")
        _probe(tuple(self.command(["/usr/bin/true"], limits=Limits(), mounts=_system_args())))

    def spawn(
        self,
        argv: list[str],
        *,
        workdir: Path,
        env: dict[str, str],
        limits: Limits,
        device: DeviceAssignment | None = None,
        ro_binds: Sequence[Path] = (),
    ) -> SandboxProcess:
        workdir = Path(workdir).resolve()
        self._give_workdir(workdir)
        unmount = capped_workdir(
            workdir,
            limits,
            uid=self.user.pw_uid if self.user else None,
            gid=self.user.pw_gid if self.user else None,
        )
        mounts = mount_args(workdir=workdir, device=device, ro_binds=ro_binds, limits=limits)
        settings = [*_env_args({**base_env(), **env}), "--chdir", str(workdir)]
        try:
            popen = start_piped(
                self.command(argv, limits=limits, mounts=mounts + settings, device=device),
                env={},
            )
        except BaseException:
            if unmount:
                unmount()
            raise
        return SandboxProcess(popen, limits, signal_from_status=True, cleanup=unmount)

    def command(
        self,
        argv: list[str],
        *,
        limits: Limits,
        mounts: list[str],
        device: DeviceAssignment | None = None,
    ) -> list[str]:
        """prlimit <rlimits> bwrap <namespaces> <mounts> -- [setpriv <drop>] argv."""
        command = [
            self.prlimit,
            *rlimit_args(limits, address_space=device is None),
            "--",
            self.bwrap,
        ]
        if self.user is None:
            command += ["--unshare-all", "--cap-drop", "ALL"]
        else:
            command += _ROOT_NAMESPACES
        command += ["--die-with-parent", "--new-session", "--clearenv", *mounts, "--"]
        if self.user is not None:
            command += [
                self.setpriv,
                f"--reuid={self.user.pw_uid}",
                f"--regid={self.user.pw_gid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
                "--",
            ]
        return command + list(argv)

    def _give_workdir(self, workdir: Path) -> None:
        """Make the work dir (the directory itself, not its contents) the sandbox user's."""
        if not workdir.is_dir():
            raise FileNotFoundError(f"work dir {workdir} does not exist")
        if self.user is not None:
            os.chown(workdir, self.user.pw_uid, self.user.pw_gid)
            os.chmod(workdir, 0o700)


def mount_args(
    *, workdir: Path, device: DeviceAssignment | None, ro_binds: Sequence[Path], limits: Limits
) -> list[str]:
    """The bwrap filesystem arguments, in mount order (later mounts sit on top)."""
    args = _system_args()
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/dev/shm"]
    args += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    args += ["--perms", "0777", "--dir", "/tmp/home"]
    vendor = device.vendor if device is not None else None
    read_only = [*python_paths(vendor), *(Path(p).resolve() for p in ro_binds)]
    args += _parent_dirs([*read_only, workdir])
    for path in read_only:
        args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", str(workdir), str(workdir)]
    if device is not None:
        # GPU drivers read the PCI topology under /sys; read-only.
        args += ["--ro-bind", "/sys", "/sys"]
        for node in device.device_nodes():
            if node.exists():
                args += ["--dev-bind", str(node), str(node)]
    return args


def _parent_dirs(paths: list[Path]) -> list[str]:
    """Create the ancestors of bind targets world-searchable (0755); bwrap would otherwise make
    them 0700 root, which the unprivileged program cannot traverse."""
    parents = sorted(
        {a for p in paths for a in p.parents if a != Path("/")}, key=lambda a: len(a.parts)
    )
    args: list[str] = []
    for parent in parents:
        if parent != Path("/tmp") and not parent.is_relative_to("/usr"):
            args += ["--perms", "0755", "--dir", str(parent)]
    return args


def _system_args() -> list[str]:
    root = host_root()
    args = ["--perms", "0755", "--dir", "/etc"]
    for path in root.binds:
        args += ["--ro-bind", str(path), str(path)]
    for link, target in root.symlinks.items():
        args += ["--symlink", target, link]
    for path in root.etc_files:
        args += ["--ro-bind", str(path), str(path)]
    return args


def _env_args(env: dict[str, str]) -> list[str]:
    args = []
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args


@functools.cache
def _probe(command: tuple[str, ...]) -> None:
    """Start `true` in a minimal sandbox once per configuration; raise if bwrap cannot
    (no user namespaces, a seccomp or AppArmor profile in the way, ...)."""
    done = subprocess.run(list(command), env={}, capture_output=True, timeout=30, check=False)
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip()
        raise SandboxUnavailable(
            f"bubblewrap cannot create a sandbox here: {detail or done.returncode}",
            hint="as non-root, bwrap needs unprivileged user namespaces; as root, the sandbox user",
        )
