"""The three-layer router: L1 rules → L2 nearest seed → L3 LLM, stopping at the first hit.

Every layer that runs is timed (``perf_counter``) and leaves a
:class:`~navigo_core.intent.models.LayerTrace`; the result has the same shape
whichever layer answered. One event per message goes to the store (layer,
intent, score, per-layer latency; the message text only when ``log_text``).
A failing L2 or store never breaks routing; L3 never raises.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING, Any

from navigo_core.config import DEFAULT_CACHE_DIR
from navigo_core.i18n import catalog, detect_lang, t
from navigo_core.intent.classifier import NAME as CLASSIFIER
from navigo_core.intent.classifier import ClassifierIndex
from navigo_core.intent.encoders import EmbeddingsEncoder
from navigo_core.intent.llm_layer import LayerAnswer, LLMIntentLayer
from navigo_core.intent.models import IntentItem, IntentResult, Layer, LayerTrace, Source
from navigo_core.intent.rules import RuleHit, RuleSet, default_rules
from navigo_core.intent.taxonomy import UNKNOWN, get_intent
from navigo_core.intent.vector import VectorIndex, VectorMatch, load_seeds, load_thresholds
from navigo_core.limits import Limits, cut

if TYPE_CHECKING:  # pragma: no cover
    from navigo_core.config import Settings

log = logging.getLogger(__name__)
_SOURCE: dict[Layer, Source] = {"L1": "rule", "L2": "vector", "L3": "llm"}
#: The layer that gave an answer of each source (the Router lab names it).
LAYER_OF_SOURCE: dict[Source, Layer] = {source: layer for layer, source in _SOURCE.items()}


def _ms(start: float) -> float:
    return (perf_counter() - start) * 1000.0


def rule_answer(hit: RuleHit, lang: str) -> LayerAnswer:
    cat = get_intent(hit.intent)
    reason = t("intent.reason.rule", lang, label=cat.label(lang))
    item = IntentItem(intent=cat.code, target_agent=cat.target_agent, confidence="high", reason=reason)
    return LayerAnswer([item], cat.code, False, reason, 1.0, detail=f"rule {hit.rule_id}")


def vector_answer(m: VectorMatch, lang: str) -> LayerAnswer:
    cat = get_intent(m.intent)
    if cat.code == UNKNOWN:
        reason = t("intent.reason.vector_unknown", lang)
    else:
        reason = t("intent.reason.vector", lang, label=cat.label(lang), score=f"{m.score:.2f}")
    item = IntentItem(intent=cat.code, target_agent=cat.target_agent, confidence=m.confidence, reason=reason)
    return LayerAnswer([item], cat.code, False, reason, m.score)


class IntentRouter:
    """``route(text)`` → :class:`IntentResult`.

    ``rules``: the L1 :class:`RuleSet` (None: skip L1). ``l2``: a fitted
    :class:`VectorIndex` (None: skip L2). ``llm``: an :class:`LLMIntentLayer`,
    an ``LLMClient`` (wrapped), or None (offline L3: ``unknown`` with a hint).
    ``store``: a :class:`~navigo_core.store.Store` to record events in (None: no
    events). ``log_text``: store the message text with each event. ``limits``: the input limits messages are
    cut to (None: the limits in force, :func:`navigo_core.limits.current`; :func:`make_router` passes its
    settings' limits).
    """

    def __init__(self, rules: RuleSet | None, l2: VectorIndex | None, llm: Any = None,
                 store: Any = None, log_text: bool = False, limits: Limits | None = None) -> None:
        self.rules = rules
        self.limits = limits
        self.l2 = l2
        self.llm = llm if isinstance(llm, LLMIntentLayer) else LLMIntentLayer(llm)
        self.store = store
        self.log_text = log_text
        catalog()  # load the message catalog now, not inside the first message's timing

    # --- the layers (each returns its answer, or None for a miss, and its trace) ---

    def _l1(self, text: str, lang: str) -> tuple[LayerAnswer | None, LayerTrace]:
        start = perf_counter()
        try:
            outcome = self.rules.check(text) if self.rules is not None else None
            hit, detail = (outcome.hit, outcome.detail) if outcome else (None, "no rules")
        except Exception as exc:  # a broken rule must not break routing
            log.exception("L1 failed")
            hit, detail = None, f"error {type(exc).__name__}: {exc}"
        ms = _ms(start)  # the decision only, not building the result
        answer = rule_answer(hit, lang) if hit is not None else None
        trace = LayerTrace(layer="L1", hit=hit is not None, intent=hit.intent if hit else None,
                           score=1.0 if hit else None, latency_ms=ms, detail=detail)
        return answer, trace

    def _l2(self, text: str, lang: str) -> tuple[LayerAnswer | None, LayerTrace]:
        start = perf_counter()
        match: VectorMatch | None = None
        if self.l2 is None:
            detail = "no L2 index"
        elif not text.strip():
            detail = "empty message"
        else:
            try:
                match = self.l2.nearest(text, lang)
                band = self.l2.thresholds.for_lang(lang)
                floor = self.l2.thresholds.by_intent.get(match.intent)
                also = f" ({match.intent} from {floor:.3f})" if floor is not None and floor < band.threshold else ""
                detail = (f"{self.l2.encoder.describe()}: nearest seed “{match.seed}” → {match.intent}, "
                          f"score {match.score:.3f} vs threshold {band.threshold:.3f}{also}")
            except Exception as exc:  # any L2 error is a miss
                log.warning("L2 failed: %s: %s", type(exc).__name__, exc)
                detail = f"error {type(exc).__name__}: {exc}"
        ms = _ms(start)
        hit = match is not None and match.hit
        answer = vector_answer(match, lang) if hit and match is not None else None
        trace = LayerTrace(layer="L2", hit=hit, intent=match.intent if match else None,
                           score=match.score if match else None, latency_ms=ms, detail=detail)
        return answer, trace

    def _l3(self, text: str, lang: str) -> tuple[LayerAnswer, LayerTrace]:
        start = perf_counter()
        if text.strip():
            answer = self.llm.classify(text, lang)
        else:
            reason = t("intent.reason.empty", lang)
            item = IntentItem(intent=UNKNOWN, target_agent=get_intent(UNKNOWN).target_agent,
                              confidence="low", reason=reason)
            answer = LayerAnswer([item], UNKNOWN, False, reason, 0.0, detail="empty message: no LLM call", hit=False)
        trace = LayerTrace(layer="L3", hit=answer.hit, intent=answer.primary_intent, score=None,
                           latency_ms=_ms(start), detail=answer.detail)
        return answer, trace

    # --- the pipeline ---

    def route(self, text: str) -> IntentResult:
        """L1 → L2 → L3, stopping at the first hit; one event in the store."""
        text = cut(text if isinstance(text, str) else ("" if text is None else str(text)), self.limits)
        lang = detect_lang(text)
        traces: list[LayerTrace] = []
        answer: LayerAnswer | None = None
        layer: Layer = "L3"
        if self.rules is not None:
            answer, tr = self._l1(text, lang)
            traces.append(tr)
            layer = "L1"
        if answer is None and self.l2 is not None and text.strip():
            answer, tr = self._l2(text, lang)
            traces.append(tr)
            layer = "L2"
        if answer is None:
            answer, tr = self._l3(text, lang)
            traces.append(tr)
            layer = "L3"
        result = IntentResult(
            intents=answer.intents, primary_intent=answer.primary_intent, multi_intent=answer.multi_intent,
            overall_reason=answer.overall_reason, source=_SOURCE[layer], score=answer.score,
            latency_ms={tr.layer: tr.latency_ms for tr in traces}, trace=traces, lang=lang,
        )
        self._record(result, layer, text)
        return result

    def explain(self, text: str, *, run_llm: bool = True) -> list[LayerTrace]:
        """Every layer's own decision for ``text`` (for the Router lab): all three run, none
        stops the others, nothing is recorded. ``run_llm=False`` skips the LLM call (L3 then
        reports what the offline layer says)."""
        text = cut(text if isinstance(text, str) else ("" if text is None else str(text)), self.limits)
        lang = detect_lang(text)
        l3 = self if run_llm else IntentRouter(None, None)
        return [self._l1(text, lang)[1], self._l2(text, lang)[1], l3._l3(text, lang)[1]]

    def _record(self, result: IntentResult, layer: Layer, text: str) -> None:
        if self.store is None:
            return
        try:
            self.store.events.record(layer, result.primary_intent, result.score, result.latency_ms, result.lang,
                                     text if self.log_text else None)
        except Exception as exc:  # the event log must never break routing
            log.warning("could not record the routing event: %s", exc)


# --- building routers ----------------------------------------------------------

_lock = threading.Lock()
_offline_index: VectorIndex | None = None
_embedding_indexes: dict[tuple[str, str], VectorIndex] = {}


def offline_index(cache_dir: Path | str | None = DEFAULT_CACHE_DIR) -> VectorIndex:
    """The offline L2: the intent classifier trained on the seeds and the labelled examples, once per
    process (current thresholds attached). The first call builds it, reading the fitted classifier from
    ``cache_dir`` when it is there and current (else fitting it and writing it there; None or "": no cache)."""
    global _offline_index
    with _lock:
        if _offline_index is None:
            folder = Path(cache_dir) if cache_dir else None
            _offline_index = ClassifierIndex(load_seeds(), load_thresholds()[CLASSIFIER], cache_dir=folder)
    return _offline_index.with_thresholds(load_thresholds()[CLASSIFIER])


def embeddings_index(client: Any, model: str) -> VectorIndex:
    """An embeddings index for ``client``/``model`` (seeds embedded once per base URL and model)."""
    key = (str(getattr(client, "base_url", id(client))), model)
    with _lock:
        index = _embedding_indexes.get(key)
        if index is None:
            index = VectorIndex.build(EmbeddingsEncoder(client, model), load_seeds())
            _embedding_indexes[key] = index
    return index.with_thresholds(load_thresholds()["embeddings"])


def clear_caches() -> None:
    """Forget the fitted indexes and the default router (after editing seeds or thresholds)."""
    global _offline_index
    with _lock:
        _offline_index = None
        _embedding_indexes.clear()
    default_router.cache_clear()


def make_router(settings: Settings, *, llm: Any = None, store: Any = None, offline: bool = False) -> IntentRouter:
    """A router configured by ``settings`` (required: the composition roots pass theirs), with their limits.

    ``llm``: an ``LLMClient`` for L3 and the embeddings encoder; None builds one
    from the settings (None without a key). ``offline=True``: no LLM at all.
    The L2 encoder follows ``settings.intent_encoder``: ``tfidf``, ``embeddings``
    (needs an LLM client and ``llm_embedding_model``), or ``auto`` (embeddings
    when both are there, else TF-IDF). If embedding the seeds fails, the router
    falls back to TF-IDF.
    """
    if isinstance(llm, LLMIntentLayer):
        llm = llm.client
    if offline:
        llm = None
    elif llm is None and getattr(settings, "llm_enabled", False):
        from navigo_core.llm import make_llm_client

        llm = make_llm_client(settings)
    choice = getattr(settings, "intent_encoder", "auto")
    model = getattr(settings, "llm_embedding_model", "")
    want_embeddings = choice == "embeddings" or (choice == "auto" and bool(model))
    l2: VectorIndex | None = None
    if want_embeddings and llm is not None and model:
        try:
            l2 = embeddings_index(llm, model)
        except Exception as exc:
            log.warning("embedding the intent seeds failed (%s); using the offline TF-IDF encoder", exc)
    if l2 is None:
        l2 = offline_index(getattr(settings, "cache_dir", DEFAULT_CACHE_DIR))
    return IntentRouter(default_rules(), l2, llm=llm, store=store,
                        log_text=bool(getattr(settings, "intent_log_text", False)), limits=Limits.from_settings(settings))


def _default_router() -> IntentRouter:
    return IntentRouter(default_rules(), offline_index())


class _Cached:
    """A tiny resettable cache for the default offline router (thread-safe)."""

    def __init__(self) -> None:
        self._router: IntentRouter | None = None

    def __call__(self) -> IntentRouter:
        with _lock:
            router = self._router
        if router is None:
            router = _default_router()
            with _lock:
                self._router = router
        return router

    def cache_clear(self) -> None:
        with _lock:
            self._router = None


default_router = _Cached()


def recognize(text: str) -> IntentResult:
    """Classify ``text`` with the offline defaults: rules, TF-IDF seeds, offline L3; no store."""
    return default_router().route(text)


__all__ = ["LAYER_OF_SOURCE", "IntentRouter", "clear_caches", "default_router", "embeddings_index", "make_router",
           "offline_index", "recognize", "rule_answer", "vector_answer"]
