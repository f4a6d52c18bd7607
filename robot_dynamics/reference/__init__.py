"""Readable NumPy twins of the compiled kernels (the specification the kernels are tested against)."""
