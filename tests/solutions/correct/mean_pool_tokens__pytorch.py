# problem: mean_pool_tokens
# expect: PASSED
"""Mean over tokens: an fp32 sum divided by the token count."""


def kernel(x):
    return (x.float().sum(1) / x.shape[1]).to(x.dtype)
