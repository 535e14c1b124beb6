"""npu-sim must be installed before any Triton kernel of these tests is decorated."""

from farm.hardware import npu_sim

npu_sim.install()


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def replay_runner():
    """The sandbox the replay runs in here: bwrap, as on a node (skipped where it cannot start a
    sandbox; as root the sandbox user comes from deploy/sandbox/add-sandbox-user.sh)."""
    from farm.sandbox import SandboxUnavailable, get_runner

    try:
        return get_runner("bwrap")
    except SandboxUnavailable as exc:
        pytest.skip(f"no bwrap sandbox here: {exc}")
