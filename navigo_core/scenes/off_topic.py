"""Off-topic scene: a polite, specific "not here" (what NaviGo can't and can do).

The gate's first step decides on the ``off_topic`` section of the rule system
(``intent/data/rules.yaml``: coding, maths homework, stock tips, recipes); the
reply names the category it matched.
"""

from __future__ import annotations

from navigo_core.i18n import t
from navigo_core.intent.rules import OffTopicCategory, default_rules
from navigo_core.scenes.descriptor import (
    GateContext,
    GateMode,
    GateRule,
    RouteKind,
    SceneDescriptor,
    SceneReply,
    SceneRoute,
)


def category_of(text: str, *, gate_only: bool = False) -> OffTopicCategory | None:
    """The first off-topic category matching ``text`` (only gate categories with ``gate_only``)."""
    return default_rules().off_topic_category(text, gate_only=gate_only)


def _category_of_intent(context: GateContext) -> OffTopicCategory | None:
    intent = context.decision.intent if context.decision else None
    codes = [i.intent for i in intent.intents] if intent else []
    return next((c for code in codes for c in default_rules().off_topic if code in c.intents), None)


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
    gate=GateRule(mode=GateMode.OFF_TOPIC),
    # an out-of-scope sentence the router recognised (an L2 seed of "unknown", or the LLM)
    route=SceneRoute(kind=RouteKind.OFF_TOPIC, intents=("unknown",)),
    handler=handle,
    priority=0,
    prompt_fragment="scene.off_topic.prompt",
)
