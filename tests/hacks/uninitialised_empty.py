# problem: vector_add
# cheat: returns torch.empty of the right shape without computing, betting that the allocator hands back memory that already holds the expected sum
# source: robust-kbench correctness ordering; KernelBench issue reports on uninitialised outputs passing
# static: none
# expect: INCORRECT
import torch


def kernel(a, b):
    return torch.empty_like(a)
