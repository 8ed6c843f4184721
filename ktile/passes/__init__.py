"""The pass pipeline (placeholder until the passes land)."""


def run_pipeline(module, target):
    return []
