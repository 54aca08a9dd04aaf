"""Test infrastructure: throwaway Postgres, `chroma run`, `langgraph dev`, a stub OpenAI server."""
