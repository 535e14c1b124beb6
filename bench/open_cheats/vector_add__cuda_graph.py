# problem: vector_add
# expect: PASSED
# device: cuda
"""The addition captured once per shape and dtype in a CUDA graph over static buffers, replayed
on every call after copying that call's inputs into the captured buffers, and the result copied
out: fresh inputs every call, so never a stale answer. A common way to cut launch overhead. On
the CPU (no graphs) it adds directly."""

import torch

_graphs: dict[tuple, tuple] = {}


def _captured(a: torch.Tensor, b: torch.Tensor) -> tuple:
    key = (a.shape, a.dtype, a.device)
    if key not in _graphs:
        static_a, static_b = torch.empty_like(a), torch.empty_like(b)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up before capture, as the CUDA graph docs ask
            torch.add(static_a, static_b)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = torch.add(static_a, static_b)
        _graphs[key] = (graph, static_a, static_b, static_out)
    return _graphs[key]


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if not a.is_cuda:
        return a + b
    graph, static_a, static_b, static_out = _captured(a, b)
    static_a.copy_(a)
    static_b.copy_(b)
    graph.replay()
    return static_out.clone()
