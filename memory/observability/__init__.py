"""Metrics: storage size, counts, latency histogram, cache hit rate, hit and pollution rate."""
