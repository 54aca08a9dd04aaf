"""Governed, layered memory: storage, recall, gate, working memory, consolidation."""
