# problem: matmul_backward
# expect: PASSED
"""Both GEMM gradients with torch.matmul (fp32 stays fp32: TF32 is off by default)."""


def kernel(a, b, dout):
    return dout @ b.T, a.T @ dout
