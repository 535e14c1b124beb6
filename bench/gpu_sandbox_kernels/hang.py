# problem: softmax
# expect: TIMEOUT
import torch


def kernel(x):
    while True:
        pass
    return torch.softmax(x, dim=-1)
