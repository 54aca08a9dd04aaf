"""Long-term memory: the consolidation job (versioned, rollback-able) and the structured profile."""
