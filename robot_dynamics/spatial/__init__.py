"""Spatial algebra (6D motion and force vectors, transforms) and the single rigid body (seed 002)."""
