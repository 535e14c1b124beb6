"""What `farm up` decides and creates before it starts a process: the agents this machine runs
(device kinds and node names), the environment of the server's processes and of each agent, the
demo user's web password, and the users and nodes with fresh tokens. The last are made by the
server's management commands `user_tokens` and `create_node`, each answering with one JSON
line; this module never imports Django."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from farm.config import child_env, node_settings
from farm.errors import FarmError
from farm.hardware import kinds
from farm.supervise import manage_json

DEMO_USER = "demo"
TOKEN_NAME = "farm-up"
# agents per kind found, of the kinds that have hardware classes (the CPU has none)
DEVICE_KINDS = tuple(k for k in kinds.all_kinds() if k.classes())
# kinds that get a second local node, for the audit of first places: those that need no second
# device for it (the simulated NPU)
AUDITED_KINDS = tuple(k for k in DEVICE_KINDS if not k.gpu)
AUDITED_NAMES = frozenset(k.name for k in AUDITED_KINDS)  # agents and nodes are keyed by name
# The server's default quota (120 runs per user and hardware class an hour) protects a shared
# farm; on one's own machine it would stop an RL loop after two minutes. This one is above what
# the local nodes can evaluate, so the queue, not the quota, sets the pace. FARM_QUOTA_RUNS_PER_HOUR
# in the environment still wins.
LOCAL_QUOTA_RUNS_PER_HOUR = 100_000


def var_dir() -> Path:
    """The whole state of the local farm: FARM_VAR_DIR, default var/ of the checkout."""
    return node_settings().var_dir


def agent_kinds() -> dict[str, str]:
    """Device kind -> hardware class served by this machine's agents: npu-sim always, a GPU
    kind when a GPU of it maps to a hardware class. (One agent per kind; it runs one slot per
    device of that kind.)"""
    from farm.hardware.detect import discover

    names = {k.name for k in DEVICE_KINDS}
    served: dict[str, str] = {}
    for d in discover():
        if d.hardware_class and d.device in names and d.device not in served:
            served[d.device] = d.hardware_class
    for kind in AUDITED_KINDS:  # always present: they need no device
        served.setdefault(kind.name, kind.classes()[0])
    return served


def agent_nodes(agents: dict[str, str]) -> dict[str, str]:
    """Node name -> device kind: two nodes for each kind in AUDITED_KINDS, one for the others."""
    nodes = {}
    for kind in agents:
        nodes[f"local-{kind}"] = kind
        if kind in AUDITED_NAMES:
            nodes[f"local-{kind}-2"] = kind
    return nodes


def server_env(var: Path, agents: dict[str, str]) -> dict[str, str]:
    """The environment of every process: ours, with the var directory, the local quota and (for
    hardware classes served by a single node) no audit, unless the environment says otherwise."""
    env = child_env({"FARM_VAR_DIR": str(var), "PYTHONUNBUFFERED": "1"})
    env.setdefault("FARM_QUOTA_RUNS_PER_HOUR", str(LOCAL_QUOTA_RUNS_PER_HOUR))
    single = sorted(hw for kind, hw in agents.items() if kind not in AUDITED_NAMES)
    if single:
        env.setdefault("FARM_AUDIT_SKIP_HARDWARE", ",".join(single))
    return env


def agent_env(
    env: dict[str, str], *, url: str, name: str, token: str, home: Path, sandbox: str
) -> dict[str, str]:
    """The environment of the agent of node `name`."""
    agent = {
        **env,
        "FARM_URL": url,
        "FARM_NODE_TOKEN": token,
        "FARM_NODE_NAME": name,
        "FARM_HOME": str(home),
        "FARM_SANDBOX": sandbox,
    }
    agent.setdefault("FARM_AGENT_METRICS_PORT", "0")
    agent.setdefault("FARM_NPU_SIM_SLOTS", "1")  # per node; there are two npu-sim nodes
    # the demo scores in seconds: its simulated boards keep to the small workloads
    agent.setdefault("FARM_NPU_SIM_BOARD_SIZES", "small")
    return agent


def demo_password_file(var: Path) -> Path:
    """The demo user's web login, made once and kept (mode 0600) in the var directory."""
    path = var / "demo-password"
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(12) + "\n")
    return path


def issue_tokens(
    env: dict[str, str], *, users: list[str], nodes: dict[str, str], var: Path
) -> dict[str, dict[str, str]]:
    """Users (created once; the demo user with its web password) with one fresh farm-up token
    each, older ones revoked, and the nodes (name -> hardware class; created once) with fresh
    tokens: {"users": {name: key}, "nodes": {name: key}}."""
    password = f"{DEMO_USER}={demo_password_file(var)}"
    made = ["user_tokens", *users, "--token-name", TOKEN_NAME, "--replace"]
    tokens = {"users": _keys(manage_json(*made, "--password-file", password, env=env), "users")}
    tokens["nodes"] = {}
    for hardware in sorted(set(nodes.values())):
        names = [n for n, hw in nodes.items() if hw == hardware]
        made = ["create_node", *names, "--hardware", hardware, "--rotate", "--json"]
        tokens["nodes"].update(_keys(manage_json(*made, env=env), "nodes"))
    return tokens


def _keys(answer: dict[str, object], key: str) -> dict[str, str]:
    keys = answer.get(key)
    if not isinstance(keys, dict) or not all(isinstance(v, str) for v in keys.values()):
        raise FarmError(f"expected {{{key!r}: {{name: token}}}} from manage.py, got {answer!r}")
    return {str(k): v for k, v in keys.items()}
