# problem: vector_add
# expect: PASSED
"""vector_add as a CUDA C++ extension built with load_inline at import (nvcc + the host C++
compiler + ninja, inside the sandbox)."""

import torch
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>

__global__ void add_kernel(const float* a, const float* b, float* out, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

torch::Tensor add(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    long n = a.numel();
    int threads = 256;
    long blocks = (n + threads - 1) / threads;
    add_kernel<<<blocks, threads>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""
CPP = "torch::Tensor add(torch::Tensor a, torch::Tensor b);"

_ext = load_inline("farm_vector_add", cpp_sources=CPP, cuda_sources=CUDA, functions=["add"])


def kernel(a, b):
    if a.dtype != torch.float32:
        return a + b
    return _ext.add(a.contiguous(), b.contiguous())
