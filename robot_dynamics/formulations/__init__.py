"""The seeds' other formulations of the equations of motion, on the same Model (cross-checks)."""
