"""Open-loop HTTP load and CPU accounting for bench/api_load.py.

`Load` sends one request every 1/rate s from one asyncio thread on kept-alive HTTP/1.1
connections; latency counts from each request's scheduled start, so a saturated server shows as
queueing delay. `cpu_probe` reads the CPU time of the server's processes, the database backends,
this process and the whole machine from /proc.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path


class Load:
    """Open-loop load from one asyncio thread over raw HTTP/1.1 keep-alive connections: one
    request every 1/rate s, each started on time whatever the others are doing (at most
    `connections` in flight; a request waiting for one still counts from its scheduled start).
    Far lighter on the CPU than a thread per request, which matters when the generator shares
    the server's CPUs. A request counts as an error unless it gets a complete 200 response
    within TIMEOUT_S."""

    TIMEOUT_S = 10.0

    def __init__(
        self, port: int, boards: list[str], status: list[tuple[str, str]], connections: int
    ) -> None:
        self.port, self.boards, self.status = port, boards, status
        self.connections = connections
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self.samples: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.reasons: Counter[str] = Counter()

    def request(self, kind: str) -> bytes:
        if kind == "board":
            path, auth = random.choice(self.boards), ""
        else:
            path, token = random.choice(self.status)
            auth = f"Authorization: Bearer {token}\r\n"
        return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n{auth}\r\n".encode()

    async def one(
        self, slots: asyncio.Semaphore, kind: str, scheduled: float, record: bool
    ) -> None:
        async with slots:
            try:
                error = await asyncio.wait_for(self.exchange(self.request(kind)), self.TIMEOUT_S)
            except TimeoutError:
                error = f"no response in {self.TIMEOUT_S:.0f} s"
            except (OSError, asyncio.IncompleteReadError, KeyError, ValueError) as exc:
                error = type(exc).__name__
        if record:
            self.samples[kind].append((time.perf_counter() - scheduled) * 1e3)
            if error:
                self.errors[kind] += 1
                self.reasons[error] += 1

    async def exchange(self, request: bytes) -> str:
        """One request on a kept connection (tried again on a new one if the server closed it
        before answering, as HTTP clients do for a GET) or a new one; '' on a complete 200,
        else the status line."""
        kept = self.kept()
        if kept:
            try:
                return await self.send(*kept, request)
            except (ConnectionError, asyncio.IncompleteReadError) as exc:
                if getattr(exc, "partial", b"") != b"":
                    raise
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        return await self.send(reader, writer, request)

    async def send(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
    ) -> str:
        try:
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            fields = {}
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                fields[name.strip().lower()] = value.strip()
            await reader.readexactly(int(fields[b"content-length"]))
        except BaseException:
            writer.close()
            raise
        if fields.get(b"connection", b"").lower() == b"close":
            writer.close()
        else:
            self.idle.append((reader, writer))
        status = head.split(b"\r\n", 1)[0].decode("latin-1")
        return "" if status.startswith("HTTP/1.1 200 ") else status

    def kept(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """An idle kept-alive connection; those the server closed meanwhile (gunicorn's
        keep-alive time-out) are dropped, as HTTP clients do."""
        while self.idle:
            reader, writer = self.idle.pop()
            if not reader.at_eof() and not writer.is_closing():
                return reader, writer
            writer.close()
        return None

    async def run(self, rate: float, seconds: float, record: bool) -> float:
        """Sends rate x seconds requests, alternating board and status reads, and waits for
        the last; returns how long sending took (s)."""
        slots = asyncio.Semaphore(self.connections)
        interval, start = 1.0 / rate, time.perf_counter()
        tasks = []
        for i in range(int(rate * seconds)):
            scheduled = start + i * interval
            delay = scheduled - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            kind = "board" if i % 2 == 0 else "status"
            tasks.append(asyncio.create_task(self.one(slots, kind, scheduled, record)))
        sent = time.perf_counter() - start
        await asyncio.gather(*tasks)
        return sent

    async def warm_then_measure(
        self, rate: float, warmup: float, duration: float, probe: Callable[[], dict[str, float]]
    ) -> tuple[float, dict[str, float]]:
        """Warm-up, then the measured load; returns how long sending took (s) and what
        `probe` (CPU counters) changed by during the measured part."""
        await self.run(rate, warmup, record=False)
        before = probe()
        sent = await self.run(rate, duration, record=True)
        after = probe()
        return sent, {k: after[k] - before[k] for k in after}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time (s) a process has used, from /proc (Linux); 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def processes() -> list[tuple[int, int, bytes]]:
    """(pid, parent pid, command line) of every process."""
    out = []
    for d in Path("/proc").iterdir():
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            out.append((int(d.name), ppid, (d / "cmdline").read_bytes()))
        except (OSError, ValueError, IndexError):
            continue
    return out


def cpu_probe(server_pid: int, database: str) -> Callable[[], dict[str, float]]:
    """A function reading the CPU seconds used so far by gunicorn (master and workers), by
    the PostgreSQL backends serving `database`, by this process (the load generator), and by
    the whole machine (busy time over all CPUs), with the wall-clock time."""
    tag = f" {database} ".encode()

    def probe() -> dict[str, float]:
        procs = processes()
        workers = [pid for pid, ppid, _ in procs if ppid == server_pid]
        backends = [pid for pid, _, cmd in procs if cmd.startswith(b"postgres: ") and tag in cmd]
        busy = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return {
            "wall": time.monotonic(),
            "gunicorn": sum(cpu_seconds(pid) for pid in [server_pid, *workers]),
            "postgres": sum(cpu_seconds(pid) for pid in backends),
            "generator": time.process_time(),
            "machine": (sum(busy) - busy[3] - busy[4]) / os.sysconf("SC_CLK_TCK"),
        }

    return probe


def pct(values: list[float], q: float) -> float:
    return (
        statistics.quantiles(values, n=1000, method="inclusive")[int(q * 10) - 1]
        if len(values) > 1
        else values[0]
    )
