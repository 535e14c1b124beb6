"""Installing the counting hooks into the Triton interpreter.

`install_hooks(ledger_of)` replaces, in `triton.runtime.interpreter`:
- the op builder (module global and the semantic's reference) by a counting subclass;
- `GridExecutor.__call__` by a launch loop that counts per program instance, checks the grid
  cap before running anything and the wall clock between programs;
- the fast-path reductions and scans (they bypass the builder) by counting wrappers, and the
  reductions' result packing by a bf16-aware one.
It returns the table of everything it installed, which `integrity` checks after each call.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import torch
from triton.runtime import interpreter as interp
from triton.tools.tensor_descriptor import TensorDescriptor

from farm.hardware.npu_sim.builder import count_reduction, make_builder, reduce_to_tensor
from farm.hardware.npu_sim.ledger import Ledger
from farm.hardware.npu_sim.limits import SimLimitExceeded
from farm.hardware.npu_sim.memory import AddressMap

LedgerOf = Callable[[], "Ledger | None"]


def _tensors(values: Any) -> list[torch.Tensor]:
    """Every tensor in a launch's arguments, in argument order."""
    found: list[torch.Tensor] = []
    for v in values:
        if isinstance(v, torch.Tensor):
            found.append(v)
        elif isinstance(v, TensorDescriptor):
            found.extend(_tensors([v.base]))
        elif isinstance(v, (tuple, list)):
            found.extend(_tensors(v))
        elif hasattr(v, "base") and isinstance(v.base, torch.Tensor):  # TensorWrapper
            found.append(v.base)
    return found


def _limit_from(exc: BaseException) -> SimLimitExceeded | None:
    """The SimLimitExceeded an interpreter error wraps, if any."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, SimLimitExceeded):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _run_grid(executor: Any, builder: Any, led: Ledger, args: dict, grid: tuple) -> None:
    """Run every program instance of a launch, counting each (grid order x, y, z)."""
    name = getattr(executor.fn, "__name__", "kernel")
    programs = grid[0] * grid[1] * grid[2]
    if programs > led.limits.max_programs:
        raise led.trip(
            SimLimitExceeded("max_programs", programs, led.limits.max_programs, f"launch {name}")
        )
    builder.set_grid_dim(*grid)
    for x in range(grid[0]):
        for y in range(grid[1]):
            for z in range(grid[2]):
                led.begin_program()
                builder.set_grid_idx(x, y, z)
                executor.fn(**args)
                led.end_program()
    led.end_launch(name, grid)


def make_executor_call(ledger_of: LedgerOf, builder: Any, check: Callable[[], None]) -> Any:
    """A replacement for `GridExecutor.__call__` that counts the launch."""

    def __call__(self, *args_dev, **kwargs):
        check()
        led = ledger_of()
        spec = inspect.getfullargspec(self.fn)
        kwargs = {k: v for k, v in kwargs.items() if k in spec.args or k in spec.kwonlyargs}
        if led is not None:
            led.triton_depth += 1
        try:
            args_hst, kwargs_hst = self._init_args_hst(args_dev, kwargs)
            for hook in self.pre_run_hooks:
                hook(*args_hst, **kwargs_hst)
            scope = interp._patch_lang(self.fn)
            try:
                call = inspect.getcallargs(self.fn, *args_hst, **kwargs_hst)
                call = {
                    k: v if k in self.constexprs else interp._implicit_cvt(v)
                    for k, v in call.items()
                }
                grid = self.grid(call) if callable(self.grid) else self.grid
                grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
                if led is not None:
                    led.begin_launch(AddressMap(_tensors([*args_hst, *kwargs_hst.values()])))
                    _run_grid(self, builder, led, call, grid)
                else:
                    _run_grid_uncounted(self, builder, call, grid)
            except Exception as e:
                limit = _limit_from(e)
                if limit is not None:
                    raise limit from None
                raise interp.InterpreterError(repr(e)) from e
            finally:
                scope.restore()
            self._restore_args_dev(args_dev, args_hst, kwargs, kwargs_hst)
        finally:
            if led is not None:
                led.triton_depth -= 1

    return __call__


def _run_grid_uncounted(executor: Any, builder: Any, args: dict, grid: tuple) -> None:
    builder.set_grid_dim(*grid)
    for x in range(grid[0]):
        for y in range(grid[1]):
            for z in range(grid[2]):
                builder.set_grid_idx(x, y, z)
                executor.fn(**args)


def _counted(ledger_of: LedgerOf, method: Callable[..., Any], weight: int) -> Callable[..., Any]:
    def wrapper(self, input, *rest, **kw):
        first = input[0] if isinstance(input, tuple) else input
        count_reduction(ledger_of, first.handle.data, weight)
        return method(self, input, *rest, **kw)

    wrapper.__name__ = method.__name__
    return wrapper


def install_hooks(ledger_of: LedgerOf, check: Callable[[], None]) -> dict[tuple[Any, str], Any]:
    """Install the hooks; return {(owner, attribute): installed object} for integrity checks."""
    builder = make_builder(ledger_of)
    installed: dict[tuple[Any, str], Any] = {
        (interp, "interpreter_builder"): builder,
        (interp.interpreter_semantic, "builder"): builder,
        (interp.GridExecutor, "__call__"): make_executor_call(ledger_of, builder, check),
        (interp.ReduceOps, "sum"): _counted(ledger_of, interp.ReduceOps.sum, 1),
        (interp.ReduceOps, "min_max"): _counted(ledger_of, interp.ReduceOps.min_max, 1),
        (interp.ScanOps, "cumsum"): _counted(ledger_of, interp.ScanOps.cumsum, 1),
        (interp.ScanOps, "cumprod"): _counted(ledger_of, interp.ScanOps.cumprod, 1),
        (interp.ReduceScanOpInterface, "to_tensor"): reduce_to_tensor(
            interp.ReduceScanOpInterface.to_tensor
        ),
    }
    for (owner, attr), obj in installed.items():
        setattr(owner, attr, obj)
    return installed
