# problem: dequantize_fp8_block
# expect: INCORRECT
"""Flaw (wrong dtype): returns the float32 product instead of bfloat16."""

def kernel(w, scale):
    n, k = w.shape
    full = scale.repeat_interleave(128, 0)[:n].repeat_interleave(128, 1)[:, :k]
    return w.float() * full
