"""Toolchain drivers, one module per vendor: the compiler command, its identity for the cache
key, its errors turned into kernel errors, and its resource report. `ktile.runtime.build`
picks one from its table by `target.vendor`."""
