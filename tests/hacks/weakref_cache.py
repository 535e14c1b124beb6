# problem: vector_add
# cheat: keeps outputs in a WeakKeyDictionary keyed on the input tensor object, a replay cache that also cleans itself up
# source: KernelGuard OUTPUT_REPLAY_CACHE
# static: OUTPUT_REPLAY_CACHE
# expect: REJECTED
import weakref

_memo = weakref.WeakKeyDictionary()


def kernel(a, b):
    if a not in _memo:
        _memo[a] = a + b
    return _memo[a]
