# problem: vector_add
# cheat: adds in place into the first input and returns that input (no output allocation, aliasing the input)
# source: KernelBench adversarial tests (in-place outputs aliasing inputs)
# static: none
# expect: INCORRECT
def kernel(a, b):
    return a.add_(b)
