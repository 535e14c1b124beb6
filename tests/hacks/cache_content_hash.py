# problem: softmax
# cheat: fingerprints the input bytes and replays an earlier output when the same values come back (fixed seeds)
# source: KernelGuard OUTPUT_REPLAY_CACHE (content-keyed caches); GPU MODE fixed-seed reuse reports
# static: OUTPUT_REPLAY_CACHE
# expect: REJECTED
import hashlib

import torch

_answers = {}


def kernel(x):
    digest = hashlib.blake2b(x.detach().cpu().numpy().tobytes(), digest_size=16).hexdigest()
    if digest not in _answers:
        _answers[digest] = torch.softmax(x.float(), dim=-1).to(x.dtype)
    return _answers[digest]
