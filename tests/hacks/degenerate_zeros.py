# problem: softmax
# cheat: returns an all-zero tensor of the right shape and dtype (a degenerate output that some checkers let through)
# source: SOL-ExecBench correctness (all-zero output rule); robust-kbench degenerate-task filter
# static: none
# expect: INCORRECT
import torch


def kernel(x):
    return torch.zeros_like(x)
