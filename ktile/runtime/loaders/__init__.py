"""Loaders, one module per vendor: a code object loaded onto a device and launched on the
framework's current stream. Argument packing (`packing.py`) is shared by all of them."""
