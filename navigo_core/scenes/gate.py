"""``gate_classify``: the single decision point of the chat.

Every routing rule is in the one rule system (``intent/data/rules.yaml``, read by
:mod:`navigo_core.intent.rules`; scenes from other files add theirs through the registry).
Every message goes through the same steps, in this order; the first that decides wins:

1. **off_topic** — an ``off_topic`` category of the rules matches and no on-topic signal keyword
   of any scene is present (a category with ``signal_veto: false`` needs no such check).
2. the rules run once (their hit is needed by the next two steps);
3. **resume** — ``context.active_flow`` names an unfinished flow of a scene with ``can_resume``,
   and the message is not clearly a switch (a ``switch`` phrase such as "never mind" / "算了", or a
   rule hit for another scene that may end this scene's dialogue, see ``interrupts``).
4. **rule** — the hit's scene: the rule's ``scene``, else the first scene (by priority) that
   declares the rule's intent. A rule intent that no scene serves goes to the fallback help.
5. **intent** — ``context.router.route(message)`` (its L2 and L3; its L1 is the same rules, which
   missed); the primary intent (then the others) is mapped to the first scene, by priority, that
   declares it. An answer no layer decided (the offline L3's ``unknown``) maps to nothing.
   Router failures are recorded and skipped.
6. **model** / **fallback** — when nothing matched: the learned layer's best business guess, if it is sure
   enough (:func:`_best_guess`: a lower bar when the message is on-topic); else, if the message is on-topic (the router found a
   known intent other than ``unknown``/``greeting``, or a scene's signal keyword is present) the
   scene whose route is ``model`` (trip planning) takes it; otherwise the ``fallback`` scene
   (greeting, which answers an unclear message with a short "here is what I can do" help).

The decision records the step, the scene, a user-facing reason in the user's language (never an
internal id), the IntentResult (a rule hit's too), the latency, and a per-step trace. Pages call
:func:`handle_message` (or ``gate_classify`` then :func:`run_scene`) and never route by themselves;
:func:`navigo_core.scenes.classify` is the decision with the settings in force (what benchmarks measure).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from navigo_core.config import Settings
from navigo_core.errors import NavigoError
from navigo_core.i18n import t
from navigo_core.limits import Limits, cut
from navigo_core.intent.checks import names_place
from navigo_core.intent.models import IntentResult, LayerTrace
from navigo_core.intent.router import rule_answer
from navigo_core.intent.rules import RuleHit, default_rules, normalize
from navigo_core.scenes.descriptor import (
    ActiveFlow,
    GateContext,
    GateDecision,
    GateStep,
    SceneDescriptor,
    SceneReply,
    StepTrace,
)
from navigo_core.providers.places import PlaceProvider
from navigo_core.providers.selection import Providers
from navigo_core.providers.weather import WeatherProvider

# Intents that do not make an unmatched message "on-topic" by themselves.
_NOT_TOPICAL = frozenset({"unknown", "greeting"})


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def _reason(step: GateStep, scene: SceneDescriptor, lang: str) -> str:
    label = scene.label_text(lang)
    if step == "off_topic":
        return t("scene.reason.off_topic", lang)
    if step == "resume":
        return t("scene.reason.resume", lang, label=label)
    if step == "rule":
        return t("scene.reason.rule", lang, label=label)
    if step == "intent":
        return t("scene.reason.intent", lang, label=label)
    if step == "model":
        return t("scene.reason.model", lang, label=label)
    return t("scene.reason.fallback", lang)


def is_switch(message: str) -> bool:
    """True when the message clearly leaves the current flow (the ``switch`` section of the rules)."""
    return default_rules().is_switch(message or "")


def gate_classify(message: str, context: GateContext) -> GateDecision:
    """Decide which scene answers ``message``. See the module doc for the five steps."""
    started = time.perf_counter()
    registry = context.scenes()
    rules = registry.rules()
    text = cut((message or "").strip(), Limits.from_settings(context.settings) if context.settings is not None else None)
    lang = context.lang_for(text)
    trace: list[StepTrace] = []
    intent: IntentResult | None = None
    left_flow: str | None = None

    def decide(step: GateStep, scene: SceneDescriptor, detail: str, *, guess: bool = False,
               **extra: Any) -> GateDecision:
        reason = t("scene.reason.guess", lang, label=scene.label_text(lang)) if guess else _reason(step, scene, lang)
        return GateDecision(
            scene_id=scene.scene_id, step=step, route=scene.route.kind.value, reason=reason,
            lang=lang, intent=intent, latency_ms=_ms(started), detail=detail, left_flow=left_flow, trace=trace,
            **extra,
        )

    def fallback(detail: str) -> GateDecision:
        scene = registry.fallback_scene() or next(iter(registry.off_topic_scenes()), None)
        if scene is None:
            raise LookupError("no fallback scene is registered")
        trace.append(StepTrace(step="fallback", hit=True, detail=detail))
        return decide("fallback", scene, detail)

    if not text:
        return fallback("empty message")
    norm = normalize(text)

    # (1) off-topic gate
    t0 = time.perf_counter()
    signal = registry.signal_hit(norm)
    off_scene = next(iter(registry.off_topic_scenes()), None)
    category = rules.off_topic_category(norm, gate_only=True) if off_scene is not None else None
    if category is not None and (not signal or not category.signal_veto) and off_scene is not None:
        trace.append(StepTrace(step="off_topic", hit=True, detail=f"category {category.name}", latency_ms=_ms(t0)))
        return decide("off_topic", off_scene, f"category {category.name}")
    trace.append(StepTrace(step="off_topic", hit=False, latency_ms=_ms(t0),
                           detail=f"vetoed by signal {signal!r} (category {category.name})" if category else ""))

    # the rules (L1) run once: the resume gate needs the hit (a hit for another scene is a switch)
    t0 = time.perf_counter()
    outcome, hits = rules.scan(text, norm)
    hit = outcome.hit
    hit_scene = None
    if hit is not None:
        hit, weighed = _weigh(hit, hits, registry, context.router, text)
        hit_scene = registry.scene_for(hit.intent, hit.scene)
        if weighed:
            trace.append(StepTrace(step="rule", hit=False, detail=weighed))
    rule_ms = _ms(t0)

    # (2) resume gate
    t0 = time.perf_counter()
    flow = context.active_flow
    if flow is not None and not flow.done:
        owner = registry.by_flow(flow.flow_id)
        if owner is None:
            trace.append(StepTrace(step="resume", hit=False, detail=f"no resumable scene owns flow {flow.flow_id!r}",
                                   latency_ms=_ms(t0)))
        elif rules.is_switch(norm):
            left_flow = flow.flow_id
            trace.append(StepTrace(step="resume", hit=False, detail="switch phrase", latency_ms=_ms(t0)))
        elif (hit is not None and hit_scene is not None and hit_scene.scene_id != owner.scene_id
              and hit.ends_dialogue_of(owner.scene_id)):
            left_flow = flow.flow_id
            trace.append(StepTrace(step="resume", hit=False, detail=f"switch: rule {hit.rule_id}",
                                   latency_ms=_ms(t0)))
        else:
            trace.append(StepTrace(step="resume", hit=True, detail=flow.flow_id, latency_ms=_ms(t0)))
            return decide("resume", owner, flow.flow_id, flow_id=flow.flow_id)
    else:
        trace.append(StepTrace(step="resume", hit=False, detail="no active flow", latency_ms=_ms(t0)))

    # (3) rules
    if hit is not None:
        intent = _rule_result(hit, lang, rule_ms)
        if hit_scene is not None:
            trace.append(StepTrace(step="rule", hit=True, detail=f"{hit.rule_id} -> {hit_scene.scene_id}",
                                   latency_ms=rule_ms))
            return decide("rule", hit_scene, hit.rule_id)
        trace.append(StepTrace(step="rule", hit=False, detail=f"{hit.rule_id}: no scene serves {hit.intent}",
                               latency_ms=rule_ms))
    else:
        trace.append(StepTrace(step="rule", hit=False, detail=outcome.detail, latency_ms=rule_ms))

    # (4) intent router (its L2 and L3; its L1 is the rules above)
    t0 = time.perf_counter()
    if hit is not None:
        pass  # the rules decided the intent; no scene serves it: on to (5)
    elif context.router is None:
        trace.append(StepTrace(step="intent", hit=False, detail="no router", latency_ms=0.0))
    else:
        try:
            intent = context.router.route(text)
        except Exception as exc:  # a failing router (LLM error, bug) must not break the chat
            trace.append(StepTrace(step="intent", hit=False, detail=f"router failed: {type(exc).__name__}: {exc}",
                                   latency_ms=_ms(t0)))
        else:
            codes = [intent.primary_intent] + [i.intent for i in intent.intents if i.intent != intent.primary_intent]
            codes = codes if intent.decided else [c for c in codes if c != "unknown"]
            for code in codes:
                scene = registry.scene_for_intent(code)
                if scene is not None:
                    trace.append(StepTrace(step="intent", hit=True, detail=f"{code} -> {scene.scene_id}",
                                           latency_ms=_ms(t0)))
                    return decide("intent", scene, code)
            trace.append(StepTrace(step="intent", hit=False, detail=f"no scene for {codes}", latency_ms=_ms(t0)))

    # (5) model route, else fallback
    if hit is not None:  # a rule knew the intent, but no scene does it: say what can be done
        return fallback(f"no scene serves {hit.intent}")
    topical = intent is not None and intent.primary_intent not in _NOT_TOPICAL
    guess = _best_guess(context.router, registry, text, on_topic=topical or bool(signal))
    if guess is not None:
        code, prob, scene = guess
        trace.append(StepTrace(step="intent", hit=True, detail=f"best guess {code} {prob:.2f} -> {scene.scene_id}"))
        return decide("intent", scene, f"guess {code}", guess=True)
    model = registry.model_scene()
    if model is not None and (topical or signal):
        detail = f"intent {intent.primary_intent}" if topical and intent else f"signal {signal!r}"
        trace.append(StepTrace(step="model", hit=True, detail=detail))
        return decide("model", model, detail)
    trace.append(StepTrace(step="model", hit=False, detail="not on-topic" if model else "no model scene"))
    return fallback("nothing matched")


def _l2_probabilities(router: Any, text: str) -> tuple[Any, dict[str, float] | None]:
    """The router's learned layer and its probability of every intent for ``text`` (None without such a
    layer, or when it fails: what it adds to the gate is optional)."""
    l2 = getattr(router, "l2", None)
    proba = getattr(l2, "probabilities", None)
    if proba is None:
        return l2, None
    try:
        return l2, proba(text)
    except Exception:
        return l2, None


def _best_guess(router: Any, registry: Any, text: str, *, on_topic: bool) -> tuple[str, float, SceneDescriptor] | None:
    """When neither a rule nor a sure L2 answer decided, the learned layer's most probable intent
    if it is a business-travel one (the intents its training sentences cover best, ``overridable``)
    with probability ≥ its ``guess`` (``intent/classifier.py``: ``GUESS``): a better guess than handing a claim or an approval question to the
    trip dialogue. A message that is not ``on_topic`` (no signal keyword, no topical router answer) needs the
    layer's ``unsignalled_guess`` for one of its ``unsignalled_intents`` (``UNSIGNALLED_GUESS``): a better answer than the
    help for "改TA事由". An ordinary travel intent (``travel_intents``: a trip wish, sights, a flight, train or hotel search)
    has its own bar, ``travel_guess``, and needs the message on-topic or naming a place (the request parser's
    :func:`~navigo_core.intent.checks.names_place`). None without such a layer or below the bar."""
    l2, p = _l2_probabilities(router, text)
    if not p:
        return None
    top = max(p, key=lambda k: p[k])
    guess = getattr(l2, "guess", None) if on_topic else getattr(l2, "unsignalled_guess", None)
    intents: frozenset[str] = (getattr(l2, "overridable", frozenset()) if on_topic
                               else getattr(l2, "unsignalled_intents", frozenset()))
    if top in getattr(l2, "travel_intents", frozenset()):  # an ordinary trip wish, sights, a search: its own bar,
        guess, intents = getattr(l2, "travel_guess", None), getattr(l2, "travel_intents", frozenset())
        if not on_topic and not names_place(text):  # and a travel word or a place ("who painted the water lilies")
            return None
    if guess is None or top not in intents or p[top] < guess:
        return None
    scene = registry.scene_for_intent(top)
    return (top, p[top], scene) if scene is not None else None


def _weigh(first: RuleHit, hits: list[RuleHit], registry: Any, router: Any, text: str) -> tuple[RuleHit, str]:
    """A rule's guess is not final. When rules for different scenes match one message (a long
    message names several things), the learned L2 layer picks the most probable of the rules'
    candidates; and when that layer is sure of a business intent or booking (``override_targets``, probability
    ≥ its ``override``) for another scene, its intent wins over the rule's, whatever the rule; a *topic* rule (it
    only says that a flight or a hotel is named) is overruled from the lower ``topic_override``, by a business
    intent or by an ordinary travel one of another scene
    (``travel_intents``: "a week in Lisbon in May with my wife, flying out of Boston" names a flight and is a
    trip to plan). Without such a layer, the first rule stands.
    Returns the hit and a trace line (empty when nothing was weighed)."""
    l2 = getattr(router, "l2", None)
    if getattr(l2, "probabilities", None) is None:
        return first, ""

    def scene_of(intent: str, scene: str | None = None) -> str | None:
        found = registry.scene_for(intent, scene)
        return found.scene_id if found is not None else None

    by_scene: dict[str, RuleHit] = {}
    if any(not h.negated for h in hits):  # a negated rule ("don't cancel …") is no candidate beside a plain one
        hits = [h for h in hits if not h.negated]
    for h in hits:
        sid = scene_of(h.intent, h.scene)
        if sid is not None and sid not in by_scene:
            by_scene[sid] = h
    overridable: frozenset[str] = getattr(l2, "overridable", frozenset())
    targets: frozenset[str] = getattr(l2, "override_targets", overridable)
    _, p = _l2_probabilities(router, text)
    if p is None:  # the weighing is optional: a failing L2 leaves the first rule
        return first, ""
    best, detail = first, ""
    if len(by_scene) >= 2:
        best = max(by_scene.values(), key=lambda h: p.get(h.intent, 0.0))
        if p.get(best.intent, 0.0) <= p.get(first.intent, 0.0):
            best = first
        names = ", ".join(f"{h.rule_id} ({p.get(h.intent, 0.0):.2f})" for h in by_scene.values())
        detail = f"rules disagree: {names}; the classifier prefers {best.rule_id}"
    top = max(p, key=lambda k: p[k])
    override = getattr(l2, "override", None)
    if best.topic and (best.intent not in overridable or best.negated):  # a topic or negated rule says less: a lower bar
        override = getattr(l2, "topic_override", override)
    if best.topic and top in getattr(l2, "travel_intents", frozenset()):  # a trip wish that names its flight or hotel
        targets = targets | {top}
    if (override is not None and top != best.intent and top in targets
            and p[top] >= override and scene_of(top) not in (None, scene_of(best.intent, best.scene))):
        detail = f"rule {best.rule_id} ({best.intent} {p.get(best.intent, 0.0):.2f}) overridden: {top} {p[top]:.2f}"
        best = RuleHit(f"{best.rule_id}>l2", top, None, best.interrupts, best.source)
    return best, detail


def _rule_result(hit: RuleHit, lang: str, ms: float) -> IntentResult:
    """The IntentResult of a rule hit (what the router's L1 would say)."""
    answer = rule_answer(hit, lang)
    return IntentResult(intents=answer.intents, primary_intent=answer.primary_intent, multi_intent=False,
                        overall_reason=answer.overall_reason, source="rule", score=1.0, latency_ms={"L1": ms},
                        trace=[LayerTrace(layer="L1", hit=True, intent=hit.intent, score=1.0, latency_ms=ms,
                                          detail=f"rule {hit.rule_id}")], lang=lang)


def run_scene(decision: GateDecision, message: str, context: GateContext) -> SceneReply:
    """Run the decided scene's handler.

    The handler sees ``context.active_flow`` only when the decision resumes it.
    An active flow the message did not leave (an off-topic digression, an empty
    message) stays active when the handler starts no flow of its own. Errors
    with a user message (:class:`NavigoError`) become a reply with that message
    (:meth:`SceneReply.from_error`: a failed turn, unless the error is about the input).
    """
    scene = context.scenes().get(decision.scene_id)
    original = context.active_flow
    context = replace(context, decision=decision,
                      active_flow=original if decision.step == "resume" else None)
    try:
        reply = scene.handler(message, context)
    except NavigoError as exc:
        reply = SceneReply.from_error(scene.scene_id, exc, decision.lang,
                                      flow=original if decision.step == "resume" else None)
    if (reply.flow is None and decision.step != "resume" and decision.left_flow is None
            and original is not None and not original.done and context.scenes().by_flow(original.flow_id)):
        reply = reply.model_copy(update={"flow": original})
    return reply


def handle_message(message: str, context: GateContext) -> tuple[GateDecision, SceneReply]:
    """Gate then handler: what the Chat page calls for each message.

    Store ``reply.flow`` and pass it back as ``active_flow`` on the next turn.
    """
    decision = gate_classify(message, context)
    return decision, run_scene(decision, message, context)


def make_gate_context(settings: Settings, *, router: Any = None, llm: Any = None,
                      weather: WeatherProvider | None = None, places: PlaceProvider | None = None,
                      active_flow: ActiveFlow | str | None = None, lang: str | None = None,
                      registry: Any = None, providers: Providers | None = None) -> GateContext:
    """A GateContext from ``settings`` (required: the composition roots pass theirs, see :mod:`navigo_core.scenes.defaults`).

    * ``llm`` None: ``navigo_core.llm.make_llm_client(settings)`` (None offline, i.e. without an API key).
    * ``router`` None: ``navigo_core.intent.make_router(settings, llm=llm)``.
    * ``providers``: the composition root's bundle (None: ``make_providers(settings)``, see
      :mod:`navigo_core.providers.selection`); ``weather`` and ``places`` not given come from it.
    * ``weather`` None: the bundle's (Open-Meteo with ``WEATHER_ONLINE=true``, else the offline one, and the
      weather scene says no service is configured) — the same provider the planner gets; None when the
      selected one is not configured.
    * ``places`` None: the bundle's (the offline gazetteer by default, and when the selected one is not
      configured).
    """
    from navigo_core.intent import make_router
    from navigo_core.llm import make_llm_client
    from navigo_core.providers.places import GazetteerPlaceProvider
    from navigo_core.providers.selection import make_providers

    if llm is None:
        try:
            llm = make_llm_client(settings)
        except NavigoError:
            llm = None
    if router is None:
        router = make_router(settings, llm=llm)
    bundle = providers if providers is not None else make_providers(settings)
    if weather is None:
        try:
            weather = bundle.weather
        except NavigoError:  # a provider named but not configured: no forecasts, the scene says so
            weather = None
    if places is None:
        try:
            places = bundle.places
        except NavigoError:
            places = GazetteerPlaceProvider()
    flow = ActiveFlow(flow_id=active_flow) if isinstance(active_flow, str) else active_flow
    return GateContext(settings=settings, router=router, llm=llm, weather=weather, places=places, lang=lang,
                       active_flow=flow, registry=registry)
