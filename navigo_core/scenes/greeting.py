"""Greeting scene: a friendly hello listing what NaviGo can do; also the fallback "help".

The rule matches a message made only of greetings ("hi", "你好，在吗？") or a
capability question ("what can you do?", "你能做什么"), so "hi, plan a route …"
is not swallowed. As the fallback scene (nothing else matched) it answers an
unclear message with the same list, introduced as help. The list is every
registered scene's ``capability`` line, so a new scene shows up by itself.
"""

from __future__ import annotations

import re

from navigo_core.i18n import t
from navigo_core.scenes.descriptor import GATE_FLAGS, GateContext, GateRule, SceneDescriptor, SceneReply, SceneRoute

_GREET = (r"hi|hello|hey|hiya|howdy|yo|greetings|good (?:morning|afternoon|evening|day)|hi there|hello there"
          r"|hey there|morning|evening|thanks|thank you|"
          r"你好|您好|哈喽|哈啰|嗨|早上好|上午好|中午好|下午好|晚上好|早安|晚安|早|在吗|在不在|在么|谢谢|多谢|打扰了|打扰一下|请问")
_SEP = r"[\s,，。.!！?？~～、]*"
_WHO = r"(?:navigo|nav ?go|bot|there|助手|小助手)?"
GREETING = rf"^{_SEP}(?:{_GREET}){_SEP}{_WHO}(?:{_SEP}(?:{_GREET}){_SEP}{_WHO})*{_SEP}$"
CAPABILITY = (
    rf"^{_SEP}(?:(?:{_GREET}|please|so){_SEP}{_WHO}{_SEP})*(?:what can you do|what do you do|how can you help(?: me)?|what are you|who are you"
    rf"|help|help me|what can i ask(?: you)?|你(?:能|会|可以)(?:做|干|帮我做)?(?:些)?什么|你是谁|有什么功能|能帮我什么|帮助|怎么用){_SEP}$"
)
_IS_GREETING = re.compile(f"{GREETING}|{CAPABILITY}", GATE_FLAGS)


def is_greeting(text: str) -> bool:
    return bool(_IS_GREETING.search(text or ""))


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
    gate=GateRule(patterns=(GREETING, CAPABILITY)),
    route=SceneRoute(intents=("greeting",)),
    handler=handle,
    priority=10,
    fallback=True,
    prompt_fragment="scene.greeting.prompt",
)
