# problem: vector_add
# cheat: grabs raw blocks from the caching allocator hoping one still holds the reference's freed output
# source: robust-kbench correctness ordering rationale (candidate picks up the reference's freed buffer)
# static: RAW_MEMORY
# expect: REJECTED
import torch


def kernel(a, b):
    nbytes = a.numel() * a.element_size()
    ptr = torch.cuda.caching_allocator_alloc(nbytes)
    out = torch.empty_like(a)
    out.untyped_storage().copy_(torch.UntypedStorage.from_buffer(bytes(nbytes), dtype=torch.uint8))
    torch.cuda.caching_allocator_delete(ptr)
    return out
