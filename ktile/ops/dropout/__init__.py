"""`dropout`: the op folder (kernels.py, reference.py, op.py). `ktile.ops.dropout` names both this
package and the op function, so the package is callable: `ktile.ops.dropout(...)` is
`ktile.ops.dropout.op.dropout(...)`, and `ktile.ops.dropout.reference` stays the reference module."""
import sys
import types


class _OpPackage(types.ModuleType):
    def __call__(self, *args, **kwargs):
        from .op import dropout
        return dropout(*args, **kwargs)


sys.modules[__name__].__class__ = _OpPackage
