"""Running kernels: argument checks, the choice of backend, and (with the backends) toolchain
drivers, the build cache, resource gates and loaders."""
