"""Prompt text only: system rules, section headers, gate, summary and distillation prompts."""
