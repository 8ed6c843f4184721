"""The `softmax` op folder (config.py, kernels.py, op.py, reference.py). `ktile.ops.softmax` is the
op function, not this package (ktile/ops/__init__.py keeps the folder from binding over it):
reach the folder's modules with `from ktile.ops.softmax import reference` or `from
ktile.ops.softmax.reference import ...`."""
