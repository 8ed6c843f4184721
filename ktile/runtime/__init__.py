"""Running kernels: argument checks, the choice of backend, and (with the backends) toolchain
drivers, the build cache, resource gates and loaders."""


def build_count():
    """This process's kernel builds so far: compiler invocations and cache hits
    (`builds.BuildCount`)."""
    from .builds import build_count as count
    return count()
