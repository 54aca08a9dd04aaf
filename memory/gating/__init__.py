"""The write path: the memory gate, privacy filter, conflict policy and per-user write lock."""
