"""Shared memory between agents: a durable event log with LISTEN/NOTIFY delivery."""
