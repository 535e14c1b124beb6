"""The submission page shows npu-sim's per-launch profile from the result document."""

from leaderboard.web.views import _launch_profiles

DOC = {
    "workloads": [
        {"id": "small", "simulation": None},
        {
            "id": "llama3-8b-scores-8k",
            "simulation": {
                "model": "npu-sim-v1/cost-1",
                "per_launch": [
                    {
                        "name": "_softmax_row",
                        "kind": "triton",
                        "grid": [8192, 1, 1],
                        "programs": 8192,
                        "read_bytes": 268435456,
                        "write_bytes": 268435456,
                        "flops": {"tensor": 0, "vector": 738197504},
                        "bound": "memory",
                        "time_ms": 0.515,
                    }
                ],
            },
        },
    ]
}


def test_profiles_list_each_simulated_launch():
    (prof,) = _launch_profiles(DOC, True)
    assert prof["workload"] == "llama3-8b-scores-8k" and prof["model"] == "npu-sim-v1/cost-1"
    (launch,) = prof["launches"]
    assert (launch["name"], launch["bound"], launch["read_bytes"]) == (
        "_softmax_row",
        "memory",
        268435456,
    )


def test_kernel_names_are_hidden_with_the_source():
    (prof,) = _launch_profiles(DOC, False)
    assert prof["launches"][0]["name"] == "launch 1"
