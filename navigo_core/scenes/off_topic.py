"""Off-topic scene: a polite, specific "not here" (what NaviGo can't and can do).

Step 1 of the gate uses this scene's rule: the categories in
``off_topic_rules.yaml`` whose ``gate`` is true (coding, maths homework, stock
tips, recipes). Back-office travel intents (applications, approvals, expense
claims, bookings) have their own scenes now; the categories with ``gate: false``
only word a reply that reaches this scene some other way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from navigo_core.i18n import t
from navigo_core.scenes.descriptor import (
    GATE_FLAGS,
    GateContext,
    GateMode,
    GateRule,
    RouteKind,
    SceneDescriptor,
    SceneReply,
    SceneRoute,
)

RULES_FILE = Path(__file__).with_name("off_topic_rules.yaml")


@dataclass(frozen=True)
class Category:
    name: str
    topic: str  # i18n key
    gate: bool
    patterns: tuple[re.Pattern[str], ...]
    negatives: tuple[re.Pattern[str], ...]
    intents: tuple[str, ...] = ()

    def match(self, text: str) -> bool:
        return any(p.search(text) for p in self.patterns) and not any(n.search(text) for n in self.negatives)


@lru_cache(maxsize=1)
def categories() -> tuple[Category, ...]:
    data = yaml.safe_load(RULES_FILE.read_text(encoding="utf-8")) or {}
    out = []
    for name, spec in data.items():
        try:
            out.append(Category(
                name=name, topic=spec["topic"], gate=bool(spec.get("gate", True)),
                patterns=tuple(re.compile(p, GATE_FLAGS) for p in spec.get("patterns", ())),
                negatives=tuple(re.compile(p, GATE_FLAGS) for p in spec.get("negatives", ())),
                intents=tuple(spec.get("intents", ())),
            ))
        except (KeyError, TypeError, re.error) as exc:
            raise ValueError(f"{RULES_FILE.name}: bad category {name!r}: {exc}") from exc
    return tuple(out)


def category_of(text: str, *, gate_only: bool = False) -> Category | None:
    """The first category matching ``text`` (only gate categories with ``gate_only``)."""
    return next((c for c in categories() if (c.gate or not gate_only) and c.match(text)), None)


def _gate_matcher(text: str) -> str | None:
    cat = category_of(text, gate_only=True)
    return f"category {cat.name}" if cat else None


def _category_of_intent(context: GateContext) -> Category | None:
    intent = context.decision.intent if context.decision else None
    codes = [i.intent for i in intent.intents] if intent else []
    return next((c for code in codes for c in categories() if code in c.intents), None)


def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    cat = category_of(message) or _category_of_intent(context)
    topic = t(cat.topic, lang) if cat else t("scene.off_topic.topic.generic", lang)
    lines = context.scenes().capabilities(lang)
    text = t("scene.off_topic.reply", lang, topic=topic, capabilities="\n".join(f"- {c}" for c in lines))
    return SceneReply(scene_id=SCENE.scene_id, text=text, lang=lang,
                      payload={"topic": cat.name if cat else "other", "capabilities": lines})


SCENE = SceneDescriptor(
    scene_id="off_topic",
    label="scene.off_topic.label",
    signal_keywords=(),
    gate=GateRule(mode=GateMode.OFF_TOPIC, matcher=_gate_matcher),
    route=SceneRoute(kind=RouteKind.OFF_TOPIC, intents=()),
    handler=handle,
    priority=0,
    prompt_fragment="scene.off_topic.prompt",
)
