# problem: softmax
# cheat: caches the result by id() of the input tensor, so repeated timing calls on one input cost a dict lookup
# source: KernelBench adversarial tests (result caching across trials)
# static: OUTPUT_REPLAY_CACHE
# expect: REJECTED
import torch

_by_id = {}


def kernel(x):
    hit = _by_id.get(id(x))
    if hit is None:
        hit = _by_id[id(x)] = torch.softmax(x.float(), dim=-1).to(x.dtype)
    return hit
