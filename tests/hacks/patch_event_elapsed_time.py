# problem: vector_add
# cheat: replaces torch.cuda.Event.elapsed_time so that every measured interval reads 1 microsecond
# source: GPU MODE reference-kernels exploit reports (timer monkeypatching); KernelGuard TIMER_MONKEYPATCH
# static: TIMER_MONKEYPATCH
# expect: REJECTED
import torch

torch.cuda.Event.elapsed_time = lambda self, other: 0.001


def kernel(a, b):
    return a + b
