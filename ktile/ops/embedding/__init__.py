"""`embedding`: the op folder (kernels.py, reference.py, op.py). `ktile.ops.embedding` names both this
package and the op function, so the package is callable: `ktile.ops.embedding(...)` is
`ktile.ops.embedding.op.embedding(...)`, and `ktile.ops.embedding.reference` stays the reference module."""
import sys
import types


class _OpPackage(types.ModuleType):
    def __call__(self, *args, **kwargs):
        from .op import embedding
        return embedding(*args, **kwargs)


sys.modules[__name__].__class__ = _OpPackage
