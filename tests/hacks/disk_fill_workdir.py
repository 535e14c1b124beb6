# problem: vector_add
# cheat: fills the host disk through the work dir on its first call (one large array written again and again through numpy's tofile, a writer no file rule names)
# source: trust round 2 red team (six 1 GiB files filled the host disk through the work directory)
# static: none
# expect: RUNTIME_ERROR
"""Writes 256 MiB files into its working directory until the write fails; the work dir is a
tmpfs of Limits.workdir_bytes, so it fails at that cap (ENOSPC) instead of at a full disk."""

import numpy

import torch



def kernel(a, b):
    block = numpy.zeros(256 << 20, dtype=numpy.uint8)
    for i in range(12):  # 3 GiB: over the 2 GiB cap, bounded where no cap applies
        block.tofile(f"fill-{i}.bin")
    return torch.add(a, b)
