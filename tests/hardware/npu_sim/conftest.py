"""npu-sim must be installed before any Triton kernel of these tests is decorated."""

from farm.hardware import npu_sim

npu_sim.install()


import pytest  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _interpreter_hooks_put_back():
    """Some modules run the replay's code in this process (the farm runs it in a sandbox of its
    own), which installs its own counting hooks over the in-worker simulator's: every module
    leaves the Triton interpreter as it found it, so the next one's integrity checks see the
    hooks `npu_sim.install()` put there, whatever order the files run in."""
    from triton.runtime import interpreter as interp

    hooked = [
        (interp, "interpreter_builder"),
        (interp.interpreter_semantic, "builder"),
        (interp.GridExecutor, "__call__"),
        (interp.ReduceOps, "sum"),
        (interp.ReduceOps, "min_max"),
        (interp.ScanOps, "cumsum"),
        (interp.ScanOps, "cumprod"),
        (interp.ReduceScanOpInterface, "to_tensor"),
    ]
    saved = [(owner, name, vars(owner)[name]) for owner, name in hooked]
    yield
    for owner, name, value in saved:
        setattr(owner, name, value)


@pytest.fixture(scope="session")
def replay_runner():
    """The sandbox the replay runs in here: bwrap, as on a node (skipped where it cannot start a
    sandbox; as root the sandbox user comes from deploy/sandbox/add-sandbox-user.sh)."""
    from farm.sandbox import SandboxUnavailable, get_runner

    try:
        return get_runner("bwrap")
    except SandboxUnavailable as exc:
        pytest.skip(f"no bwrap sandbox here: {exc}")
