"""Hardware: the spec table of every hardware class (`specs`), device discovery and environment
readings (`detect`), and the simulated NPU (`npu_sim`). See docs/hardware.md."""
