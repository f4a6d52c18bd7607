"""Time stepping: the Simulator (semi-implicit Euler with stick/slip, limits, energy audit)."""
