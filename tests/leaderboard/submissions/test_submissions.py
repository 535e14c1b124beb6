"""Submitting: storage by content hash, batches, validation messages, quotas, visibility."""

from __future__ import annotations

import pytest

from leaderboard.accounts.models import Quota
from leaderboard.runs.models import Run
from leaderboard.submissions.models import Source, Submission
from leaderboard.submissions.validation import PYTHON
from tests.leaderboard.lbkit import AMD, GPU, HW, SUITE, VECTOR_ADD, race, submit

CUDA = (
    "from torch.utils.cpp_extension import load_inline\n"
    "mod = load_inline('k', cpp_sources='', cuda_sources='__global__ void k() {}')\n"
    "def kernel(a, b):\n    return a + b\n"
)


def test_submit_creates_one_run_per_hardware_and_stores_source_in_s3(
    clients, s3, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        r = submit(clients["owner"], hardware=[HW, GPU])
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["private"] is True
    assert sorted(run["hardware"] for run in body["runs"]) == sorted([GPU, HW])
    assert {run["state"] for run in body["runs"]} == {"queued"}
    source = Source.objects.get(sha256=body["source_sha256"])
    assert source.pending_text is None and source.stored_at is not None
    obj = s3.get_object(Bucket=s3.bucket, Key=source.key)
    assert obj["Body"].read().decode() == VECTOR_ADD


def test_same_source_is_stored_once(clients, s3, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        a = submit(clients["owner"]).json()
        b = submit(clients["other"], mode="benchmark").json()
    assert a["source_sha256"] == b["source_sha256"]
    assert Source.objects.count() == 1
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=s3.bucket).get("Contents", [])]
    assert len([k for k in keys if k.startswith("sources/")]) == 1


def test_batch_creates_all(clients, local_storage):
    items = [
        {"problem": "vector_add", "suite": SUITE, "hardware": HW, "source": VECTOR_ADD + f"# {i}\n"}
        for i in range(5)
    ]
    r = clients["owner"].post("/api/submissions/", {"submissions": items}, format="json")
    assert r.status_code == 201, r.content
    assert len(r.json()["submissions"]) == 5
    assert Run.objects.filter(user__username="owner").count() == 5


def test_batch_with_one_bad_item_creates_nothing_and_names_it(clients, local_storage):
    items = [
        {"problem": "vector_add", "suite": SUITE, "hardware": HW, "source": VECTOR_ADD},
        {"problem": "vectoradd", "suite": SUITE, "hardware": HW, "source": VECTOR_ADD},
    ]
    r = clients["owner"].post("/api/submissions/", {"submissions": items}, format="json")
    assert r.status_code == 400
    assert "did you mean 'vector_add'" in r.json()["submissions"]["1"]["problem"][0]
    assert Submission.objects.count() == 0


def test_batch_limit(clients, local_storage, settings):
    settings.FARM_MAX_BATCH = 2
    items = [{"problem": "vector_add", "suite": SUITE, "hardware": HW, "source": VECTOR_ADD}] * 3
    r = clients["owner"].post("/api/submissions/", {"submissions": items}, format="json")
    assert r.status_code == 400
    assert "FARM_MAX_BATCH" in r.json()["submissions"][0]


@pytest.mark.parametrize(
    ("fields", "field", "expected"),
    [
        (
            {"problem": "vectr_add"},
            "problem",
            "problem 'vectr_add' not in suite lbtest-v1; did you mean 'vector_add'?",
        ),
        ({"hardware": ["nvidia-h10"]}, "hardware", "did you mean 'nvidia-h100'?"),
        ({"suite": "lbtest-v2"}, "suite", "did you mean 'lbtest-v1'?"),
        ({"source": ""}, "source", "is empty"),
        ({"source": "   \n"}, "source", "is empty"),
        ({"hardware": []}, "hardware", "is empty; name at least one hardware class"),
        (
            {"mode": "fast"},
            "mode",
            "'fast' is not a mode; use one of test, benchmark, leaderboard, profile",
        ),
        ({"source": CUDA}, "language", "'cuda' cannot run on npu-sim-v1"),
        ({"source": CUDA, "hardware": [AMD]}, "language", "submit it to a cuda hardware class"),
        ({"language": "hip", "hardware": [GPU]}, "language", "'hip' cannot run on nvidia-h100"),
        (
            {"problem": "matmul", "source": CUDA, "hardware": [GPU]},
            "language",
            "problem matmul accepts pytorch, triton, not cuda",
        ),
        ({"language": "fortran"}, "language", "'fortran' is not a language"),
        (
            {"source": "def kernel(a, b)\n    return a + b\n"},
            "source",
            f"does not parse as {PYTHON}: line 1: expected ':' (def kernel(a, b)); fix the file",
        ),
        ({"source": "x" + ".a" * 50_000}, "source", "nested too deeply to parse"),
        # refused while parsing, before field validation: PostgreSQL cannot store a NUL
        ({"source": "def kernel(a):\x00"}, "detail", "body.source contains a NUL character"),
    ],
)
def test_validation_says_what_to_fix(clients, local_storage, fields, field, expected):
    r = submit(clients["owner"], **fields)
    assert r.status_code == 400, r.content
    found = r.json()[field]
    messages = found if isinstance(found, str) else " ".join(found)
    assert expected in messages
    assert Submission.objects.count() == 0


def test_oversized_source(clients, local_storage, settings):
    settings.FARM_MAX_SOURCE_BYTES = 100
    r = submit(clients["owner"], source="x = 1\n" * 50)
    assert r.status_code == 400
    assert "300 bytes, over the limit of 100 bytes (FARM_MAX_SOURCE_BYTES)" in r.json()["source"][0]


def test_file_upload_and_non_utf8(clients, local_storage):
    from django.core.files.uploadedfile import SimpleUploadedFile

    def upload(name: str, data: bytes, **kwargs):
        return clients["owner"].post(
            "/api/submissions/",
            {"problem": "vector_add", "suite": SUITE, "hardware": HW,
             "file": SimpleUploadedFile(name, data, **kwargs)},
            format="multipart",
        )  # fmt: skip

    r = upload("add.py", VECTOR_ADD.encode(), content_type="text/x-python")
    assert r.status_code == 201, r.content
    assert r.json()["filename"] == "add.py"
    r = upload("bad.py", b"def kernel(a, b):\n    return a + b # \xff\xfe\n")
    assert r.status_code == 400
    assert r.json()["file"] == [
        "is not UTF-8 text (byte 0xff at offset 37); save the file as UTF-8"
    ]
    r = upload("nul.py", b"def kernel(a, b):\x00\n")
    assert r.status_code == 400
    assert r.json()["source"] == ["contains NUL characters; a kernel file is plain text"]


def test_quota_429_with_retry_after(clients, users, local_storage):
    Quota.objects.create(user=users["owner"], hardware_id=HW, runs_per_hour=2)
    assert submit(clients["owner"]).status_code == 201
    assert submit(clients["owner"], mode="benchmark").status_code == 201
    r = submit(clients["owner"], mode="test")
    assert r.status_code == 429
    assert 1 <= int(r["Retry-After"]) <= 3600
    assert "quota for npu-sim-v1 is 2 runs per hour" in r.json()["detail"]
    # other hardware and other users are not affected; staff are not limited
    assert submit(clients["owner"], hardware=[GPU]).status_code == 201
    assert submit(clients["other"]).status_code == 201
    assert Submission.objects.filter(user=users["owner"]).count() == 3


def test_default_quota_row_and_batch_counting(clients, local_storage):
    Quota.objects.create(user=None, hardware_id=HW, runs_per_hour=3)
    items = [{"problem": "vector_add", "suite": SUITE, "hardware": HW, "source": VECTOR_ADD}] * 4
    r = clients["other"].post("/api/submissions/", {"submissions": items}, format="json")
    assert r.status_code == 429
    assert Submission.objects.count() == 0
    assert submit(clients["admin"]).status_code == 201


def test_lists_and_visibility(clients, local_storage):
    private = submit(clients["owner"]).json()
    public = submit(clients["owner"], private=False, mode="benchmark").json()
    listed = clients["owner"].get("/api/submissions/").json()["results"]
    assert {s["id"] for s in listed} == {private["id"], public["id"]}
    assert clients["other"].get("/api/submissions/").json()["results"] == []
    assert clients["other"].get(f"/api/submissions/{private['id']}/").status_code == 404
    seen = clients["other"].get(f"/api/submissions/{public['id']}/").json()
    assert seen["source_url"] is None
    assert clients["other"].get(f"/api/submissions/{public['id']}/source/").status_code == 403
    own = clients["owner"].get(f"/api/submissions/{private['id']}/source/")
    assert own.status_code == 200 and own.content.decode() == VECTOR_ADD
    assert len(clients["admin"].get("/api/submissions/").json()["results"]) == 2


def test_board_owner_makes_sources_public(clients, users, local_storage):
    from leaderboard.boards.services import board_get_or_create, board_update
    from leaderboard.problems.models import Problem

    public = submit(clients["owner"], private=False).json()
    problem = Problem.objects.get(suite_id=SUITE, name="vector_add")
    board = board_get_or_create(problem_id=problem.pk, hardware_id=HW)
    board_update(board=board, owner_id=users["other"].pk)
    url = f"/api/boards/{SUITE}/vector_add/{HW}/"
    assert clients["owner"].patch(url, {"sources_public": True}, format="json").status_code == 403
    assert clients["other"].patch(url, {"sources_public": True}, format="json").status_code == 200
    r = clients["anonymous"].get(f"/api/submissions/{public['id']}/source/")
    assert r.status_code == 200 and r.content.decode() == VECTOR_ADD


@pytest.mark.django_db(transaction=True)
def test_quota_holds_under_simultaneous_requests(local_storage, django_db_setup):
    """Six requests at once against a quota of 2: exactly two get their runs, as the check and
    the insert happen under one lock on the user's row."""
    from django.contrib.auth.models import User

    from leaderboard.submissions.services import QuotaExceeded, submissions_create
    from leaderboard.submissions.validation import submission_check

    user = User.objects.create_user("racer")
    Quota.objects.create(user=user, hardware_id=HW, runs_per_hour=2)
    req = submission_check(problem="vector_add", hardware=[HW], source=VECTOR_ADD, suite=SUITE)
    created = race(
        lambda _: submissions_create(user=user, requests=[req]), list(range(6)), lost=QuotaExceeded
    )
    assert len(created) == 2
    assert Run.objects.filter(user=user).count() == 2
