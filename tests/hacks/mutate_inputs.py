# problem: vector_add
# cheat: zeroes both inputs and returns zeros, so a reference that runs afterwards on the same tensors agrees
# source: KernelBench adversarial tests (reference computed on uncloned inputs); field notes: inputs cloned and verified
# static: none
# expect: INCORRECT
import torch


def kernel(a, b):
    a.zero_()
    b.zero_()
    return torch.zeros_like(a)
