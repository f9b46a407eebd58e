"""What a scene is, and what the gate takes and gives.

A *scene* is one thing the chat can do (greet, plan a route, look up the
weather, …). Everything the gate needs to know about it is declared in one
:class:`SceneDescriptor`: its rule gate (:class:`GateRule`), how the intent
router reaches it (:class:`SceneRoute`), its handler, whether it can resume an
unfinished flow, and its priority.

The gate's inputs and outputs live here too:

* :class:`GateContext` — language, active flow, the injected intent router,
  LLM client and weather provider, settings, and the registry to use.
* :class:`GateDecision` — which step decided, the scene, a user-facing reason
  in the user's language, the :class:`IntentResult` when the router ran, and
  the latency (with a per-step trace for the Router lab).
* :class:`SceneReply` — what a handler answers: text in the user's language, a
  payload for pages (e.g. a ``RouteRequest``-compatible dict), and the flow to
  keep active after this turn.

Texts (``label``, ``capability``, ``prompt_fragment``) are an i18n catalog key,
a ``{"en": ..., "zh": ...}`` mapping (so a scene from outside the package
needs no catalog edit), or a literal string.

Gate regexes are compiled with ``re.IGNORECASE | re.ASCII``: ``\\b`` is then an
ASCII word boundary, which also holds beside Chinese characters (``用python写``).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal, Protocol, Union, runtime_checkable

from pydantic import BaseModel, Field, field_validator

from navigo_core.errors import NavigoError
from navigo_core.i18n import catalog, detect_lang, t
from navigo_core.i18n.markdown import end_lists
from navigo_core.intent.models import IntentResult
from navigo_core.providers.places import PlaceProvider
from navigo_core.providers.weather import WeatherProvider

if TYPE_CHECKING:  # pragma: no cover
    from navigo_core.config import Settings
    from navigo_core.scenes.registry import SceneRegistry

# The intent taxonomy (codes the router emits). SceneRoute.intents must use these.
INTENT_CODES: tuple[str, ...] = (
    "travel_application", "travel_cancel", "travel_modify", "approval_query", "travel_order_query",
    "itinerary_planning", "flight_search", "train_search", "hotel_search", "booking",
    "reimbursement", "policy_query", "attractions_query", "general_info", "greeting", "unknown",
)

GATE_FLAGS = re.IGNORECASE | re.ASCII

Text = Union[str, Mapping[str, str]]
"""An i18n key, a ``{"en": ..., "zh": ...}`` mapping, or a literal string."""


class _SafeDict(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def text_of(value: Text | None, lang: str, /, **params: object) -> str:
    """Render a :data:`Text` in ``lang`` (falls back to English), formatted with ``params``."""
    if not value:
        return ""
    raw: str
    if isinstance(value, Mapping):
        found = value.get(lang) or value.get("en")
        raw = found if found else next(iter(value.values()), "")
    elif value in catalog():
        return t(value, lang, **params)
    else:
        raw = value
    return string.Formatter().vformat(raw, (), _SafeDict(params)) if params else raw


def join_list(items: list[str] | tuple[str, ...], lang: str) -> str:
    """``A, B and C`` / ``A、B和C``."""
    items = [i for i in items if i]
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    if lang == "zh":
        return "、".join(items[:-1]) + "和" + items[-1]
    return ", ".join(items[:-1]) + " and " + items[-1]


def keyword_regex(keyword: str) -> str:
    """A regex for a plain keyword: ASCII words get word boundaries (and an optional plural)."""
    kw = keyword.strip()
    if kw.isascii() and re.fullmatch(r"[\w' -]+", kw):
        return rf"\b{re.escape(kw)}(?:s|es)?\b"
    return re.escape(kw)


def _tuple(value: Any) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def _compile(patterns: tuple[str, ...], what: str) -> tuple[re.Pattern[str], ...]:
    out = []
    for p in patterns:
        try:
            out.append(re.compile(p, GATE_FLAGS))
        except re.error as exc:
            raise ValueError(f"{what}: bad regex {p!r}: {exc}") from exc
    return tuple(out)


# --- gate rule ----------------------------------------------------------------

class GateMode(str, Enum):
    """How a scene takes part in the gate."""

    CHOICE = "choice"  # its rule (if any) takes part in the rule step
    MODEL_ONLY = "model_only"  # never picked by rules: reached by intents or the model route
    OFF_TOPIC = "off_topic"  # the off-topic step's scene (the rules' off_topic section decides)


@dataclass(frozen=True)
class GateRule:
    """The rule a scene from outside the package brings in its one file (package scenes keep their
    rules in ``intent/data/rules.yaml`` and leave this empty).

    A hit is one of ``patterns`` (or ``matcher``) and none of ``negatives``. ``patterns`` and
    ``negatives`` are regexes (checked here; see the module doc for the flags); ``matcher`` is an
    optional callable ``text -> detail | None``. ``interrupts=False`` keeps a hit from ending another
    scene's active flow. The registry compiles it into the one rule set (``registry.rules()``),
    ahead of the file's rules, with the same normalisation.
    """

    patterns: tuple[str, ...] = ()
    negatives: tuple[str, ...] = ()
    mode: GateMode = GateMode.CHOICE
    matcher: Callable[[str], str | None] | None = None
    # False: a hit starts this scene only when no other flow is active (an answer to another scene's
    # question, such as "杭州，下周一到周三", must not be taken away from it)
    interrupts: bool = True
    _compiled: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False, default=())
    _negatives: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "patterns", _tuple(self.patterns))
        object.__setattr__(self, "negatives", _tuple(self.negatives))
        object.__setattr__(self, "mode", GateMode(self.mode))
        object.__setattr__(self, "_compiled", _compile(self.patterns, "GateRule.patterns"))
        object.__setattr__(self, "_negatives", _compile(self.negatives, "GateRule.negatives"))

    @property
    def active(self) -> bool:
        return bool(self._compiled or self.matcher)



# --- route --------------------------------------------------------------------

class RouteKind(str, Enum):
    HANDLER = "handler"  # the handler answers directly (no LLM needed)
    MODEL = "model"  # open-ended: the model path (LLM, clarification); also the gate's step-5 route
    OFF_TOPIC = "off_topic"  # a polite out-of-scope reply


@dataclass(frozen=True)
class SceneRoute:
    """Which intents reach a scene (the rules' hits and the router's answers), and which path serves it.

    ``intents`` are taxonomy codes mapped to this scene; the first scene by priority that declares
    an intent serves it. A rule that needs a particular scene names it (``scene:`` in rules.yaml).
    """

    kind: RouteKind = RouteKind.HANDLER
    intents: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", RouteKind(self.kind))
        object.__setattr__(self, "intents", _tuple(self.intents))
        unknown = [c for c in self.intents if c not in INTENT_CODES]
        if unknown:
            raise ValueError(f"SceneRoute.intents: unknown intent codes {unknown}; known: {', '.join(INTENT_CODES)}")


# --- descriptor -----------------------------------------------------------------

Handler = Callable[[str, "GateContext"], "SceneReply"]
_SCENE_ID = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True, kw_only=True)
class SceneDescriptor:
    """The one declaration of a scene (see the package doc for how to add one).

    * ``scene_id`` — unique, ``snake_case``; never shown to users.
    * ``label`` — what users call it (:data:`Text`), used in reasons.
    * ``signal_keywords`` — plain words that mark a message as on-topic for
      this scene; all scenes' keywords veto the off-topic gate and send
      otherwise unmatched messages to the model route instead of the fallback.
    * ``ontology_fields`` — the slots the scene extracts or asks for.
    * ``gate`` / ``route`` — see :class:`GateRule` and :class:`SceneRoute`.
    * ``handler`` — ``(message, context) -> SceneReply``.
    * ``can_resume`` + ``flow_id`` — the scene runs a multi-turn flow that the
      resume gate continues while ``context.active_flow.flow_id == flow_id``.
    * ``prompt_fragment`` — recognition hint for an LLM system prompt.
    * ``priority`` — order in the rule and intent steps (smaller first).
    * ``capability`` — one line for the "what I can do" list (empty: not listed).
    * ``fallback`` — the scene used when nothing matched (at most one).
    """

    scene_id: str
    label: Text
    handler: Handler
    signal_keywords: tuple[str, ...] = ()
    ontology_fields: tuple[str, ...] = ()
    gate: GateRule = field(default_factory=GateRule)
    route: SceneRoute = field(default_factory=SceneRoute)
    can_resume: bool = False
    prompt_fragment: Text = ""
    priority: int = 100
    flow_id: str | None = None
    capability: Text = ""
    fallback: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.scene_id, str) or not _SCENE_ID.match(self.scene_id):
            raise ValueError(f"scene_id {self.scene_id!r} must be snake_case ([a-z][a-z0-9_]*)")
        if not self.label:
            raise ValueError(f"scene {self.scene_id!r}: label is empty")
        if not callable(self.handler):
            raise ValueError(f"scene {self.scene_id!r}: handler must be a callable (message, context) -> SceneReply")
        if not isinstance(self.gate, GateRule) or not isinstance(self.route, SceneRoute):
            raise ValueError(f"scene {self.scene_id!r}: gate must be a GateRule and route a SceneRoute")
        if self.can_resume and not self.flow_id:
            raise ValueError(f"scene {self.scene_id!r}: can_resume needs a flow_id")
        object.__setattr__(self, "signal_keywords", _tuple(self.signal_keywords))
        object.__setattr__(self, "ontology_fields", _tuple(self.ontology_fields))

    def label_text(self, lang: str) -> str:
        return text_of(self.label, lang)

    def capability_text(self, lang: str) -> str:
        return text_of(self.capability, lang)

    def prompt_text(self, lang: str) -> str:
        return text_of(self.prompt_fragment, lang)


# --- flows, replies, decisions ---------------------------------------------------

class ActiveFlow(BaseModel):
    """An unfinished multi-turn flow (e.g. a clarification) the chat keeps between turns."""

    flow_id: str
    scene_id: str = ""
    slots: dict[str, Any] = Field(default_factory=dict)
    done: bool = False
    turns: int = 0


class SceneReply(BaseModel):
    """A handler's answer.

    ``flow`` is the flow to keep active after this turn (None: no flow is
    active); the chat page stores it and passes it back as
    ``GateContext.active_flow``.
    """

    scene_id: str
    text: str  # in the user's language
    lang: str = "en"
    payload: dict[str, Any] = Field(default_factory=dict)
    asks: bool = False  # the reply asks the user for something
    flow: ActiveFlow | None = None
    # the scene could not do its work (a provider failed, the policy is unreadable): the chat stores the turn as
    # failed and offers Retry. An answer to input that cannot be acted on (no such application) is a reply.
    error: bool = False

    @classmethod
    def from_error(cls, scene_id: str, exc: NavigoError, lang: str, **fields: Any) -> SceneReply:
        """The reply for ``exc``: its message in ``lang``; ``error`` unless the error is about the user's input
        (``exc.about_input``: "no open application matches", a missing field), which no retry would change."""
        return cls(scene_id=scene_id, text=exc.message(lang), lang=lang, error=not exc.about_input, **fields)

    @field_validator("text")
    @classmethod
    def _lists_end(cls, text: str) -> str:
        """A sentence after a list is its own paragraph, never glued to the last bullet (issue 15)."""
        return end_lists(text)


GateStep = Literal["off_topic", "resume", "rule", "intent", "model", "fallback"]
GATE_STEPS: tuple[str, ...] = ("off_topic", "resume", "rule", "intent", "model", "fallback")


class StepTrace(BaseModel):
    """One gate step as it ran (for the Router lab; ``detail`` is internal, not for users)."""

    step: GateStep
    hit: bool
    detail: str = ""
    latency_ms: float = 0.0


class GateDecision(BaseModel):
    scene_id: str
    step: GateStep  # the step that decided
    route: str  # the scene's RouteKind value
    reason: str  # user-facing, in ``lang``; never names internal identifiers
    lang: str
    intent: IntentResult | None = None  # when the router ran
    latency_ms: float = 0.0
    detail: str = ""  # internal: the pattern, category or intent that decided (not for users)
    flow_id: str | None = None  # the flow continued (step "resume")
    left_flow: str | None = None  # an active flow the message switched away from
    trace: list[StepTrace] = Field(default_factory=list)


# --- injected services ---------------------------------------------------------------

@runtime_checkable
class IntentRouter(Protocol):
    def route(self, text: str) -> IntentResult: ...


@dataclass
class GateContext:
    """What the gate and the handlers may use. Build one with ``make_gate_context``.

    ``lang`` None: the language of each message is detected. ``registry`` None:
    the package's default registry. Handlers also find the gate's ``decision``
    here (step, IntentResult), set by ``run_scene``.
    """

    settings: Settings | None = None
    router: IntentRouter | None = None
    llm: Any | None = None
    weather: WeatherProvider | None = None  # the planner's protocol; None or the offline one: no forecasts
    places: PlaceProvider | None = None  # resolves the places scenes read (None: the offline gazetteer)
    lang: str | None = None
    active_flow: ActiveFlow | None = None
    registry: SceneRegistry | None = None
    store: Any | None = None  # the app's Store, for scenes that keep records (applications, claims)
    # the signed-in user the conversation belongs to (their id; the chat service sets the thread's owner): the
    # scenes that keep records act for them only, and without one they refuse (business.applications.user_of)
    user: str | None = None
    user_department: str = ""  # that user's department (stored on the applications they create)
    user_name: str = ""  # that user's display name: the traveller of the applications they create (else their id)
    # what the conversation is about so far, e.g. {"application": "TA-2026-0001"} once one was drafted or
    # named: "改到下周" in that thread changes that application
    subject: dict[str, Any] = field(default_factory=dict)
    decision: GateDecision | None = None  # set by run_scene for the handler (why it was chosen)

    def __post_init__(self) -> None:
        if isinstance(self.active_flow, str):
            self.active_flow = ActiveFlow(flow_id=self.active_flow)
        elif isinstance(self.active_flow, Mapping):
            self.active_flow = ActiveFlow(**self.active_flow)

    def lang_for(self, message: str) -> str:
        if self.lang:
            return self.lang
        default = getattr(self.settings, "default_language", "en") if self.settings else "en"
        return detect_lang(message, default=default)

    def scenes(self) -> SceneRegistry:
        if self.registry is not None:
            return self.registry
        from navigo_core.scenes.registry import get_registry

        return get_registry()
