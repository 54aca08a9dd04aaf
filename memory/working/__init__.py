"""Working and sensory memory: what the agent holds about the conversation in hand.

Context strategies and the prompt composer, the rolling summary, task state, the scratchpad and
its tools, sensory input (cleaning, features, turn kind), tool-output truncation and the hard
brakes.

Names are loaded on first use, so importing one module (`memory.working.tokens`) does not load
the composer, the prompts and the LangChain tool machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.exports import lazy_exports

if TYPE_CHECKING:
    from memory.working.brakes import BrakeLimits, BrakeTrip, check_brakes
    from memory.working.composer import ComposedPrompt, compose_prompt
    from memory.working.context_window import STRATEGIES, build_working_context
    from memory.working.prompt_sections import EvidenceItem, PrefItem
    from memory.working.scratchpad import ScratchpadEntry, ScratchpadOp, apply_op
    from memory.working.scratchpad_tools import make_scratchpad_tools, ops_from_messages
    from memory.working.sensory import (
        InputError,
        SensoryFeatures,
        extract_features,
        normalise_input,
    )
    from memory.working.summary import extractive_summary, refresh_summary
    from memory.working.task_state import (
        TaskState,
        new_task_state,
        record_outcome,
        record_step,
        update_task_from_turn,
    )
    from memory.working.task_tools import finish_task, finished_outcome
    from memory.working.tokens import count_tokens, truncate_to_tokens
    from memory.working.tool_output import truncate_tool_output
    from memory.working.turn_kind import TurnKind, classify_turn
    from memory.working.working_types import SummaryState, WorkingContext

_EXPORTS = {
    "BrakeLimits": "memory.working.brakes",
    "BrakeTrip": "memory.working.brakes",
    "check_brakes": "memory.working.brakes",
    "ComposedPrompt": "memory.working.composer",
    "compose_prompt": "memory.working.composer",
    "STRATEGIES": "memory.working.context_window",
    "build_working_context": "memory.working.context_window",
    "EvidenceItem": "memory.working.prompt_sections",
    "PrefItem": "memory.working.prompt_sections",
    "ScratchpadEntry": "memory.working.scratchpad",
    "ScratchpadOp": "memory.working.scratchpad",
    "apply_op": "memory.working.scratchpad",
    "make_scratchpad_tools": "memory.working.scratchpad_tools",
    "ops_from_messages": "memory.working.scratchpad_tools",
    "InputError": "memory.working.sensory",
    "SensoryFeatures": "memory.working.sensory",
    "extract_features": "memory.working.sensory",
    "normalise_input": "memory.working.sensory",
    "extractive_summary": "memory.working.summary",
    "refresh_summary": "memory.working.summary",
    "TaskState": "memory.working.task_state",
    "new_task_state": "memory.working.task_state",
    "record_outcome": "memory.working.task_state",
    "record_step": "memory.working.task_state",
    "update_task_from_turn": "memory.working.task_state",
    "finish_task": "memory.working.task_tools",
    "finished_outcome": "memory.working.task_tools",
    "count_tokens": "memory.working.tokens",
    "truncate_to_tokens": "memory.working.tokens",
    "truncate_tool_output": "memory.working.tool_output",
    "TurnKind": "memory.working.turn_kind",
    "classify_turn": "memory.working.turn_kind",
    "SummaryState": "memory.working.working_types",
    "WorkingContext": "memory.working.working_types",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "STRATEGIES",
    "BrakeLimits",
    "BrakeTrip",
    "ComposedPrompt",
    "EvidenceItem",
    "InputError",
    "PrefItem",
    "ScratchpadEntry",
    "ScratchpadOp",
    "SensoryFeatures",
    "SummaryState",
    "TaskState",
    "TurnKind",
    "WorkingContext",
    "apply_op",
    "build_working_context",
    "check_brakes",
    "classify_turn",
    "compose_prompt",
    "count_tokens",
    "extract_features",
    "extractive_summary",
    "finish_task",
    "finished_outcome",
    "make_scratchpad_tools",
    "new_task_state",
    "normalise_input",
    "ops_from_messages",
    "record_outcome",
    "record_step",
    "refresh_summary",
    "truncate_to_tokens",
    "truncate_tool_output",
    "update_task_from_turn",
]
