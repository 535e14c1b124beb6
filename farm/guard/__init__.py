"""The guard against gamed evaluations: static rules over the source (`static`), checks inside
the worker while the submission runs (`runtime`), and plausibility of the reported numbers on the
trusted side (`plausibility`). Rule codes and their reasons: `rules`.
"""

from farm.guard.findings import Finding, rejects
from farm.guard.rules import RULES, Rule

__all__ = ["RULES", "Finding", "Rule", "rejects"]
