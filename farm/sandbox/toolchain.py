"""What a legitimate kernel needs at run time on this node, found on the node itself.

A Triton kernel builds its launcher with the C compiler Triton would call; a `load_inline`
extension needs that compiler, ninja and the CUDA (or ROCm) toolkit; both load the driver's
libraries. Nodes keep these in different places (a GPU image may have gcc under /opt/gcc, the
toolkit under /usr/local/cuda-13.0, the driver under /usr/local/nvidia), so nothing here is a
fixed path: each piece is found the way its user finds it, from this process's environment.
- the C compiler: Triton's own rule (`CC`, else gcc, else clang on PATH), then the compiler's
  own search directories (`-print-search-dirs`) and its assembler and linker;
- the toolkit: torch's `CUDA_HOME` / `ROCM_HOME` (which read the environment, then nvcc/hipcc
  on PATH, then the standard location);
- the driver's libraries: where the dynamic loader's cache (`ldconfig -p`) puts libcuda /
  libamdhip64, and the directories of LD_LIBRARY_PATH;
- ninja: on PATH.
`node_toolchain()` returns the host directories to expose read-only (runners bind them at the
same path), the PATH to use inside the sandbox, and the variables that point each tool at what
was found (CC, CXX, CUDA_HOME, TRITON_LIBCUDA_PATH), so nothing inside depends on a search.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from farm.config import node_settings
from farm.hardware import kinds

_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
_TOP_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives")


@dataclass(frozen=True)
class HostRoot:
    """The host's system tree as a sandbox sees it: /usr and the real top-level library and
    program directories bound read-only, the top-level symlinks (merged-/usr systems) recreated,
    and the dynamic loader's files of /etc (nothing else of /etc: no accounts, no secrets)."""

    binds: tuple[Path, ...]
    symlinks: dict[str, str]  # "/bin" -> "usr/bin"
    etc_files: tuple[Path, ...]


def host_root() -> HostRoot:
    binds, symlinks = [Path("/usr")], {}
    for top in _TOP_DIRS:
        host = Path("/") / top
        if host.is_symlink():
            symlinks[str(host)] = os.readlink(host)
        elif host.is_dir():
            binds.append(host)
    etc = tuple(Path("/etc") / n for n in _ETC_FILES if (Path("/etc") / n).exists())
    return HostRoot(binds=tuple(binds), symlinks=symlinks, etc_files=etc)


@dataclass(frozen=True)
class Toolchain:
    """read_only: host directories a sandbox needs beside the system's (outermost only).
    path: PATH inside the sandbox. env: variables naming the tools found."""

    read_only: tuple[Path, ...] = ()
    path: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    found: dict[str, str] = field(default_factory=dict)  # what each piece resolved to (docs)

    def path_value(self) -> str:
        return ":".join(self.path)


@functools.cache
def node_toolchain(gpu_vendor: str | None) -> Toolchain:
    """The toolchain of this node for sandboxes of `gpu_vendor` (a GPU kind's vendor, or None)."""
    dirs: list[Path] = [*_python_dirs()]
    path: list[str] = [str(Path(sys.executable).parent)]
    env: dict[str, str] = {}
    found: dict[str, str] = {}
    cc = c_compiler()
    if cc is not None:
        env["CC"] = str(cc)
        found["cc"] = str(cc)
        cxx = _sibling_cxx(cc)
        if cxx is not None:
            env["CXX"] = str(cxx)
        dirs += [_prefix(cc), *_compiler_dirs(cc)]
        path += [str(cc.parent), *(str(p.parent) for p in _compiler_programs(cc))]
    ninja = shutil.which("ninja")
    if ninja:
        found["ninja"] = ninja
        dirs.append(Path(ninja).resolve().parent)
        path.append(str(Path(ninja).parent))
    if gpu_vendor is not None:
        backend = kinds.gpu_backend(gpu_vendor)
        home = toolkit_home(gpu_vendor)
        if home is not None:
            found["toolkit"] = str(home)
            env[backend.TOOLKIT_ENV] = str(home)
            dirs.append(home.resolve())
            path.append(str(home / "bin"))
        libs = driver_library_dirs(gpu_vendor)
        dirs += libs
        if libs:
            found["driver_libraries"] = ":".join(map(str, libs))
        if libs and backend.DRIVER_LIBRARY_ENV:
            env[backend.DRIVER_LIBRARY_ENV] = str(libs[0])
    dirs += node_settings().library_path
    path += ["/usr/local/bin", "/usr/bin", "/bin"]
    return Toolchain(tuple(outermost(dirs)), tuple(dict.fromkeys(path)), env, found)


def c_compiler() -> Path | None:
    """The C compiler Triton would call to build its launcher: CC, else gcc, else clang."""
    named = node_settings().c_compiler or shutil.which("gcc") or shutil.which("clang")
    if not named:
        return None
    resolved = shutil.which(named)
    return Path(resolved) if resolved else None


def toolkit_home(vendor: str) -> Path | None:
    """The CUDA or ROCm toolkit as torch's extension builder finds it."""
    try:
        from torch.utils import cpp_extension
    except ImportError:
        return None
    home = getattr(cpp_extension, kinds.gpu_backend(vendor).TOOLKIT_ATTR)
    return Path(home) if home and Path(home).is_dir() else None


def driver_library_dirs(vendor: str) -> list[Path]:
    """Directories holding the GPU driver's user-space library, from the loader's cache."""
    name = kinds.gpu_backend(vendor).DRIVER_LIBRARY
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    try:
        listing = subprocess.run(
            [ldconfig, "-p"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    hits = [line.split("=>")[-1].strip() for line in listing.splitlines() if name in line]
    return list(dict.fromkeys(Path(h).parent for h in hits if Path(h).exists()))


def python_paths(vendor: str | None = None) -> list[Path]:
    """Host paths a sandboxed program needs besides the system's (what every runner that uses
    the node's own software binds read-only): the Python installation and its site-packages,
    the farm package, and this node's toolchain for `vendor`. Only the `farm` package directory
    is exposed, not the repository around it."""
    import farm

    farm_dir = Path(farm.__file__).resolve().parent
    return outermost([*node_toolchain(vendor).read_only, farm_dir])


def outermost(paths: Iterable[Path]) -> list[Path]:
    """Existing directories not under the system directories or under one another."""
    kept: list[Path] = []
    candidates = {Path(p).resolve() for p in paths if Path(p).is_dir()}
    for p in sorted(candidates, key=lambda p: (len(p.parts), str(p))):
        if p == Path("/") or any(p.is_relative_to(s) for s in _SYSTEM):
            continue
        if not any(p.is_relative_to(k) for k in kept):
            kept.append(p)
    return kept


def _python_dirs() -> list[Path]:
    """The interpreter's prefixes, site-packages and headers (Triton's launcher includes
    Python.h)."""
    paths = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        str(Path(sys.executable).resolve().parent),
    }
    paths.update(p for p in sys.path if "site-packages" in p or "dist-packages" in p)
    paths.update(sysconfig.get_paths()[k] for k in ("include", "platinclude"))
    return [Path(p) for p in paths if p]


def _prefix(cc: Path) -> Path:
    """The installation a compiler belongs to: /opt/gcc for /opt/gcc/bin/gcc."""
    real = cc.resolve()
    return real.parent.parent if real.parent.name == "bin" else real.parent


def _compiler_dirs(cc: Path) -> list[Path]:
    """Every directory the compiler searches for programs and libraries (gcc and clang both
    answer -print-search-dirs)."""
    out = _ask(cc, "-print-search-dirs")
    dirs: list[Path] = []
    for line in out.splitlines():
        _, _, value = line.partition(": ")
        for part in value.lstrip("=").split(":"):
            if part.strip():
                dirs.append(Path(part.strip()))
    return dirs


def _compiler_programs(cc: Path) -> list[Path]:
    """The assembler and linker the compiler runs."""
    found = []
    for prog in ("as", "ld"):
        named = _ask(cc, f"-print-prog-name={prog}").strip()
        resolved = shutil.which(named) if named else None
        if resolved:
            found.append(Path(resolved))
    return found


def _sibling_cxx(cc: Path) -> Path | None:
    for a, b in (("gcc", "g++"), ("clang", "clang++"), ("cc", "c++")):
        if cc.name.endswith(a):
            candidate = cc.with_name(cc.name[: -len(a)] + b)
            if candidate.exists():
                return candidate
    return None


def _ask(cc: Path, flag: str) -> str:
    try:
        done = subprocess.run(
            [str(cc), flag], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout
