"""The `dropout` op folder (kernels.py, op.py, reference.py). `ktile.ops.dropout` is the op
function, not this package (ktile/ops/__init__.py keeps the folder from binding over it): reach
the folder's modules with `from ktile.ops.dropout import reference` or `from
ktile.ops.dropout.reference import ...`."""
