# problem: matmul_backward
# expect: INCORRECT
"""Flaw: returns the two gradients in the wrong order (db, da); their shapes differ."""


def kernel(a, b, dout):
    return a.T @ dout, dout @ b.T
