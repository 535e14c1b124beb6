# problem: add_bias
# expect: INCORRECT
"""Flaw (in-place edit of an input): adds the bias into x and returns x."""


def kernel(x, bias):
    x += bias
    return x
