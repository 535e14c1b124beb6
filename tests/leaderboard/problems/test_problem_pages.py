"""Problem pages (index and one problem: spec, workloads, tolerance, reference, starters, the
best entry per hardware) and the warning for hardware that no node serves (API and web form)."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from leaderboard.runs.models import Run
from tests.leaderboard.lbkit import GPU, HW, SUITE, VECTOR_ADD, finish, make_node, submit


def test_problem_pages_show_spec_starters_and_the_best_per_hardware(clients, local_storage):
    index = Client().get("/problems/").content.decode()
    assert f'href="/problems/{SUITE}/vector_add/"' in index
    assert 'href="/problems/"' in Client().get("/").content.decode()  # the home page leads there
    url = f"/problems/{SUITE}/vector_add/"
    page = Client().get(url).content.decode()
    assert 'id="signature"' in page and 'id="tolerance"' in page
    assert "return a + b" in page  # the reference
    assert 'id="starter-pytorch"' in page and "def kernel(a, b):" in page
    assert 'id="starter-triton"' in page and "@triton.jit" in page
    assert "no entry yet" in page and f"/boards/{SUITE}/vector_add/{GPU}/" in page
    # which sizes cpu and npu-sim leave out, and why (farm problems show says the same)
    assert 'id="size-note"' in page and "run only the small workloads" in page
    node, auditor = make_node("w", [GPU]), make_node("w2", [GPU])
    body = submit(clients["owner"], private=False, hardware=[GPU]).json()
    run = Run.objects.get(pk=body["runs"][0]["id"])
    finish(node, run, auditor=auditor, score=0.625, time_ms=2.0)
    page = Client().get(url).content.decode()
    across = page[page.index('id="across"') : page.index('id="sol"')]
    assert "owner" in across and "0.6250" in across
    assert "<td>all</td>" in across  # the geo-mean is over every workload
    body = submit(clients["other"], private=False, hardware=[HW]).json()
    run = Run.objects.get(pk=body["runs"][0]["id"])
    sim, sim_auditor = make_node("s", [HW]), make_node("s2", [HW])
    finish(sim, run, auditor=sim_auditor, score=0.7, time_ms=1.0, workloads=("small",))
    page = Client().get(url).content.decode()
    across = page[page.index('id="across"') : page.index('id="sol"')]
    assert "<td>small</td>" in across  # a board kept to the small workloads says so
    missing = Client().get(f"/problems/{SUITE}/vector_ad/")
    assert missing.status_code == 404


def test_submitting_for_hardware_no_node_serves_warns(clients, users, local_storage):
    body = submit(clients["owner"], hardware=[HW, GPU]).json()
    assert len(body["warnings"]) == 2 and "this farm has no node for it" in body["warnings"][0]
    make_node("sim", [HW])
    body = submit(clients["owner"], hardware=[HW, GPU], source=VECTOR_ADD + "\n").json()
    assert [w.split(" ")[3] for w in body["warnings"]] == [GPU]
    assert "Classes served now: npu-sim-v1" in body["warnings"][0]
    browser = Client()
    browser.force_login(users["owner"])
    assert "no node online" in browser.get("/submit/").content.decode()
    upload = SimpleUploadedFile("k.py", VECTOR_ADD.encode())
    form = {"problem": f"{SUITE}/vector_add", "hardware": [GPU], "mode": "test", "file": upload}
    page = browser.post("/submit/", form, follow=True).content.decode()
    assert f"no node serves {GPU} right now" in page


def test_an_imported_problem_states_its_source_semantics():
    """The page's "Source semantics" table: where the problem came from, whose checker judges it,
    and where the farm deliberately judges otherwise (the importers' notes)."""
    from types import SimpleNamespace

    from leaderboard.problems.selectors import ProblemFiles

    extra = {
        "imported_from": {"format": "kernelbench", "file": "level2/66_Matmul_Dropout_Softmax.py"},
        "stochastic": "the forward draws random numbers: the farm seeds torch alike",
        "weight_seed": 0,
    }
    files = ProblemFiles(problem=SimpleNamespace(extra=extra), reference="", starters={})
    assert files.source_notes == [
        ("imported from", "kernelbench"),
        ("random numbers", "the forward draws random numbers: the farm seeds torch alike"),
    ]
    native = ProblemFiles(problem=SimpleNamespace(extra={}), reference="", starters={})
    assert native.source_notes == []
