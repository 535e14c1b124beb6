"""The agent's configuration, read from the environment in one place (with the farm's typed
readers, farm.config.Env).

Every variable is documented in docs/agents.md. A value that cannot be used stops the agent at
start-up with a ConfigError naming the variable. Unset means the embedded default, the same as
the server's where both need one (farm.queues: the local SQLAlchemy broker under var/, the time
limits by mode) and the server on 127.0.0.1:8000, so a local farm works with no broker server.

The node's farm settings (sandbox, docker, toolchain) are farm.config.NodeSettings, read again
by `load_config` since `farm agent`'s options may have changed them; what the agent hands a
slot process is `SlotSettings`.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.errors import ConfigError
from farm.config import Env, EnvError, farm_home, node_settings, node_settings_load
from farm.queues import TIME_LIMITS_S, local_broker_url

REPO_ROOT = Path(__file__).resolve().parent.parent
_env = Env(ConfigError)
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
METRICS_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"  # prometheus-client's own variable


def env_str(name: str, default: str = "") -> str:
    return _env.text(name, default)


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    return _env.integer(name, default, minimum=minimum)


def env_float(name: str, default: float, *, minimum: float = 0.0) -> float:
    return _env.number(name, default, minimum=minimum)


def env_secret(name: str) -> str:
    """NAME, else the contents of the file named by NAME_FILE, else ''."""
    return _env.secret(name) or ""


def default_broker_url() -> str:
    """The server's embedded default broker (farm.queues.local_broker_url) under FARM_VAR_DIR,
    default the repository's var/ as the server's."""
    return local_broker_url(node_settings().var_dir)


def default_home() -> Path:
    """The farm's home on this machine (farm.config.farm_home), resolved."""
    return farm_home().resolve()


@dataclass
class AgentConfig:
    """What one agent process needs. Times in seconds."""

    server_url: str = "http://127.0.0.1:8000"
    node_token: str = ""
    enroll_token: str = ""
    node_name: str = field(default_factory=socket.gethostname)
    home: Path = field(default_factory=default_home)
    broker_url: str = field(default_factory=default_broker_url)
    sandbox: str = "auto"
    npu_sim_slots: int = 1
    device_filter: str = ""  # comma-separated classes or devices to serve; "" = all found
    metrics_port: int = 9109  # 0 = no metrics endpoint
    http_timeout_s: float = 30.0
    http_attempts: int = 5
    http_backoff_s: float = 0.5
    heartbeat_s: float | None = None  # None: what the server asks for
    workloads: list[str] | None = None  # evaluate only these workload ids (development)
    selftest_s: float = 900.0  # self-test again after this long (while no slot is busy)
    selftest_timeout_s: float = 300.0
    min_free_mb: int = 1024  # free space under FARM_HOME below which the node is unhealthy
    log_level: str = "INFO"
    warm_pool: bool = True  # slots keep harness workers started (farm.harness.pool)
    journal: Path | None = None  # append each job's outcome here (JSON lines)

    @property
    def token_file(self) -> Path:
        return self.home / "node-token"

    @property
    def state_dir(self) -> Path:
        return self.home / "state"

    @property
    def suite_dir(self) -> Path:
        return self.home / "suites"


def load_config() -> AgentConfig:
    """The configuration from the environment (raises ConfigError naming a bad variable)."""
    try:
        node = node_settings_load()
    except EnvError as exc:
        raise ConfigError(str(exc)) from None
    workloads = [w for w in env_str("FARM_AGENT_WORKLOADS").split(",") if w.strip()]
    heartbeat = env_float("FARM_AGENT_HEARTBEAT_S", 0.0)
    cfg = AgentConfig(
        server_url=env_str("FARM_URL", "http://127.0.0.1:8000").rstrip("/"),
        node_token=env_secret("FARM_NODE_TOKEN"),
        enroll_token=env_secret("FARM_NODE_ENROLL_TOKEN"),
        node_name=env_str("FARM_NODE_NAME", socket.gethostname()),
        home=default_home(),
        broker_url=env_str("CELERY_BROKER_URL", default_broker_url()),
        sandbox=node.sandbox,
        npu_sim_slots=env_int("FARM_NPU_SIM_SLOTS", 1),
        device_filter=env_str("FARM_AGENT_DEVICES"),
        metrics_port=env_int("FARM_AGENT_METRICS_PORT", 9109),
        http_timeout_s=env_float("FARM_AGENT_HTTP_TIMEOUT_S", 30.0, minimum=0.1),
        http_attempts=env_int("FARM_AGENT_HTTP_ATTEMPTS", 5, minimum=1),
        http_backoff_s=env_float("FARM_AGENT_HTTP_BACKOFF_S", 0.5),
        heartbeat_s=heartbeat or None,
        workloads=[w.strip() for w in workloads] or None,
        selftest_s=env_float("FARM_AGENT_SELFTEST_S", 900.0, minimum=1.0),
        selftest_timeout_s=env_float("FARM_AGENT_SELFTEST_TIMEOUT_S", 300.0, minimum=1.0),
        min_free_mb=env_int("FARM_AGENT_MIN_FREE_MB", 1024),
        log_level=_env.choice("FARM_AGENT_LOG_LEVEL", "info", LOG_LEVELS).upper(),
        warm_pool=_env.flag("FARM_AGENT_WARM_POOL", True),
        journal=_path_or_none(env_str("FARM_AGENT_JOURNAL")),
    )
    if not cfg.server_url.startswith(("http://", "https://")):
        raise ConfigError(f"FARM_URL={cfg.server_url!r}: must start with http:// or https://")
    return cfg


def _path_or_none(value: str) -> Path | None:
    return Path(value) if value else None


@dataclass(frozen=True)
class SlotSettings:
    """What the agent hands a slot process (agents.slots) besides its own configuration."""

    slot: dict[str, Any]  # FARM_AGENT_SLOT_JSON: the fields of agents.devices.Slot
    node_id: int | None  # FARM_NODE_ID: the node's id once the server registered it


def load_slot_settings() -> SlotSettings:
    """The slot process's settings; raises ConfigError when the agent did not set them."""
    raw = _env.raw("FARM_AGENT_SLOT_JSON")
    if raw is None:
        raise ConfigError(
            "FARM_AGENT_SLOT_JSON is not set: a slot process is started by the agent (farm agent)"
        )
    try:
        slot = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"FARM_AGENT_SLOT_JSON: not JSON ({exc})") from None
    if not isinstance(slot, dict):
        raise ConfigError("FARM_AGENT_SLOT_JSON: must be a JSON object (a slot's fields)")
    node_id = _env.integer("FARM_NODE_ID", 0, minimum=1)
    return SlotSettings(slot=slot, node_id=node_id or None)


def metrics_dir() -> Path | None:
    """Where this agent's processes write their Prometheus files (multiprocess mode), None when
    off. The agent's main process sets it after start-up (`metrics_dir_set`), so it is read here
    when asked; its slots inherit it."""
    raw = _env.raw(METRICS_DIR_ENV)
    return Path(raw) if raw else None


def metrics_dir_set(directory: Path) -> None:
    """Turn on multiprocess metrics in `directory` for this process and the slots it starts
    (before prometheus_client is imported: it reads the variable then)."""
    os.environ[METRICS_DIR_ENV] = str(directory)


def time_limits(mode: str, given: dict | None) -> tuple[float, float]:
    """(soft, hard) seconds for one evaluation: the job's, else the defaults for its mode."""
    defaults = TIME_LIMITS_S.get(mode, TIME_LIMITS_S["benchmark"])
    soft, hard = float(defaults[0]), float(defaults[1])
    if given:
        soft = float(given.get("soft_s") or soft)
        hard = float(given.get("hard_s") or hard)
    return soft, max(hard, soft)
