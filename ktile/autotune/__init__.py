"""The tuner (docs/tuning.md): per op and shape bucket, candidate routes from the op's own
table (`spaces`), built in parallel and gated before any timing (`candidates`), timed
interleaved (`timing`), decided by a one-sided Mann-Whitney U test and a minimum effect
(`stats`), written as the package's routing table (`result`, `ktile.ops._shipped`).

    from ktile.autotune import tune
    result = tune("rms_norm", "sm_90a", [(1, 4096), (512, 4096)])
"""
from __future__ import annotations


def tune(*args, **kwargs):
    from .tuner import tune as run
    return run(*args, **kwargs)
