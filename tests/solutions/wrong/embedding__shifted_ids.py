# problem: embedding
# expect: INCORRECT
"""Flaw (off-by-one): looks up id - 1 (1-based ids), so every row is its neighbour's."""


def kernel(ids, table):
    return table[ids - 1]
