"""Friction identification from recorded runs (seed 004's laws are linear in their coefficients
once the joint reactions are known — and the core computes those from (q, q̇, q̈)).
See docs/identification.md."""
from .excitation import design_excitation, fourier_excitation
from .fit import FitResult, fit
from .io import FORMATS, load_bag, load_csv

__all__ = ["FORMATS", "FitResult", "design_excitation", "fit", "fourier_excitation", "load_bag",
           "load_csv"]
