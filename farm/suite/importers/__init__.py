"""Importers and exporters of the field's problem formats (see docs/formats.md).

`farm suite import kernelbench|gpumode|flashinfer DIR` writes a pinned suite in our problem
format to user_suite_dir()/<name>/; `farm export` writes flashinfer-trace documents.
"""

FORMATS = ("kernelbench", "gpumode", "flashinfer")
