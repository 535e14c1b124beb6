"""The agent's main process: find devices, get a node token, register, self-test, start one
worker process per slot, then heartbeat and watch the slots (and its own health) until told to
stop.

Health (agents.health): the node takes work only while its checks pass. A token the server
refuses, a failed self-test, a full work disk or a crash-looping slot make it unhealthy: slots
finish their current job and stop, the heartbeat says why (the nodes page and API show it),
the metrics too (`farm_agent_healthy`, `farm_agent_health_problem{code}`), and the checks go
on until they pass again.

Signals: the first SIGTERM (or SIGINT) drains: slots finish their current jobs and exit, the
heartbeat goes on meanwhile, then the agent leaves. A second one cancels: slots are stopped now
and their runs released to the server (a retryable failure, which requeues them).
"""

from __future__ import annotations

import logging
import os
import platform
import shutil
import signal
import threading
from typing import Any

from agents import state
from agents.client import ServerClient
from agents.config import AgentConfig, metrics_dir_set
from agents.devices import Slot, plan_slots
from agents.errors import AgentError, ConfigError, PermanentError
from agents.health import Health, HealthMonitor, Problem
from agents.heartbeat import Heartbeat, release_runs
from agents.slots import SlotSet

log = logging.getLogger(__name__)
CANCEL_WAIT_S = 20.0


class Agent:
    def __init__(self, cfg: AgentConfig, slots: list[Slot] | None = None) -> None:
        self.cfg = cfg
        self.client = ServerClient(
            cfg.server_url,
            cfg.node_token,
            timeout_s=cfg.http_timeout_s,
            attempts=cfg.http_attempts,
            backoff_s=cfg.http_backoff_s,
        )
        self.slots = slots if slots is not None else self._plan()
        self.state_dir = cfg.state_dir / _safe(cfg.node_name)
        self.stop_requests = 0
        self.draining = False
        self.wake = threading.Event()
        self.interval_s = cfg.heartbeat_s or 10.0
        self.monitor = HealthMonitor(
            cfg,
            self.slots,
            self.state_dir,
            every_s=cfg.selftest_s,
            timeout_s=cfg.selftest_timeout_s,
            min_free_bytes=cfg.min_free_mb * 2**20,
        )
        self.health = Health()

    def _plan(self) -> list[Slot]:
        from farm.hardware.detect import discover

        slots = plan_slots(
            discover(), npu_sim_slots=self.cfg.npu_sim_slots, only=self.cfg.device_filter
        )
        if not slots:
            raise ConfigError(
                "no device here maps to a hardware class the agent can serve "
                f"(FARM_AGENT_DEVICES={self.cfg.device_filter!r}); see `farm hardware`"
            )
        return slots

    @property
    def hardware(self) -> list[str]:
        return sorted({s.hardware for s in self.slots})

    # --- start-up ------------------------------------------------------------------------

    def ensure_token(self) -> None:
        """FARM_NODE_TOKEN(_FILE), else the token saved in FARM_HOME, else enrol with the
        operator's secret (FARM_NODE_ENROLL_TOKEN) and save the token (mode 0600)."""
        if self.client.token:
            return
        saved = self.cfg.token_file
        if saved.is_file():
            self.client.token = saved.read_text().strip()
            return
        if not self.cfg.enroll_token:
            raise ConfigError(
                "no node token: set FARM_NODE_TOKEN (or FARM_NODE_TOKEN_FILE), or "
                "FARM_NODE_ENROLL_TOKEN to enrol this node with the operator's secret"
            )
        token = self.client.enroll(
            secret=self.cfg.enroll_token, name=self.cfg.node_name, hardware=self.hardware
        )
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.touch(mode=0o600)
        saved.write_text(token + "\n")
        self.client.token = token
        log.info("enrolled as node %s; token saved in %s", self.cfg.node_name, saved)

    def register(self) -> dict[str, Any]:
        answer = self.client.register(
            hardware=self.hardware,
            devices=[s.describe() for s in self.slots],
            hostname=platform.node(),
        )
        if not self.cfg.heartbeat_s:
            self.interval_s = float(answer.get("heartbeat_interval_s") or self.interval_s)
        log.info(
            "registered: queues %s, heartbeat every %.0f s", answer.get("queues"), self.interval_s
        )
        return dict(answer)

    # --- running -------------------------------------------------------------------------

    def run(self) -> int:
        self._metrics()
        self._signals()
        registration = self.register_until_accepted()
        if registration is None:
            return 0  # stopped before the server accepted the token
        node_id = registration.get("node", {}).get("id")
        state.clear_all(self.state_dir)
        slot_env = {"FARM_NODE_TOKEN": self.client.token, "FARM_NODE_NAME": self.cfg.node_name}
        if node_id is not None:
            slot_env["FARM_NODE_ID"] = str(node_id)
        self.slot_set = SlotSet(self.slots, slot_env)
        self.heartbeat = Heartbeat(
            self.client,
            self.slots,
            self.state_dir,
            work_dir=self.cfg.home / "work",
            health=lambda: self.health.to_json(),
        )
        self.monitor.run_selftest()  # before any slot takes work
        self.check_health()
        if self.health.healthy:
            self.slot_set.start()
        else:
            self.slot_set.paused = True
        return self._loop()

    def register_until_accepted(self) -> dict[str, Any] | None:
        """Token and registration, tried again every heartbeat interval while the server is
        away or refuses the token (unhealthy meanwhile: TOKEN_REFUSED); None when stopped."""
        while self.stop_requests == 0:
            try:
                self.ensure_token()
                answer = self.register()
                self.monitor.note("token", [])
                return answer
            except PermanentError as exc:
                if exc.status not in (401, 403):
                    raise
                self.monitor.note("token", [_token_problem(exc)])
                log.error("the server refuses this node's token: %s", exc)
            except AgentError as exc:
                if isinstance(exc, ConfigError):
                    raise
                log.warning("cannot register yet: %s", exc)
            self._export_health(self.monitor.current())
            self.wake.wait(self.interval_s)
            self.wake.clear()
        return None

    def _loop(self) -> int:
        while (code := self.step()) is None:
            self.wake.wait(self.interval_s if not self.draining else min(self.interval_s, 1.0))
            self.wake.clear()
        return code

    def step(self) -> int | None:
        """One turn of the main loop: the node's health, a heartbeat, then what the signals and
        the server asked for. The agent's exit code once it is done (0 drained, 1 cancelled),
        else None."""
        self.check_health()
        self.heartbeat.process_one()
        if self.stop_requests >= 2:
            return self._cancel()
        if (self.stop_requests == 1 or self.heartbeat.drain_requested) and not self.draining:
            log.info("draining: slots finish their current jobs, then the agent leaves")
            self.slot_set.drain()
            self.draining = True
        if self.draining and not self.slot_set.any_alive():
            log.info("drained; bye")
            return 0
        if not self.draining:
            self._follow_health()
            self.slot_set.process_one()
        return None

    def check_health(self) -> Health:
        """Refresh the node's health (a due self-test starts in the background while no slot
        holds a run: never beside a measurement) and export it."""
        self.monitor.note(
            "slots", [Problem("SLOT_CRASH_LOOP", s) for s in self.slot_set.crash_looping()]
        )
        self.monitor.maybe_start(idle=not state.current_runs(self.state_dir))
        health = self.monitor.current()
        if health != self.health:
            log.log(
                logging.INFO if health.healthy else logging.WARNING,
                "health: %s",
                "ok" if health.healthy else "; ".join(p.detail for p in health.problems),
            )
        self.health = health
        self._export_health(health)
        return health

    def _follow_health(self) -> None:
        """Unhealthy: slots finish their current job and stop; healthy again: they start."""
        if self.health.healthy:
            self.slot_set.resume()
        else:
            self.slot_set.pause()

    def _export_health(self, health: Health) -> None:
        from agents import metrics

        metrics.health_set(health.healthy, {p.code for p in health.problems})

    def _cancel(self) -> int:
        log.warning("cancelling: stopping slots now and releasing their runs")
        self.slot_set.cancel()
        if not self.slot_set.wait(CANCEL_WAIT_S):
            self.slot_set.kill()
            self.slot_set.wait(5.0)
        released = self.release_current()
        log.warning("released runs %s", released)
        return 1

    def release_current(self) -> list[int]:
        """Give back every run a slot was holding (the server requeues them)."""
        released = release_runs(
            self.client,
            self.state_dir,
            state.current_runs(self.state_dir),
            code="AGENT_CANCELLED",
            detail="the node's agent was stopped during the run; run it elsewhere",
            work_dir=self.cfg.home / "work",
        )
        state.clear_all(self.state_dir)
        return released

    def on_stop(self, signum: int = signal.SIGTERM, _frame: Any = None) -> None:
        """SIGTERM/SIGINT: the first drains, the second cancels (see the module docstring)."""
        self.stop_requests += 1
        self.wake.set()

    def _signals(self) -> None:
        signal.signal(signal.SIGTERM, self.on_stop)
        signal.signal(signal.SIGINT, self.on_stop)

    def _metrics(self) -> None:
        root = self.cfg.home / "metrics"
        for old in root.glob("*"):  # those of agents that died before cleaning up
            if old.name.isdigit() and not state.pid_alive(int(old.name)):
                shutil.rmtree(old, ignore_errors=True)
        directory = root / str(os.getpid())
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("*.db"):
            stale.unlink()
        metrics_dir_set(directory)
        if self.cfg.metrics_port:
            from agents import metrics

            try:
                metrics.serve(self.cfg.metrics_port, directory)
            except OSError as exc:
                log.warning("metrics not served on port %d: %s", self.cfg.metrics_port, exc)


def _token_problem(exc: PermanentError) -> Problem:
    return Problem(
        "TOKEN_REFUSED",
        f"the server refuses this node's token ({exc}); install a valid one "
        "(FARM_NODE_TOKEN or FARM_NODE_TOKEN_FILE) or re-enable the node",
    )


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "node"
