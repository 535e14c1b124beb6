"""What a sandboxed process may use (`Limits`) and which accelerator it may see
(`DeviceAssignment`).

Both are plain data: every runner turns them into its own mechanism (rlimits, cgroup limits of
a container, bind-mounted device nodes, NVIDIA device requests).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from farm.hardware import kinds

GiB = 1 << 30
MiB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed process tree.

    memory_bytes: address space (rlimit) or cgroup memory (containers), bytes. Runners do not
        apply it as RLIMIT_AS when a GPU is assigned (the CUDA and ROCm runtimes reserve far more
        virtual address space than they use); containers still enforce it through the cgroup.
    pids: processes + threads of the sandbox user (RLIMIT_NPROC) or of the container (cgroup).
    cpu_seconds: CPU time of each process (RLIMIT_CPU); SIGXCPU, then SIGKILL 5 s later.
    wall_seconds: wall time from spawn to kill, enforced by the runner's watchdog.
    output_bytes: bytes the trusted side reads from stdout before it kills the process. Tensors
        cross stdout for checking, so this is large by default.
    stderr_bytes: the same cap for stderr (logs only).
    file_size_bytes: largest file the process may write (RLIMIT_FSIZE; SIGXFSZ beyond).
    open_files: file descriptors per process (RLIMIT_NOFILE).
    tmp_bytes: size of each private tmpfs (/tmp, /dev/shm). tmpfs pages are host memory that
        no rlimit counts, so they get their own cap.
    workdir_bytes: size of the tmpfs mounted on the work dir (farm.sandbox.workdir): all the
        program may write there (caches of Triton, Inductor and torch extensions included).
    """

    memory_bytes: int = 16 * GiB
    pids: int = 512
    cpu_seconds: int = 1200
    wall_seconds: float = 900.0
    output_bytes: int = 16 * GiB
    stderr_bytes: int = 16 * MiB
    file_size_bytes: int = 1 * GiB
    open_files: int = 4096
    tmp_bytes: int = 4 * GiB
    workdir_bytes: int = 2 * GiB

    def __post_init__(self) -> None:
        for name in ("memory_bytes", "pids", "cpu_seconds", "output_bytes", "stderr_bytes"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} must be positive, got {getattr(self, name)}")
        sizes = (self.file_size_bytes, self.open_files, self.tmp_bytes, self.workdir_bytes)
        if min(self.wall_seconds, *sizes) <= 0:
            raise ValueError(
                "Limits: wall_seconds, file_size_bytes, open_files, tmp_bytes, workdir_bytes "
                "must be positive"
            )


Vendor = str  # a GPU kind's vendor (farm.hardware.kinds): "nvidia", "amd"
# The GPU vendor behind a device kind; None for cpu and npu-sim. Kept under this name for callers.
vendor_of = kinds.gpu_vendor


@dataclass(frozen=True)
class DeviceAssignment:
    """One accelerator given to one sandbox.

    vendor: a GPU kind's vendor ("nvidia", "amd"). index: the host's device index (the N of
    /dev/nvidiaN; for AMD the position among render nodes). uuid: the GPU UUID when known
    (NVIDIA "GPU-…"); runners prefer it to the index. render_node: for AMD, the
    /dev/dri/renderD* of this GPU when it is not renderD(128 + index).
    extra_nodes: further device nodes to expose (rarely needed).
    """

    vendor: Vendor
    index: int
    uuid: str | None = None
    render_node: Path | None = None
    extra_nodes: tuple[Path, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        vendors = [k.vendor for k in kinds.gpu_kinds()]
        if self.vendor not in vendors:
            raise ValueError(
                f"DeviceAssignment.vendor must be one of {vendors}, got {self.vendor!r}"
            )
        if self.index < 0:
            raise ValueError(f"DeviceAssignment.index must be >= 0, got {self.index}")

    def device_nodes(self) -> list[Path]:
        """The device nodes this GPU needs, and only those: the control nodes shared by every GPU
        of the vendor plus this GPU's own node (the vendor's backend names them). Other GPUs'
        nodes are never listed."""
        nodes: list[Path] = kinds.gpu_backend(self.vendor).device_nodes(
            self.index, self.render_node
        )
        return nodes + list(self.extra_nodes)

    def device_id(self) -> str:
        """What the container engine's device request names: the UUID, else the index."""
        return self.uuid or str(self.index)
