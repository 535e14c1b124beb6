# problem: vector_add
# cheat: reaches the worker's Session class through a mapping and a class pattern on sys.modules (no getattr, no import of the farm) and wraps its window handler so every reported call time is divided by 8
# source: trust round 3 red team (the worker's Session is the submission's; names allow-listed, objects reached by `match`)
# static: none
# expect: REJECTED
"""An honest addition; what it changes is the worker's report of each timing window. A `match`
statement reads attributes by keyword patterns (`object(Session=S)`), which no attribute rule
sees; the Session class is patched, so the instance the worker holds answers with a report whose
times are an eighth of the measured ones."""

import sys

import torch

SHRINK = 8.0


def _shrunk(handler):
    def op_window(self, request):
        reply, tensors = handler(self, request)
        for key in ("times_ms", "event_ms"):
            if isinstance(reply.get(key), list):
                reply[key] = [t / SHRINK for t in reply[key]]
        return reply, tensors

    return op_window


# `python -m farm.harness.worker` runs the worker as __main__; an import of it elsewhere keeps
# its dotted name
for name in ("__main__", "farm.harness.worker"):
    match sys.modules:
        case {**found} if name in found:
            match found[name]:
                case object(Session=object(op_window=handler) as session_class):
                    session_class.op_window = _shrunk(handler)


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a + b
