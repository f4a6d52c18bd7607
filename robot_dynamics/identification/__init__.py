"""Friction identification from recorded runs (seed 004's laws are linear in their coefficients
once the joint reactions are known — and the core computes those from (q, q̇, q̈)).
See docs/identification.md."""
import importlib
import sys
import types

#: imported on first use, so that ``robot-dynamics identify --help`` loads no numba/SciPy
_EXPORTS = {"design_excitation": "excitation", "fourier_excitation": "excitation",
            "FitResult": "fit", "fit": "fit", "FORMATS": "io", "load_bag": "io",
            "load_csv": "io"}
__all__ = ["FORMATS", "FitResult", "design_excitation", "fit", "fourier_excitation", "load_bag",
           "load_csv"]


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """``identification.fit`` stays the function when the submodule ``.fit`` is imported."""

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and _EXPORTS.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
