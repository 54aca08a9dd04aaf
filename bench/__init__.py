"""Benchmarks: runnable scripts that print their figures (not tests)."""
