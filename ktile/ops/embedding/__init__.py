"""The `embedding` op folder (indices.py, kernels.py, op.py, reference.py). `ktile.ops.embedding`
is the op function, not this package (ktile/ops/__init__.py keeps the folder from binding over
it): reach the folder's modules with `from ktile.ops.embedding import reference` or `from
ktile.ops.embedding.reference import ...`."""
