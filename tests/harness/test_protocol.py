import io

import pytest
import torch

from farm.harness import protocol


def _roundtrip(header, tensors):
    buf = io.BytesIO()
    protocol.send(buf, header, tensors)
    buf.seek(0)
    return protocol.recv(buf)


@pytest.mark.parametrize(
    "t",
    [
        torch.randn(3, 5),
        torch.randn(7).to(torch.bfloat16),
        torch.randint(-5, 5, (4, 2), dtype=torch.int64),
        torch.tensor(3.5),
        torch.zeros(0, 4),
        torch.tensor([True, False, True]),
        torch.randn(4, 4).t(),  # non-contiguous
        torch.randn(8).to(torch.float8_e4m3fn),
        torch.randn(8).to(torch.float8_e4m3fnuz),
        torch.randn(8).to(torch.float8_e5m2fnuz),
        torch.rand(8).to(torch.float8_e8m0fnu),
        torch.randint(0, 256, (4, 6), dtype=torch.uint8).view(torch.float4_e2m1fn_x2).t(),
    ],
)
def test_tensors_roundtrip_bit_exactly(t):
    header, (back,) = _roundtrip({"op": "x", "n": 1}, [t])
    assert header == {"op": "x", "n": 1}
    assert back.dtype == t.dtype and back.shape == t.shape
    assert torch.equal(
        back.reshape(-1).view(torch.uint8), t.contiguous().reshape(-1).view(torch.uint8)
    )


def test_bad_magic_is_rejected():
    with pytest.raises(protocol.ProtocolError, match="magic"):
        protocol.recv(io.BytesIO(b"garbage-garbage-garbage"))


def test_eof_is_reported():
    with pytest.raises(protocol.ProtocolError, match="closed"):
        protocol.recv(io.BytesIO(b""))


def test_tensor_size_must_match_shape():
    buf = io.BytesIO()
    protocol.send(buf, {}, [torch.randn(4)])
    raw = bytearray(buf.getvalue())
    raw = raw.replace(b'"shape": [4]', b'"shape": [5]')
    with pytest.raises(protocol.ProtocolError):
        protocol.recv(io.BytesIO(bytes(raw)))


def test_total_bytes_are_capped():
    buf = io.BytesIO()
    protocol.send(buf, {}, [torch.randn(1024)])
    buf.seek(0)
    with pytest.raises(protocol.ProtocolError, match="more than"):
        protocol.recv(buf, max_bytes=100)


def test_unknown_dtype_is_rejected_not_evaluated():
    buf = io.BytesIO()
    protocol.send(buf, {}, [torch.randn(2)])
    raw = buf.getvalue().replace(b'"float32"', b'"Tensor_"')
    with pytest.raises(protocol.ProtocolError, match="unknown dtype"):
        protocol.recv(io.BytesIO(raw))
