# problem: scatter_add
# expect: INCORRECT
"""Flaw (in-place edit of an input): accumulates into base and returns it."""


def kernel(base, index, src):
    return base.index_add_(0, index, src)
