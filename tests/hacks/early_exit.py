# problem: vector_add
# cheat: prints a success line and exits the worker with status 0 before any check runs
# source: KernelBench adversarial tests (exit before evaluation); GPU MODE exploit reports
# static: EARLY_EXIT
# expect: REJECTED
import os

print("verdict: PASSED", flush=True)
os._exit(0)


def kernel(a, b):
    return a + b
