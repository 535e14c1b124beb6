# problem: vector_add
# cheat: rewrites the harness's timing source on disk so the next evaluation on this node imports a rigged timer
# source: sandbox requirements (read-only system); GPU MODE KernelBot runner hardening reports
# static: FILESYSTEM_WRITE
# expect: REJECTED
import pathlib

try:
    import torch

    target = pathlib.Path(torch.__file__).parents[1] / "farm" / "harness" / "timing.py"
    with open(target, "a") as f:
        f.write("\nmedian = lambda values: 1e-6\n")
except OSError:
    pass


def kernel(a, b):
    return a + b
