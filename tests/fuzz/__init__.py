"""Fuzz tests: hypothesis-driven hostile input on every door (HARMONIC_FUZZ=long for more)."""
