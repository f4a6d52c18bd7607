"""Friction identification from recorded runs (seed 004's laws are linear in their coefficients
once the joint reactions are known — and the core computes those from (q, q̇, q̈))."""
from .excitation import fourier_excitation
from .fit import FitResult, fit
from .io import load_bag, load_csv

__all__ = ["FitResult", "fit", "fourier_excitation", "load_bag", "load_csv"]
