"""Counting a large launch from a sample of its program instances and loop iterations.

The rule (docs/npu-sim.md, "Real sizes: sampling", gives the error bound):
- a launch of at most FULL_PROGRAMS programs runs in full;
- otherwise its programs fall in classes by their position on each grid axis (first, middle,
  last); SAMPLE_MIDDLE programs of the bulk class and SAMPLE_EDGE of every other class run,
  drawn with the replay's seed (all members of a smaller class);
- while they run, a kernel loop of more than LOOP_FULL iterations runs its first two and its
  last iteration, and counts the skipped ones as copies of the second when the first and second
  counted the same (if that turns out wrong for the launch, its sampled programs run again
  with every iteration);
- a class whose sampled programs left the same record counts as its size times that record;
  otherwise the launch runs in full.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any

from farm.hardware.npu_sim.costmodel import EXACT_SCHEDULE_PROGRAMS, ProgramRecord, Runs

FULL_PROGRAMS = 32  # launches with at most this many programs always run in full
SAMPLE_MIDDLE = 4  # sampled programs of the bulk class
SAMPLE_EDGE = 2  # sampled programs of each class on an edge
LOOP_FULL = 8  # loops of at most this many iterations always run every iteration
VALUE_ITERATIONS = 320  # loop iterations a replay may re-run in full for the output check


class Loops:
    """Loop sampling state: on while the sampled programs of a launch are counted."""

    on = False
    ledger_of: Any = staticmethod(lambda: None)
    executed = 0  # iterations run in the program now running
    skipped = 0  # iterations counted from others


def loop_iterations(r: range) -> Iterator[int]:
    """The iterations of a kernel's `for` loop that run (tritonsrc routes loops here).

    While sampling, a loop of more than LOOP_FULL iterations runs its first two and its last;
    when the first and second moved the same bytes and did the same work, the skipped ones are
    counted as copies of the second and the program's values are no longer exact (its stores
    are not known data); otherwise every iteration runs.
    """
    led = Loops.ledger_of()
    prog = getattr(led, "program", None)
    if not Loops.on or prog is None or len(r) <= LOOP_FULL:
        Loops.executed += len(r)
        yield from r
        return
    s0 = _snap(led)
    yield r[0]
    s1 = _snap(led)
    yield r[1]
    s2 = _snap(led)
    Loops.executed += 2
    d0, d1 = _delta(led, s0, s1), _delta(led, s1, s2)
    if d0 != d1:
        Loops.executed += len(r) - 2
        yield from r[2:]
        return
    n = len(r) - 3
    Loops.executed += 1
    Loops.skipped += n
    _add(led, d1, n)
    led.tainted = True
    yield r[-1]


def _snap(led: Any) -> tuple:
    prog = led.program
    return prog.read, prog.write, len(prog.work), dict(led.prog_writes)


def _delta(led: Any, a: tuple, b: tuple) -> tuple:
    from farm.hardware.npu_sim.costmodel import merge_work

    writes = {k: v - a[3].get(k, 0) for k, v in b[3].items() if v != a[3].get(k, 0)}
    work = merge_work(led.program.work[a[2] : b[2]])
    return b[0] - a[0], b[1] - a[1], work, tuple(sorted(writes.items()))


def _add(led: Any, d: tuple, n: int) -> None:
    read, write, work, writes = d
    prog = led.program
    prog.read += n * read
    prog.write += n * write
    prog.work.extend((u, dt, n * f) for u, dt, f in work)
    for ptr, nbytes in writes:
        led.prog_writes[ptr] = led.prog_writes.get(ptr, 0) + n * nbytes
    led.touch(led.written, [(ptr, n * nbytes) for ptr, nbytes in writes])
    led.add_bytes(n * (read + write))


def _classes(extent: int) -> list[tuple[int, range]]:
    """(class, members) along one axis: first, middle, last."""
    if extent == 1:
        return [(0, range(0, 1))]
    if extent == 2:
        return [(0, range(0, 1)), (2, range(1, 2))]
    return [(0, range(0, 1)), (1, range(1, extent - 1)), (2, range(extent - 1, extent))]


def plan(grid: tuple[int, int, int], rng: random.Random) -> dict[tuple, tuple[int, list[tuple]]]:
    """(class size, sampled programs in grid order) of each class of `grid`."""
    out: dict[tuple, tuple[int, list[tuple]]] = {}
    axes = [_classes(g) for g in grid]
    bulk = tuple(1 if g > 2 else 0 for g in grid)
    for cx, mx in axes[0]:
        for cy, my in axes[1]:
            for cz, mz in axes[2]:
                key = (cx, cy, cz)
                size = len(mx) * len(my) * len(mz)
                k = SAMPLE_MIDDLE if key == bulk else SAMPLE_EDGE
                if size <= k:
                    picks = [(x, y, z) for x in mx for y in my for z in mz]
                else:
                    flat = sorted(rng.sample(range(size), k))
                    picks = [
                        (mx[i // (len(my) * len(mz))], my[i // len(mz) % len(my)], mz[i % len(mz)])
                        for i in flat
                    ]
                out[key] = (size, picks)
    return out


def _class_members(grid: tuple[int, int, int]) -> list[tuple[tuple, range, range, range]]:
    axes = [_classes(g) for g in grid]
    return [
        ((cx, cy, cz), mx, my, mz) for cx, mx in axes[0] for cy, my in axes[1] for cz, mz in axes[2]
    ]


def _class_of(i: int, extent: int) -> int:
    if i == 0:
        return 0
    return 2 if i == extent - 1 else 1


def expand(grid: tuple[int, int, int], table: dict[tuple, ProgramRecord]) -> Runs:
    """Every program's record in grid order, as runs, from one record per class (one run per
    class for launches scheduled by the list-scheduling bound, where order does not count)."""
    gx, gy, gz = grid
    if gx * gy * gz > EXACT_SCHEDULE_PROGRAMS:
        sizes = {k: len(a) * len(b) * len(c) for k, a, b, c in _class_members(grid)}
        return tuple((table[k], sizes[k]) for k in sorted(table))

    def merge(runs: list) -> list:
        out: list = []
        for rec, n in runs:
            if out and out[-1][0] is rec:
                out[-1] = (rec, out[-1][1] + n)
            else:
                out.append((rec, n))
        return out

    def repeat(runs: list, k: int) -> list:
        return [(runs[0][0], runs[0][1] * k)] if len(runs) == 1 else runs * k

    def run(extent: int, item: Any) -> list:
        if extent <= 2:
            return merge([r for i in range(extent) for r in item(_class_of(i, extent))])
        return merge(item(0) + repeat(item(1), extent - 2) + item(2))

    def zs(cx: int, cy: int) -> list:
        return run(gz, lambda cz: [(table[(cx, cy, cz)], 1)])

    def ys(cx: int) -> list:
        return run(gy, lambda cy: zs(cx, cy))

    return tuple(run(gx, ys))


def sampled_records(
    chosen: dict[tuple, tuple[int, list[tuple]]], run_program: Any, led: Any
) -> dict[tuple, ProgramRecord] | None:
    """Run every sampled program; one record per class, or None when a class is not uniform.
    The bytes stored per buffer are extrapolated to the whole class (ledger.written)."""
    table: dict[tuple, ProgramRecord] = {}
    written = dict(led.written)
    stored: dict[int, int] = {}
    for key, (size, picks) in chosen.items():
        seen: set[tuple] = set()
        for pid in picks:
            led.launch_writes = []
            before = len(led.programs)
            run_program(pid)
            seen.add((led.programs[before], led.launch_writes[0]))
        if len(seen) != 1:
            led.written = written
            return None
        record, writes = next(iter(seen))
        table[key] = record
        for ptr, nbytes in writes:
            stored[ptr] = stored.get(ptr, 0) + size * nbytes
    led.written = written
    led.touch(led.written, sorted(stored.items()))
    return table


def values_agree(
    chosen: dict[tuple, tuple[int, list[tuple]]],
    table: dict[tuple, ProgramRecord],
    run_program: Any,
    led: Any,
) -> bool:
    """Re-run, with every loop iteration, the first sampled program of each class whose
    counting run skipped iterations: its stores become known data for the output check, and
    its full record must equal the class's sampled one (False when it does not: the launch is
    then simulated in full). Runs while the loop iterations re-run stay within
    VALUE_ITERATIONS (a count, not a clock, so the outcome is the same on every host)."""
    for key, (_, picks) in chosen.items():
        pid = picks[0]
        iterations = led.program_iters.get(pid)
        if iterations is None or iterations > led.value_budget:
            continue
        led.value_budget -= iterations
        started = time.perf_counter()
        scratch = run_program(pid, counted=False)
        led.value_spent += time.perf_counter() - started
        if scratch.programs[-1] != table[key]:
            return False
    return True
