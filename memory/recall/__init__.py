"""Recall: the per-user index, BM25 + dense + temporal signals, and the explainable ranking."""
