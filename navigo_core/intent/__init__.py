"""Three-layer intent routing: L1 keyword rules → L2 nearest seed sentence → L3 LLM.

Quick use::

    from navigo_core.intent import recognize
    r = recognize("帮我订一张明天去北京的机票")
    r.primary_intent, r.source          # ("flight_search", "rule")
    r.public_dict()                     # intents / primary_intent / multi_intent / overall_reason / source / score / latency_ms

Configured routers (LLM for L3, embeddings encoder, event store)::

    router = make_router(settings, store=store)
    router.route(text)

Data lives in ``navigo_core/intent/data/``: taxonomy.yaml (16 intents),
rules.yaml (L1, order = priority), seeds.yaml (L2 corpus, avoids L1 words),
thresholds.yaml (per encoder; written by ``python -m navigo_core intent calibrate``),
l3_system_prompt.md (L3).
"""

from navigo_core.intent.models import IntentItem, IntentResult, LayerTrace
from navigo_core.intent.router import IntentRouter, clear_caches, make_router, recognize
from navigo_core.intent.taxonomy import (
    AGENTS,
    INTENT_CODES,
    TAXONOMY,
    UNKNOWN,
    IntentCategory,
    get_intent,
    normalize_code,
    target_agent,
)

__all__ = [
    "AGENTS",
    "INTENT_CODES",
    "TAXONOMY",
    "UNKNOWN",
    "IntentCategory",
    "IntentItem",
    "IntentResult",
    "IntentRouter",
    "LayerTrace",
    "clear_caches",
    "get_intent",
    "make_router",
    "normalize_code",
    "recognize",
    "target_agent",
]
