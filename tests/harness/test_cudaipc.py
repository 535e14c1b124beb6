"""Outputs handed over on the device: every entry a worker sends is checked before use, a
layout that is not the reference's is never opened, and a handle that does not open sends the
evaluation back to the pipe (said in the result). Runs on any host: no handle is opened here."""

from __future__ import annotations

import pytest
import torch

from farm.harness import correctness, cudaipc
from farm.suite.loader import load_suite

from .test_supervisor_faults import HONEST_CHECK, OK_LOAD, _codes, scripted  # noqa: F401

GOOD = {"dtype": "float32", "shape": [4096], "handle": "ab" * 64, "offset": 0}


def test_a_well_formed_entry_is_parsed():
    (entry,) = cudaipc.parse([GOOD])
    assert entry.dtype == torch.float32 and entry.shape == (4096,) and entry.nbytes == 16384
    assert entry.handle == bytes([0xAB]) * 64


@pytest.mark.parametrize(
    "bad",
    [
        {"dtype": "tensor"},
        {"dtype": "__class__"},
        {"shape": [-1]},
        {"shape": [True]},
        {"shape": [2] * 17},
        {"shape": [1 << 30, 1 << 30]},
        {"handle": "ab" * 63},
        {"handle": "zz" * 64},
        {"handle": None},
        {"offset": -8},
        {"offset": 1.5},
    ],
)
def test_malformed_entries_are_refused(bad):
    with pytest.raises(cudaipc.BadEntry):
        cudaipc.parse([{**GOOD, **bad}])


def test_entry_lists_are_capped():
    with pytest.raises(cudaipc.BadEntry):
        cudaipc.parse([GOOD] * (cudaipc.MAX_OUTPUTS + 1))
    with pytest.raises(cudaipc.BadEntry):
        cudaipc.parse({"0": GOOD})


def test_a_layout_that_is_not_the_references_is_never_opened():
    claimed = cudaipc.parse([{**GOOD, "shape": [1 << 40]}])
    expected = [torch.zeros(4096)]
    (out,) = cudaipc.receive(claimed, expected, torch.device("cpu"))  # no driver call
    assert out.device.type == "meta"
    problem = load_suite("core-v1").problem("vector_add")
    errors, _ = correctness.compare([out], expected, problem, device=torch.device("cpu"))
    assert [e.code for e in errors] == ["WRONG_SHAPE"]
    # the problem's own checker never sees an output that was not read
    errors, _ = correctness.compare(
        [out], expected, problem, device=torch.device("cpu"), check=lambda outs: ["ran"]
    )
    assert [e.code for e in errors] == ["WRONG_SHAPE"]


def test_hand_off_is_off_where_it_cannot_work(monkeypatch):
    assert cudaipc.unavailable_reason(torch.device("cpu")) == "device hand-off is CUDA only"
    monkeypatch.setenv(cudaipc.TRANSPORT_ENV, "pipe")
    assert "pipe" in str(cudaipc.unavailable_reason(torch.device("cuda")))


IPC_CHECK = {"reply": {"ok": True, "inputs_modified": [], "outputs_ipc": [GOOD]}}


def test_unasked_device_outputs_are_a_bad_reply(scripted):  # noqa: F811
    doc, _ = scripted({"load": OK_LOAD, "check": IPC_CHECK})
    assert doc["verdict"] == "RUNTIME_ERROR" and "BAD_REPLY" in _codes(doc)
    assert doc["environment"]["output_transport"].startswith("pipe (")


@pytest.fixture
def asked(monkeypatch):
    """The supervisor asks for outputs on the device, as on a CUDA node."""
    monkeypatch.setattr(cudaipc, "unavailable_reason", lambda device: None)


@pytest.mark.parametrize(
    ("entries", "verdict", "code"),
    [
        ([{**GOOD, "offset": "0"}], "RUNTIME_ERROR", "BAD_REPLY"),
        ([{**GOOD, "shape": [4097]}], "INCORRECT", "WRONG_SHAPE"),
        ([{**GOOD, "dtype": "float16"}], "INCORRECT", "WRONG_DTYPE"),
        ([GOOD, GOOD], "INCORRECT", "OUTPUT_COUNT"),
    ],
)
def test_device_entries_are_checked_before_use(scripted, asked, entries, verdict, code):  # noqa: F811
    reply = {"reply": {"ok": True, "inputs_modified": [], "outputs_ipc": entries}}
    doc, _ = scripted({"load": OK_LOAD, "check": reply})
    assert doc["verdict"] == verdict, doc["reasons"]
    assert code in _codes(doc)


def test_a_handle_that_does_not_open_falls_back_to_the_pipe(scripted, asked):  # noqa: F811
    doc, _ = scripted({"load": OK_LOAD, "check": [IPC_CHECK, HONEST_CHECK]})
    assert doc["verdict"] == "PASSED", doc["reasons"]
    assert doc["environment"]["output_transport"].startswith("pipe (")
