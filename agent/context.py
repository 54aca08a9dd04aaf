"""Per-run settings of the memory agent (`context_schema`, read in nodes as `runtime.context`).

Every field has a default and a description; Studio shows them as a form. Infrastructure (URLs,
paths) is not here: see `memory.settings`.

Every field also declares who may set it (`SET_BY` in its metadata): the **user** in a run
request (within `BOUNDS`), the **operator** (an assistant's context, which only admins create or
change under auth, or the server's environment), or the **server** (identity, from auth). A
field with no declaration counts as the operator's. `agent.run_context` enforces it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from memory.recall.ranking import RankingWeights
from memory.recall.relevance import RelevanceFloor
from prompts.agent import DEFAULT_SYSTEM_RULES

SharedCategory = Literal[
    "preference", "constraint", "decision", "failure_lesson", "fact", "completed_task"
]


def _env_model() -> str:
    return os.environ.get("MEMORY_AGENT_MODEL", "").strip()


SET_BY = "set_by"
"""Field metadata: who may set the field, `USER`, `OPERATOR` or `SERVER` (`agent.run_context`)."""
BOUNDS = "bounds"
"""Field metadata of a numeric user field: the inclusive range a run request may ask for."""
USER = "user"
OPERATOR = "operator"
SERVER = "server"


def _user(bounds: tuple[float, float] | None, text: str) -> dict[str, Any]:
    # A run request may set it, within `bounds`. Budgets and brakes are bounded above by their
    # default: a user may tighten them, only the operator (assistant context) may loosen them.
    return {"description": text, SET_BY: USER, BOUNDS: bounds}


def _operator(text: str) -> dict[str, Any]:
    # It costs the operator money, changes the system's rules or reaches other users: set by
    # the assistant's configuration (admins only) or server settings, never by a run request.
    return {"description": text, SET_BY: OPERATOR}


def _server(text: str) -> dict[str, Any]:
    # Derived by the server from the verified identity (`agent.identity`) under auth.
    return {"description": text, SET_BY: SERVER}


@dataclass(kw_only=True)
class Context:
    """What a run of the agent can be configured with."""

    model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = field(
        default_factory=_env_model,
        metadata=_operator(
            "Chat model as 'provider:model' (e.g. 'openai:gpt-4o-mini'). Defaults to "
            "MEMORY_AGENT_MODEL. Any OpenAI-compatible server works via OPENAI_BASE_URL. "
            "Empty or 'memory-only': the built-in responder that needs no model and only "
            "reports what recall returned."
        ),
    )
    gate_model: str = field(
        default="",
        metadata=_operator(
            "Model for the memory gate's structured classification and for reading which "
            "earlier memory a kept statement replaces; empty = rules only (no model call per "
            "turn)."
        ),
    )
    vision_model: str = field(
        default="",
        metadata=_operator(
            "Vision-capable model ('provider:model') that describes each image a user sends, "
            "once, so it can be remembered and recalled as text; empty = the user's own words "
            "(or the file name) describe it, marked undescribed."
        ),
    )
    tenant_id: str = field(
        default="default",
        metadata=_server(
            "Tenant of the user. Ignored when custom auth is configured: the authenticated "
            "identity decides."
        ),
    )
    user_id: str = field(
        default="local-dev",
        metadata=_server(
            "Whose memory this run reads and writes. Ignored under custom auth. The default "
            "'local-dev' is for a single developer in `langgraph dev`: set it per user."
        ),
    )
    base_system_prompt: str = field(
        default=DEFAULT_SYSTEM_RULES,
        metadata=_operator(
            "The base system prompt, first in every composed prompt. Replace it per assistant "
            "to change the agent's role; empty restores the default."
        ),
    )
    system_prompt: str = field(
        default="",
        metadata=_operator("Extra system rules, added after the base system prompt."),
    )
    recall_k: int = field(default=6, metadata=_user((0, 20), "How many memories recall injects."))
    similarity_weight: float = field(
        default=RankingWeights().alpha, metadata=_user((0.0, 5.0), "α: weight of dense similarity.")
    )
    lexical_weight: float = field(
        default=RankingWeights().lexical,
        metadata=_user((0.0, 5.0), "Weight of the BM25 lexical signal."),
    )
    recency_weight: float = field(
        default=RankingWeights().beta, metadata=_user((0.0, 5.0), "β: weight of recency (decay).")
    )
    importance_weight: float = field(
        default=RankingWeights().gamma, metadata=_user((0.0, 5.0), "γ: weight of importance.")
    )
    second_hop_weight: float = field(
        default=RankingWeights().hop,
        metadata=_user(
            (0.0, 1.0),
            "Second recall hop: memories sharing a name, place or number with the best results "
            "rise up to this share of their relevance (0 switches it off; 1 helps short "
            "histories whose questions chain facts through names, but costs long ones).",
        ),
    )
    relevance_cosine: float = field(
        default=RelevanceFloor().cosine,
        metadata=_user(
            (-1.0, 1.0),
            "Injection floor: raw query-memory cosine at which evidence counts as relevant on "
            "meaning alone. Evidence below the floor is not injected (rules and profile are).",
        ),
    )
    relevance_threshold: float = field(
        default=RelevanceFloor().threshold,
        metadata=_user(
            (0.0, 1.0),
            "Injection floor: calibrated query-level score (0-1, from the best cosine, word "
            "overlap, coverage of the query's words, and whether one memory stands out) at "
            "which a query counts as about something the user told; then its top results are "
            "injected. 1.0 injects only paraphrase-level matches; 0.0 any query with content "
            "words.",
        ),
    )
    prompt_budget_tokens: int = field(
        default=3000, metadata=_user((500, 3000), "Token budget of the composed prompt.")
    )
    context_strategy: Literal["hybrid", "sliding_window", "summarization", "selective"] = field(
        default="hybrid",
        metadata=_user(
            None,
            "How older turns are kept: hybrid (last 3 raw, 3-10 summarised, older as key "
            "decisions), sliding_window, summarization or selective.",
        ),
    )
    recent_turns: int = field(default=3, metadata=_user((1, 10), "Turns kept verbatim."))
    summary_turns: int = field(
        default=10, metadata=_user((0, 30), "Turns folded into the summary.")
    )
    max_steps_per_task: int = field(
        default=50, metadata=_user((1, 50), "Hard brake: turns/steps allowed in one task.")
    )
    max_retries_per_action: int = field(
        default=3, metadata=_user((0, 3), "Hard brake: retries of one failing action.")
    )
    token_budget_per_task: int = field(
        default=200_000, metadata=_user((1_000, 200_000), "Hard brake: tokens one task may spend.")
    )
    on_brake: Literal["interrupt", "degrade"] = field(
        default="interrupt",
        metadata=_user(None, "When a brake trips: ask a human (interrupt) or answer plainly."),
    )
    require_approval: bool = field(
        default=True,
        metadata=_operator("High-risk memories wait for human approval (an interrupt)."),
    )
    conflict_strategy: Literal["policy", "last_write_wins", "merge", "mark_conflict"] = field(
        default="policy",
        metadata=_operator("How a new memory that contradicts an old one is resolved."),
    )
    # Shared memory between the agents (assistants) of one tenant.
    agent_id: str = field(
        default="",
        metadata=_operator(
            "This agent's name in the tenant's shared memory, the label of what it publishes. "
            "Empty (the default): it publishes nothing, whatever share_categories says."
        ),
    )
    share_categories: list[SharedCategory] = field(
        default_factory=list,
        metadata=_operator(
            "The explicit rule for sharing: categories of what this agent learns from a user "
            "(e.g. failure_lesson, fact) that it publishes to the tenant's shared memory as "
            "low-trust knowledge; completed_task also publishes each task the agent finishes "
            "(its goal and outcome). Empty (the default): nothing of a user's memory is shared. "
            "Takes effect only with an agent_id."
        ),
    )
    recall_shared_k: int = field(
        default=3,
        metadata=_operator(
            "How many memories of the tenant's shared agent memory recall adds beside the "
            "user's own, labelled with the agent that published them (0: none)."
        ),
    )
    tool_output_max_tokens: int = field(
        default=800, metadata=_user((50, 800), "Tool results longer than this are truncated.")
    )

    def ranking(self) -> RankingWeights:
        """The ranking weights for recall, from the defaults overridden by this context."""
        from dataclasses import replace

        return replace(
            RankingWeights(),
            alpha=self.similarity_weight,
            lexical=self.lexical_weight,
            beta=self.recency_weight,
            gamma=self.importance_weight,
            hop=self.second_hop_weight,
            floor=replace(
                RelevanceFloor(), cosine=self.relevance_cosine, threshold=self.relevance_threshold
            ),
        )
