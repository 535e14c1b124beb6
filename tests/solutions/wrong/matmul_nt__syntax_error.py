# problem: matmul_nt
# expect: COMPILE_ERROR
"""Flaw (syntax error): the file does not parse."""


def kernel(a, w)
    return a @ w.T
