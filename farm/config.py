"""Typed readers of the environment, shared by every process of the farm (the server's settings
adapt them in leaderboard/env.py, the agent's in agents/config.py), the farm's one home, and the
node's settings (`NodeSettings`: sandbox, docker, toolchain, suites; docs/agents.md has the table).

A value that cannot be used raises the caller's error type (EnvError unless the reader was made
with another) naming the variable and what it must be, so a misconfigured process stops at
start-up. Unset and blank values mean the default.

Nothing else in farm/ or agents/ reads os.environ: code asks `node_settings()` (read once per
process, at its first call) or is handed the object. What prepares a child's environment starts
from `child_env()`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from farm.errors import FarmError

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class EnvError(FarmError):
    """An environment variable holds a value that cannot be used."""


def farm_home() -> Path:
    """The farm's own data on this machine (suites, baselines, an agent's token and state):
    FARM_HOME, default ~/.local/share/farm."""
    home = os.environ.get("FARM_HOME", "").strip()
    return Path(home or Path.home() / ".local" / "share" / "farm").expanduser()


class Env:
    """Reads variables of `environ` (default os.environ, read at each call); a bad value raises
    `error(message)`."""

    def __init__(
        self,
        error: Callable[[str], Exception] = EnvError,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.error = error
        self.environ = environ

    def raw(self, name: str) -> str | None:
        """The value, stripped; None when unset or blank."""
        value = (os.environ if self.environ is None else self.environ).get(name)
        value = None if value is None else value.strip()
        return value or None

    def text(self, name: str, default: str = "") -> str:
        return self.raw(name) or default

    def choice(self, name: str, default: str, choices: tuple[str, ...]) -> str:
        value = (self.raw(name) or default).lower()
        if value not in choices:
            raise self.error(f"{name}={value!r}: must be one of {', '.join(choices)}")
        return value

    def flag(self, name: str, default: bool) -> bool:
        raw = (os.environ if self.environ is None else self.environ).get(name)
        if raw is None:
            return default
        value = raw.strip().lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise self.error(f"{name}={raw!r}: must be one of 1/0, true/false, yes/no, on/off")

    def integer(self, name: str, default: int, *, minimum: int | None = None) -> int:
        raw = self.raw(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise self.error(f"{name}={raw!r}: must be an integer") from None
        if minimum is not None and value < minimum:
            raise self.error(f"{name}={raw!r}: must be >= {minimum}")
        return value

    def number(self, name: str, default: float, *, minimum: float | None = None) -> float:
        raw = self.raw(name)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise self.error(f"{name}={raw!r}: must be a number") from None
        if minimum is not None and value < minimum:
            raise self.error(f"{name}={raw!r}: must be >= {minimum}")
        return value

    def items(self, name: str, default: list[str]) -> list[str]:
        """A comma-separated list; blanks are dropped. Set but blank: the empty list."""
        raw = (os.environ if self.environ is None else self.environ).get(name)
        if raw is None:
            return default
        return [item.strip() for item in raw.split(",") if item.strip()]

    def secret(self, name: str, default: str | None = None) -> str | None:
        """NAME, or the contents of the file named by NAME_FILE (docker/k8s secrets); setting
        both is refused (which one was meant?)."""
        value, path = self.raw(name), self.raw(f"{name}_FILE")
        if value is not None and path is not None:
            raise self.error(f"{name} and {name}_FILE are both set: keep one")
        if path is None:
            return value if value is not None else default
        try:
            return Path(path).read_text().strip()
        except OSError as exc:
            raise self.error(f"{name}_FILE={path!r}: cannot read it ({exc.strerror})") from None


SANDBOXES = ("auto", "docker", "bwrap", "process")  # farm.sandbox.registry's runners
SANDBOX_IMAGE_PREFIX = "FARM_SANDBOX_IMAGE_"  # + a device kind's image, upper case (CPU, CUDA)
REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class NodeSettings:
    """What the farm's processes on a node read from the environment: one variable per field
    (docs/agents.md, "Node settings"). Build it with `from_env`; ask `node_settings()`."""

    sandbox: str = "auto"  # FARM_SANDBOX: the runner `get_runner("auto")` takes
    allow_unsandboxed: bool = False  # FARM_ALLOW_UNSANDBOXED=1 (only "1") lets `process` run
    sandbox_user: str = "farm-sandbox"  # FARM_SANDBOX_USER: the account bwrap drops to as root
    sandbox_images: Mapping[str, str] = field(default_factory=dict)  # image -> FARM_SANDBOX_IMAGE_*
    sandbox_runtime: str | None = None  # FARM_SANDBOX_RUNTIME: docker runtime (runsc), CPU only
    docker_host: str | None = None  # DOCKER_HOST: the engine; None: the default socket
    c_compiler: str | None = None  # CC: Triton's launcher compiler; None: gcc, else clang
    library_path: tuple[Path, ...] = ()  # LD_LIBRARY_PATH: bound into the sandbox as well
    suites_path: tuple[Path, ...] = ()  # FARM_SUITES_PATH: more directories holding suites
    var_dir: Path = REPO_ROOT / "var"  # FARM_VAR_DIR: the local farm's state (`farm up`)
    tmpdir: Path | None = None  # TMPDIR: a sandboxed worker's scratch directory (it makes it)
    # the harness's own knobs (docs/agents.md, "Node settings")
    baseline_cache: bool = True  # FARM_BASELINE_CACHE: reuse a node's measured baselines
    baseline_cache_ttl_s: float = 86400.0  # FARM_BASELINE_CACHE_TTL_S: measure again after
    output_transport: str = "auto"  # FARM_OUTPUT_TRANSPORT: "pipe" turns device hand-off off
    cooldown_margin_c: float = 6.0  # FARM_COOLDOWN_MARGIN_C: thermal gate's margin
    cooldown_max_s: float = 8.0  # FARM_COOLDOWN_MAX_S: its longest wait (0: off)
    omp_num_threads: str = "1"  # OMP_NUM_THREADS: a sandboxed worker's CPU threads

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> NodeSettings:
        """The settings of `environ` (default os.environ). Raises EnvError naming a bad value."""
        env = Env(environ=environ)
        allow = env.raw("FARM_ALLOW_UNSANDBOXED")
        return cls(
            sandbox=env.choice("FARM_SANDBOX", "auto", SANDBOXES),
            allow_unsandboxed=allow == "1",  # a deliberate "1", nothing that reads like yes
            sandbox_user=env.text("FARM_SANDBOX_USER", "farm-sandbox"),
            sandbox_images=_sandbox_images(environ),
            sandbox_runtime=env.raw("FARM_SANDBOX_RUNTIME"),
            docker_host=env.raw("DOCKER_HOST"),
            c_compiler=env.raw("CC"),
            library_path=_paths(env.text("LD_LIBRARY_PATH"), ":"),
            suites_path=_paths(env.text("FARM_SUITES_PATH"), os.pathsep),
            var_dir=Path(env.text("FARM_VAR_DIR", str(REPO_ROOT / "var"))).resolve(),
            tmpdir=_path_or_none(env.raw("TMPDIR")),
            baseline_cache=env.flag("FARM_BASELINE_CACHE", True),
            baseline_cache_ttl_s=env.number("FARM_BASELINE_CACHE_TTL_S", 86400.0, minimum=0.0),
            output_transport=env.choice("FARM_OUTPUT_TRANSPORT", "auto", ("auto", "pipe")),
            cooldown_margin_c=env.number("FARM_COOLDOWN_MARGIN_C", 6.0, minimum=0.0),
            cooldown_max_s=env.number("FARM_COOLDOWN_MAX_S", 8.0, minimum=0.0),
            omp_num_threads=env.text("OMP_NUM_THREADS", "1"),
        )


def _sandbox_images(environ: Mapping[str, str] | None) -> dict[str, str]:
    """FARM_SANDBOX_IMAGE_<IMAGE> -> {"<image>": name}, for every image named (blank: none)."""
    env = os.environ if environ is None else environ
    return {
        name[len(SANDBOX_IMAGE_PREFIX) :].lower(): value.strip()
        for name, value in env.items()
        if name.startswith(SANDBOX_IMAGE_PREFIX) and value.strip()
    }


def _paths(value: str, separator: str) -> tuple[Path, ...]:
    return tuple(Path(p) for p in value.split(separator) if p)


def _path_or_none(value: str | None) -> Path | None:
    return Path(value) if value else None


# The variables NodeSettings reads (with every FARM_SANDBOX_IMAGE_*): the parsed object is kept
# while they hold the values it was read from.
NODE_VARIABLES = (
    "FARM_SANDBOX",
    "FARM_ALLOW_UNSANDBOXED",
    "FARM_SANDBOX_USER",
    "FARM_SANDBOX_RUNTIME",
    "DOCKER_HOST",
    "CC",
    "LD_LIBRARY_PATH",
    "FARM_SUITES_PATH",
    "FARM_VAR_DIR",
    "TMPDIR",
    "FARM_BASELINE_CACHE",
    "FARM_BASELINE_CACHE_TTL_S",
    "FARM_OUTPUT_TRANSPORT",
    "FARM_COOLDOWN_MARGIN_C",
    "FARM_COOLDOWN_MAX_S",
    "OMP_NUM_THREADS",
)
_node_settings: tuple[tuple[str | None, ...], NodeSettings] | None = None


def _node_key() -> tuple[str | None, ...]:
    images = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith(SANDBOX_IMAGE_PREFIX))
    return (*(os.environ.get(name) for name in NODE_VARIABLES), *images)


def node_settings() -> NodeSettings:
    """This process's node settings, parsed from the environment at the first call (start-up)
    and kept while the variables they were read from are unchanged: a process that changes its
    environment on purpose (`farm agent`'s options, a test) gets them read again, never a stale
    object. Raises EnvError naming a bad value."""
    key = _node_key()
    if _node_settings is None or _node_settings[0] != key:
        return node_settings_load()
    return _node_settings[1]


def node_settings_load() -> NodeSettings:
    """Read the node settings from the environment now and keep them for `node_settings()`."""
    global _node_settings
    _node_settings = None  # a bad value must not leave the old object in force
    key = _node_key()
    settings = NodeSettings.from_env()
    _node_settings = (key, settings)
    return settings


def node_settings_forget() -> None:
    """Drop the settings read so far; the next `node_settings()` reads the environment again."""
    global _node_settings
    _node_settings = None


def take_secret(name: str) -> str | None:
    """NAME's value, removed from this process's environment so that no child inherits it
    (the leaderboard's secret seed); None when unset or blank."""
    value = os.environ.pop(name, "").strip()
    return value or None


def child_env(overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a child process: this process's own, with `overrides` laid over it."""
    return {**os.environ, **(overrides or {})}
