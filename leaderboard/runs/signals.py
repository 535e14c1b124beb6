"""What the run lifecycle announces to the layers above it (judgement, boards), which it does
not import: receivers are connected in their app's AppConfig.ready()."""

from __future__ import annotations

from django.dispatch import Signal

# A run failed for good (no result, no attempt left); sent inside the transaction that failed
# it, with `run` (locked, saved) and `reason` ("CODE: detail").
run_failed = Signal()
