"""Starter submissions: the file `farm init PROBLEM` writes and each problem page shows.

- `pytorch`: the problem's own reference function, renamed `kernel`. Correct as written: the
  baseline to beat, and a check that the submission path works end to end.
- `triton`, `cuda`: the same entry point with the language's plumbing in place (sizes read from
  the inputs, outputs allocated, a kernel compiled and launched over the first output's
  elements, reading the first input). The per-element computation is marked `TODO`; until it
  is written the starter fails (INCORRECT; an error where the first input's dtype cannot be
  copied into the output, e.g. fp8 or index inputs), which is the point: a starter must not
  pass for a solution.

Every starter begins with `#!farm problem=... mode=test` so that `farm submit FILE --hw HW`
needs no further flags. Pure text generation: no torch import, safe in the CLI and the server.
"""

from __future__ import annotations

import ast
import re

from farm.errors import unknown
from farm.suite.model import Problem, TensorSpec

STARTER_LANGUAGES = ("pytorch", "triton", "cuda")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")


def starter(problem: Problem, language: str) -> str:
    """The starter source for `problem` in `language`. Raises FarmError (exit 2) for a language
    with no starter or one the problem does not accept."""
    allowed = [lang for lang in STARTER_LANGUAGES if lang in problem.languages]
    if language not in allowed:
        raise unknown("starter language", language, allowed, f"problem {problem.name}")
    header = f"#!farm problem={problem.name} mode=test\n"
    doc = f'"""{problem.name}: {problem.signature}"""\n\n'
    body = {"pytorch": _pytorch, "triton": _triton, "cuda": _cuda}[language](problem)
    return header + doc + body


def starter_filename(problem: Problem, language: str) -> str:
    return f"{problem.name}_{language}.py"


def _pytorch(problem: Problem) -> str:
    """reference.py without its input generator, `reference` renamed `kernel` (comments kept)."""
    text = problem.reference_path.read_text()
    lines = text.splitlines(keepends=True)
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == "make_inputs":
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            lines[start : node.end_lineno] = [""] * ((node.end_lineno or start) - start)
    body = re.sub(r"^def reference\(", "def kernel(", "".join(lines), flags=re.M)
    return body.rstrip() + "\n"


def _arg_names(problem: Problem) -> list[str]:
    return [spec.name for spec in problem.inputs]


def _sizes(problem: Problem) -> tuple[list[str], set[str]]:
    """Lines binding each axis name to an input's dimension, and the names bound."""
    lines, bound = [], set()
    for spec in problem.inputs:
        for dim, axis in enumerate(spec.shape):
            if isinstance(axis, str) and _IDENT.match(axis) and axis not in bound:
                lines.append(f"    {axis} = {spec.name}.shape[{dim}]")
                bound.add(axis)
    return lines, bound


def _allocations(problem: Problem, bound: set[str]) -> list[str]:
    first = problem.inputs[0].name
    lines = []
    for spec in problem.outputs:
        dtype = f"torch.{spec.dtype}" if spec.dtype else f"{first}.dtype"
        if _derivable(spec, bound):
            shape = ", ".join(_dim(d) for d in spec.shape) + ("," if len(spec.shape) == 1 else "")
            lines.append(
                f"    {spec.name} = torch.empty(({shape}), dtype={dtype}, device={first}.device)"
            )
        else:  # a size the inputs do not carry: say so rather than guess
            line = f"    {spec.name} = torch.empty_like({first}, dtype={dtype})"
            lines.append(line + "  # TODO: its shape")
    return lines


def _dim(d: str | int) -> str:
    return str(d) if isinstance(d, int) or _IDENT.match(d) else f"int({d})"


def _derivable(spec: TensorSpec, bound: set[str]) -> bool:
    names = {n for d in spec.shape if isinstance(d, str) for n in re.findall(r"[A-Za-z_]\w*", d)}
    return names <= bound


def _returned(problem: Problem) -> str:
    names = [spec.name for spec in problem.outputs]
    return names[0] if len(names) == 1 else ", ".join(names)


def _entry(problem: Problem, launch: list[str]) -> list[str]:
    """`def kernel(<inputs>)`: sizes from the inputs, outputs allocated, `launch`, return."""
    sizes, bound = _sizes(problem)
    return [
        f"def kernel({', '.join(_arg_names(problem))}):",
        *sizes,
        *_allocations(problem, bound),
        *launch,
        f"    return {_returned(problem)}",
        "",
    ]


def _triton(problem: Problem) -> str:
    first, out = problem.inputs[0].name, problem.outputs[0].name
    launch = [
        f"    n_out = {out}.numel()",
        "    BLOCK = 1024",
        f"    _kernel[(triton.cdiv(n_out, BLOCK),)]({first}, {out}, {first}.numel(), n_out, "
        "BLOCK=BLOCK)",
    ]
    return "\n".join(
        [
            "import torch",
            "import triton",
            "import triton.language as tl",
            "",
            "",
            "@triton.jit",
            "def _kernel(in_ptr, out_ptr, n_in, n_out, BLOCK: tl.constexpr):",
            "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
            "    x = tl.load(in_ptr + offs, mask=offs < n_in, other=0.0)",
            f"    # TODO: compute {out} from the inputs (pass every input pointer you need)",
            "    tl.store(out_ptr + offs, x, mask=offs < n_out)",
            "",
            "",
            *_entry(problem, launch),
        ]
    )


_CUDA_SOURCE = r"""
#include <torch/extension.h>

template <typename scalar_t>
__global__ void starter_kernel(const scalar_t* in, scalar_t* out, int64_t n_in, int64_t n_out) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n_out) return;
    // TODO: compute out[i] from the inputs (add a pointer parameter for each one you need)
    out[i] = i < n_in ? in[i] : scalar_t(0);
}

torch::Tensor launch(torch::Tensor in, torch::Tensor out) {
    int64_t n_out = out.numel();
    int threads = 256;
    int64_t blocks = (n_out + threads - 1) / threads;
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, in.scalar_type(), "starter", [&] {
        starter_kernel<scalar_t><<<blocks, threads>>>(
            in.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), in.numel(), n_out);
    });
    return out;
}
"""


def _cuda(problem: Problem) -> str:
    first, out = problem.inputs[0].name, problem.outputs[0].name
    launch = [f"    _compiled().launch({first}.contiguous(), {out})"]
    return "\n".join(
        [
            "import torch",
            "from torch.utils.cpp_extension import load_inline",
            "",
            f"CUDA_SOURCE = r'''{_CUDA_SOURCE}'''",
            "",
            "_module = None",
            "",
            "",
            "def _compiled():",
            "    global _module",
            "    if _module is None:",
            "        _module = load_inline(",
            f'            name="{problem.name}_starter",',
            '            cpp_sources="torch::Tensor launch(torch::Tensor in, torch::Tensor out);",',
            "            cuda_sources=CUDA_SOURCE,",
            '            functions=["launch"],',
            "        )",
            "    return _module",
            "",
            "",
            *_entry(problem, launch),
        ]
    )
