"""Hardware: the spec table of every hardware class (`specs`), the record of every device kind
(`kinds`), one backend per vendor (`nvidia`, `amd`, `npu_sim`), device discovery and environment
readings (`detect`). See docs/hardware.md."""
