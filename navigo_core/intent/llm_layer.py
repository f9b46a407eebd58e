"""L3: one LLM call that classifies what L1 and L2 could not.

The system prompt (``data/l3_system_prompt.md``) lists the taxonomy's codes,
descriptions and target agents and asks for strict JSON in the result schema
(several intents allowed, ordered by dependency, the most urgent as primary).
The reply is normalised: unknown codes → ``unknown``, target agents from the
taxonomy, confidences outside high/medium/low → low, and reasons that leak an
internal identifier or are not in the user's language are replaced by a
templated one.

Without an LLM client (offline) L3 answers ``unknown`` with a reason that tells
the user what to add. On any LLM failure it does the same and records the error
in the trace detail; it never raises to the caller.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from functools import lru_cache
from string import Template
from typing import Any

from pydantic import BaseModel, Field, field_validator

from navigo_core.errors import LLMError
from navigo_core.i18n import t
from navigo_core.intent.models import Confidence, IntentItem
from navigo_core.intent.taxonomy import AGENTS, DATA_DIR, INTENT_CODES, TAXONOMY, UNKNOWN, get_intent

log = logging.getLogger(__name__)
PROMPT_FILE = DATA_DIR / "l3_system_prompt.md"
_LANG_NAMES = {"en": "English", "zh": "Simplified Chinese"}
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# anything that looks like an internal identifier: an intent code, an agent name,
# snake_case, CamelCase…Agent, a rule id like "flight.search", a file name
_B, _E = r"(?<![A-Za-z0-9_])", r"(?![A-Za-z0-9_])"  # ASCII word edges (\b fails next to Chinese)
_IDENTIFIER = re.compile(
    _B + r"(?:" + "|".join(re.escape(c) for c in INTENT_CODES if "_" in c) + r")" + _E  # (one-word codes are plain words)
    + r"|" + _B + r"(?:" + "|".join(re.escape(a) for a in AGENTS) + r")" + _E
    + r"|" + _B + r"[a-z]+(?:_[a-z0-9]+)+" + _E  # snake_case
    + r"|" + _B + r"[a-z]{2,80}agent" + _E  # camelCase agent names (IGNORECASE; bounded: linear time)
    + r"|" + _B + r"[a-z]+\.[a-z_]{2,}" + _E + r"(?!\.)"  # rule ids like flight.search
    + r"|\.(?:py|ya?ml|md|json)" + _E,
    re.IGNORECASE,
)


class LLMIntent(BaseModel):
    """One item of the model's reply (lenient strings: normalised afterwards)."""

    intent: str
    target_agent: str
    confidence: str
    reason: str


MAX_INTENTS = 4  # a message names a few intents; a longer list is a model repeating itself


class LLMIntentReply(BaseModel):
    """The JSON the model must return (same shape as the router's public result). The list is capped
    (``maxItems`` in the schema, so a grammar-constrained server cannot run on; a longer list is cut)."""

    intents: list[LLMIntent] = Field(max_length=MAX_INTENTS)
    primary_intent: str
    multi_intent: bool
    overall_reason: str

    @field_validator("intents", mode="before")
    @classmethod
    def _cap(cls, v: Any) -> Any:
        return v[:MAX_INTENTS] if isinstance(v, list) else v


@dataclass
class LayerAnswer:
    """What a layer decided, before the router adds timing and the trace."""

    intents: list[IntentItem]
    primary_intent: str
    multi_intent: bool
    overall_reason: str
    score: float
    detail: str = ""
    hit: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


def leaks_identifier(text: str) -> bool:
    """True when ``text`` names an internal identifier (code, agent, rule id, file)."""
    return bool(_IDENTIFIER.search(text or ""))


def _fits_lang(text: str, lang: str) -> bool:
    has_cjk = bool(_CJK.search(text))
    return has_cjk if lang == "zh" else not has_cjk


def user_reason(reason: str, lang: str, fallback: str) -> str:
    """``reason`` when it is usable for users in ``lang``, else ``fallback``."""
    reason = " ".join((reason or "").split())
    if not reason or leaks_identifier(reason) or not _fits_lang(reason, lang):
        return fallback
    return reason[:300]


def _confidence(value: str) -> Confidence:
    v = (value or "").strip().lower()
    return v if v in ("high", "medium") else "low"  # type: ignore[return-value]


@lru_cache(maxsize=4)
def system_prompt(lang: str) -> str:
    lines = [f"- `{c.code}` — {c.describe('en')} / {c.describe('zh')} — agent `{c.target_agent}`" for c in TAXONOMY]
    return Template(PROMPT_FILE.read_text(encoding="utf-8")).substitute(
        taxonomy="\n".join(lines), language=_LANG_NAMES.get(lang, "English"))


def offline_answer(lang: str, detail: str) -> LayerAnswer:
    """``unknown`` with a reason telling the user what to add (no LLM, or it failed)."""
    key = "intent.reason.llm_failed" if detail.startswith("LLM error") else "intent.reason.offline"
    reason = t(key, lang)
    item = IntentItem(intent=UNKNOWN, target_agent=get_intent(UNKNOWN).target_agent, confidence="low", reason=reason)
    return LayerAnswer([item], UNKNOWN, False, reason, 0.0, detail=detail, hit=False)


class LLMIntentLayer:
    """L3 over an :class:`~navigo_core.llm.LLMClient` (or None: offline)."""

    def __init__(self, client: Any | None = None, *, strategy: str | None = None) -> None:
        self.client = client
        self.strategy = strategy

    @property
    def online(self) -> bool:
        return self.client is not None

    def classify(self, text: str, lang: str) -> LayerAnswer:
        """Never raises: offline or failing LLM → ``unknown`` with a user-facing reason."""
        if self.client is None:
            return offline_answer(lang, "offline: no LLM configured")
        messages = [{"role": "system", "content": system_prompt(lang)}, {"role": "user", "content": text}]
        try:
            reply = self.client.structured(messages, LLMIntentReply, strategy=self.strategy)
        except LLMError as exc:
            log.warning("L3 intent call failed: %s", exc.code)
            return offline_answer(lang, f"LLM error {type(exc).__name__} ({exc.code}): {exc.params.get('detail', '')}".strip())
        except Exception as exc:  # a bug or an unexpected client: still never raise to the caller
            log.exception("L3 intent call raised unexpectedly")
            return offline_answer(lang, f"LLM error {type(exc).__name__}: {exc}")
        return self.normalise(reply, lang)

    @staticmethod
    def normalise(reply: LLMIntentReply, lang: str) -> LayerAnswer:
        items: list[IntentItem] = []
        seen: set[str] = set()
        for raw in reply.intents:
            cat = get_intent(raw.intent)
            if cat.code in seen:
                continue
            seen.add(cat.code)
            fallback = t("intent.reason.llm_default", lang, label=cat.label(lang))
            items.append(IntentItem(intent=cat.code, target_agent=cat.target_agent,
                                    confidence=_confidence(raw.confidence) if cat.code != UNKNOWN else "low",
                                    reason=user_reason(raw.reason, lang, fallback)))
        if len(items) > 1:  # "unknown" next to real intents adds nothing
            items = [i for i in items if i.intent != UNKNOWN] or items[:1]
        if not items:
            return offline_answer(lang, "LLM reply held no intents")
        codes = [i.intent for i in items]
        primary = get_intent(reply.primary_intent).code
        if primary not in codes:
            primary = codes[0]
        multi = len(items) > 1
        if multi:
            fallback = t("intent.reason.multi", lang, labels=("、" if lang == "zh" else "; ").join(
                get_intent(c).label(lang) for c in codes))
        else:
            fallback = items[0].reason
        detail = f"LLM: {', '.join(codes)} (primary {primary})"
        return LayerAnswer(items, primary, multi, user_reason(reply.overall_reason, lang, fallback), 0.0,
                           detail=detail, hit=True)


__all__ = ["LLMIntent", "LLMIntentLayer", "LLMIntentReply", "LayerAnswer", "leaks_identifier",
           "offline_answer", "system_prompt", "user_reason"]
