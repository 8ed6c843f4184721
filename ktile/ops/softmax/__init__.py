"""Row softmax: kernels, reference, configuration and the op (`op.softmax`).

The folder and the op share the name `softmax`, and Python binds `ktile.ops.softmax` to this
package once any of its modules is imported; so the package itself is callable and forwards to
the op: `ktile.ops.softmax(x, dim=-1, out=None)` works whichever of the two the name holds."""
import sys
import types


class _CallablePackage(types.ModuleType):
    def __call__(self, *args, **kwargs):
        from .op import softmax
        return softmax(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
