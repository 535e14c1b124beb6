"""A run's result says which workload sizes ran and which of the problem's did not, and why:
in the API (result.sizes) and on the submission page beside the run."""

from __future__ import annotations

from django.test import Client

from leaderboard.runs.models import Run
from tests.leaderboard.lbkit import HW, finish, make_node, submit

NOT_RUN = (
    "ran: small; not run: big (cpu and npu-sim run only the small workloads (small); the "
    "others (big) run on GPUs and in npu-sim leaderboard runs)"
)


def test_a_result_states_the_sizes_it_did_not_run(clients, users, local_storage):
    body = submit(clients["owner"], hardware=[HW]).json()
    run = Run.objects.get(pk=body["runs"][0]["id"])
    node = make_node("sim", [HW])
    assert finish(node, run, workloads=("small",)).status_code == 200
    result = clients["owner"].get(f"/api/runs/{run.pk}/").json()["result"]
    assert result["sizes"] == NOT_RUN  # secret-seed copies are not workloads of the problem
    browser = Client()
    browser.force_login(users["owner"])
    page = browser.get(f"/submissions/{run.submission_id}/").content.decode()
    assert f'<p class="sizes">Sizes: {NOT_RUN}.</p>' in page


def test_a_result_that_ran_every_workload_says_so(clients, users, local_storage):
    body = submit(clients["owner"], hardware=[HW]).json()
    run = Run.objects.get(pk=body["runs"][0]["id"])
    node = make_node("sim", [HW])
    assert finish(node, run, workloads=("big", "small")).status_code == 200
    result = clients["owner"].get(f"/api/runs/{run.pk}/").json()["result"]
    assert result["sizes"] == "ran: big, small (every workload of the problem)"
