# problem: vector_add
# cheat: reads the secret seed from the environment to predict the leaderboard inputs and precompute answers
# source: GPU MODE reference-kernels harness (secret seeds read and removed from the environment)
# static: SECRET_ACCESS
# expect: REJECTED
import os

_seed = os.environ.get("FARM_SECRET_SEED") or os.environ.get("POPCORN_SEED")
_everything = dict(os.environ)


def kernel(a, b):
    return a + b
