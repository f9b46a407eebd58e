"""The one result type every intent layer emits (L1 rules, L2 vectors, L3 LLM)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Confidence = Literal["high", "medium", "low"]
Source = Literal["rule", "vector", "llm"]
Layer = Literal["L1", "L2", "L3"]


class IntentItem(BaseModel):
    intent: str  # a taxonomy code; unknown codes are mapped to "unknown"
    target_agent: str
    confidence: Confidence
    reason: str  # for users, in the user's language; never names internal identifiers


class LayerTrace(BaseModel):
    """What one layer decided for one message (every layer that ran gets one)."""

    layer: Layer
    hit: bool
    intent: str | None = None
    score: float | None = None
    latency_ms: float
    detail: str = ""  # e.g. the rule id or the nearest seed sentence (for the Router lab, not for users)


class IntentResult(BaseModel):
    intents: list[IntentItem]
    primary_intent: str
    multi_intent: bool = False
    overall_reason: str
    source: Source  # the layer that answered
    score: float  # that layer's score (rules: 1.0; vectors: the top-1 cosine; LLM: 0.0, it has none)
    latency_ms: dict[Layer, float] = Field(default_factory=dict)  # per layer that ran
    trace: list[LayerTrace] = Field(default_factory=list)
    lang: str = "en"

    @property
    def decided(self) -> bool:
        """The layer that answered decided (the offline L3's ``unknown`` is an answer, not a decision)."""
        return bool(self.trace) and self.trace[-1].hit

    def public_dict(self) -> dict[str, Any]:
        """The seed's JSON form plus source, score and latency."""
        return self.model_dump(mode="json", exclude={"trace"})
