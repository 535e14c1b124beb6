"""Kernel evaluation farm: the framework-free core.

What an evaluation *is* lives here: the pinned problem suites, hardware specs and speed-of-light
bounds, the harness that runs inside the sandbox, the guard, the sandbox runners and scoring.
Nothing in this package imports Django.
"""

__version__ = "0.1.0"
