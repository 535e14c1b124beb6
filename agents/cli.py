"""`farm agent`: run a node agent that takes jobs for this machine's devices.

Configuration comes from the environment (FARM_URL, FARM_NODE_TOKEN or FARM_NODE_ENROLL_TOKEN,
CELERY_BROKER_URL, FARM_SANDBOX, FARM_HOME, ...; see docs/agents.md); the options below
override a few of them for one run.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--server", help="server URL (FARM_URL)")
    p.add_argument("--name", help="node name (FARM_NODE_NAME, default the host name)")
    p.add_argument("--devices", help="serve only these classes or devices (FARM_AGENT_DEVICES)")
    p.add_argument("--npu-sim-slots", type=int, help="slots for npu-sim (FARM_NPU_SIM_SLOTS)")
    p.add_argument("--sandbox", help="auto | docker | bwrap | process (FARM_SANDBOX)")
    p.add_argument("--metrics-port", type=int, help="Prometheus port, 0 = off")
    p.add_argument(
        "--list-devices",
        action="store_true",
        help="print the devices and the slots the agent would run, then exit",
    )
    p.add_argument("--log-level", help="debug | info | warning | error (FARM_AGENT_LOG_LEVEL)")


_ENV_OF_OPTION = {
    "server": "FARM_URL",
    "name": "FARM_NODE_NAME",
    "devices": "FARM_AGENT_DEVICES",
    "npu_sim_slots": "FARM_NPU_SIM_SLOTS",
    "sandbox": "FARM_SANDBOX",
    "metrics_port": "FARM_AGENT_METRICS_PORT",
    "log_level": "FARM_AGENT_LOG_LEVEL",
}


def run(args: argparse.Namespace) -> int:
    from agents.config import load_config
    from agents.errors import AgentError

    for option, variable in _ENV_OF_OPTION.items():
        value = getattr(args, option, None)
        if value is not None:
            os.environ[variable] = str(value)  # slots read the same settings
    try:
        cfg = load_config()
        logging.basicConfig(
            level=cfg.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        if args.list_devices:
            return _list_devices(cfg)
        from agents.daemon import Agent

        return Agent(cfg).run()
    except AgentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _list_devices(cfg) -> int:
    from agents.devices import plan_slots
    from farm.hardware.detect import discover

    found = discover()
    slots = plan_slots(found, npu_sim_slots=cfg.npu_sim_slots, only=cfg.device_filter)
    print(
        json.dumps(
            {"devices": [d.to_dict() for d in found], "slots": [s.describe() for s in slots]},
            indent=1,
        )
    )
    return 0
