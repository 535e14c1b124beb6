# problem: vector_add
# cheat: captures a CUDA graph on the first call and replays it afterwards without copying new inputs in: a stale result that times as one launch
# source: KernelGuard CUDA_GRAPH_REPLAY; GPU MODE helion do_bench_cudagraph discussion
# static: CUDA_GRAPH_REPLAY
# expect: REJECTED
import torch

_graph = None
_out = None


def kernel(a, b):
    global _graph, _out
    if _graph is None:
        _graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(_graph):
            _out = a + b
    _graph.replay()
    return _out
