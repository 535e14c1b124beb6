# problem: vector_add
# expect: PASSED
# device: cuda
"""The addition split in two halves, each on its own CUDA stream, with the current stream
waiting on both before the output is returned: honest multi-stream work that timers covering
every stream see in full. On the CPU (no streams) it adds directly."""

import torch

_streams: dict[torch.device, tuple] = {}


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if not a.is_cuda:
        return a + b
    out = torch.empty_like(a)
    half = a.numel() // 2
    main = torch.cuda.current_stream()
    pair = _streams.setdefault(a.device, (torch.cuda.Stream(), torch.cuda.Stream()))
    for stream, part in zip(pair, (slice(0, half), slice(half, None)), strict=True):
        stream.wait_stream(main)  # the inputs and the output exist before the stream reads them
        with torch.cuda.stream(stream):
            torch.add(a[part], b[part], out=out[part])
    for stream in pair:
        main.wait_stream(stream)
    for t in (a, b, out):
        t.record_stream(pair[0])
        t.record_stream(pair[1])
    return out
