"""Marker provenance on traces whose launch records are incomplete (farm.harness.spans): an
honest window is still read, a marker-named kernel inside a call never moves the span."""

from farm.harness.spans import END_KERNEL, FLUSH_KERNEL, Activity, Launch, Mark, Trace, _spans

US = 1000


def _call(t: int, corr: int, work_us: int, *, fake_flush: bool = False) -> list[Activity]:
    acts = [Activity(t, t + 5 * US, FLUSH_KERNEL, corr)]
    acts.append(Activity(t + 10 * US, t + (10 + work_us) * US, "kernel", corr + 1))
    if fake_flush:  # the submission's own kernel named like the flush, late in its call
        acts.append(
            Activity(t + (9 + work_us) * US, t + (10 + work_us) * US, FLUSH_KERNEL, corr + 2)
        )
    acts.append(Activity(t + (12 + work_us) * US, t + (13 + work_us) * US, END_KERNEL, corr + 3))
    return acts


def _trace(fake: bool, launches: list[Launch]) -> Trace:
    acts = _call(0, 10, 100) + _call(1000 * US, 20, 100, fake_flush=fake)
    marks = [Mark(FLUSH_KERNEL, 0, 1), Mark(END_KERNEL, 2, 3)] * 2
    return Trace(acts, launches, marks)


def test_an_honest_trace_without_launch_records_is_read_by_name():
    spans = _spans(_trace(False, [Launch(5, 10)]))  # one of four marker launches recorded
    assert [round(s, 3) for s in spans] == [0.1, 0.1]


def test_a_marker_named_kernel_inside_a_call_does_not_move_the_span():
    # without provenance the alternation breaks: no spans, the window's events are used
    assert _spans(_trace(True, [Launch(5, 10)])) == []
