"""Prompt text only: system rules, section headers, gate, summary and distillation prompts."""

from __future__ import annotations

from prompts.agent import (
    DECISIONS_HEADER,
    DEFAULT_SYSTEM_RULES,
    DEGRADED_NOTE,
    EVIDENCE_HEADER,
    EVIDENCE_LINE,
    MEMORY_ONLY_EVIDENCE_HEADER,
    MEMORY_ONLY_LABEL,
    MEMORY_ONLY_NOTHING,
    MEMORY_ONLY_PREFERENCES_HEADER,
    PREFERENCE_LINE,
    PREFERENCES_HEADER,
    SCRATCHPAD_HEADER,
    SHARED_EVIDENCE_KIND,
    SUMMARY_HEADER,
    SUMMARY_LINE,
    TASK_STATE_HEADER,
    TRUNCATED_NOTE,
)
from prompts.consolidation import (
    DISTIL_RETRY,
    DISTIL_SYSTEM,
    build_distil_request,
)
from prompts.describe_image import (
    DESCRIBE_HINT,
    DESCRIBE_REQUEST,
    DESCRIBE_RETRY,
    DESCRIBE_SYSTEM,
)
from prompts.gate import (
    GATE_CONTEXT_TEMPLATE,
    GATE_REPLY_TEMPLATE,
    GATE_RETRY,
    GATE_SYSTEM,
    GATE_USER_TEMPLATE,
    build_gate_request,
)
from prompts.summarize import (
    SUMMARY_SYSTEM,
    SUMMARY_USER_TEMPLATE,
    build_summary_request,
)

__all__ = [
    "DECISIONS_HEADER",
    "DEFAULT_SYSTEM_RULES",
    "DEGRADED_NOTE",
    "DESCRIBE_HINT",
    "DESCRIBE_REQUEST",
    "DESCRIBE_RETRY",
    "DESCRIBE_SYSTEM",
    "DISTIL_RETRY",
    "DISTIL_SYSTEM",
    "EVIDENCE_HEADER",
    "EVIDENCE_LINE",
    "GATE_CONTEXT_TEMPLATE",
    "GATE_REPLY_TEMPLATE",
    "GATE_RETRY",
    "GATE_SYSTEM",
    "GATE_USER_TEMPLATE",
    "MEMORY_ONLY_EVIDENCE_HEADER",
    "MEMORY_ONLY_LABEL",
    "MEMORY_ONLY_NOTHING",
    "MEMORY_ONLY_PREFERENCES_HEADER",
    "PREFERENCES_HEADER",
    "PREFERENCE_LINE",
    "SCRATCHPAD_HEADER",
    "SHARED_EVIDENCE_KIND",
    "SUMMARY_HEADER",
    "SUMMARY_LINE",
    "SUMMARY_SYSTEM",
    "SUMMARY_USER_TEMPLATE",
    "TASK_STATE_HEADER",
    "TRUNCATED_NOTE",
    "build_distil_request",
    "build_gate_request",
    "build_summary_request",
]
