"""Greeting scene: a friendly hello listing what NaviGo can do; also the fallback "help".

The rule matches a message made only of greetings ("hi", "你好，在吗？") or a
capability question ("what can you do?", "你能做什么"), so "hi, plan a route …"
is not swallowed. As the fallback scene (nothing else matched) it answers an
unclear message with the same list, introduced as help. The list is every
registered scene's ``capability`` line, so a new scene shows up by itself.
"""

from __future__ import annotations

from navigo_core.i18n import t
from navigo_core.intent.rules import default_rules, normalize
from navigo_core.scenes.descriptor import GateContext, SceneDescriptor, SceneReply, SceneRoute

def is_greeting(text: str) -> bool:
    """The whole message is a greeting or a "what can you do" (the ``greeting.only`` / ``greeting.capability``
    rules), not an unclear message that reached the fallback."""
    norm = normalize(text or "")
    rules = default_rules()
    return any(rules.rule(r).matches(norm) for r in ("greeting.only", "greeting.capability", "greeting.thanks"))


def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    lines = context.scenes().capabilities(lang)
    key = "scene.greeting.hello" if is_greeting(message) else "scene.greeting.help"
    text = t(key, lang, capabilities="\n".join(f"- {c}" for c in lines))
    return SceneReply(scene_id=SCENE.scene_id, text=text, lang=lang,
                      payload={"capabilities": lines, "help": key == "scene.greeting.help"})


SCENE = SceneDescriptor(
    scene_id="greeting",
    label="scene.greeting.label",
    signal_keywords=(),
    route=SceneRoute(intents=("greeting",)),
    handler=handle,
    priority=10,
    fallback=True,
    prompt_fragment="scene.greeting.prompt",
)
