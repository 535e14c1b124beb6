# problem: row_sum
# expect: INCORRECT
"""Flaw (off-by-one): the last column is left out of every row sum."""


def kernel(x):
    return x[:, :-1].float().sum(-1).to(x.dtype)
