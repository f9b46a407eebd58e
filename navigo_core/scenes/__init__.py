"""Chat scenes and the single gate that picks one for each message.

* :func:`gate_classify` ``(message, context) -> GateDecision`` — the only place
  that decides routing, with the one rule system of ``intent/data/rules.yaml``:
  off-topic → resume → rules → intent router → model route / fallback (see ``gate.py``).
* :func:`classify` ``(text, *, lang=None) -> GateDecision`` — that decision with a fresh default
  context (the settings in force: offline unless an LLM is configured; what a first message would get);
  measure routing through it. It is :func:`navigo_core.scenes.defaults.classify`, the library's
  composition root (settings, providers and gate context built once).
* :func:`handle_message` ``(message, context) -> (GateDecision, SceneReply)`` —
  gate, then the scene's handler; what the Chat page calls.
* :func:`make_gate_context` ``(settings, ...)`` — a :class:`GateContext` with the providers ``settings`` select.
* The registry (``registry.py``): scene files in this package are discovered;
  :func:`register`, :func:`unregister`, :func:`load_scene_file` for others.

How to add a scene: create ``navigo_core/scenes/<name>.py`` defining a handler
``(message, context) -> SceneReply`` and ``SCENE = SceneDescriptor(...)`` with
its intents, priority and (optionally) a capability line; its routing rules go to
``intent/data/rules.yaml`` (``scene: <name>``). A scene from outside the package may
bring a ``GateRule`` in its one file instead; see ``docs/ARCHITECTURE.md``.
"""

from navigo_core.scenes.descriptor import (
    GATE_STEPS,
    INTENT_CODES,
    ActiveFlow,
    GateContext,
    GateDecision,
    GateMode,
    GateRule,
    IntentRouter,
    RouteKind,
    SceneDescriptor,
    SceneReply,
    SceneRoute,
    StepTrace,
    text_of,
)
from navigo_core.scenes.gate import gate_classify, handle_message, is_switch, make_gate_context, run_scene
from navigo_core.scenes.defaults import classify
from navigo_core.scenes.registry import (
    SceneRegistry,
    SceneRegistryError,
    all_scenes,
    get_registry,
    get_scene,
    load_scene_file,
    register,
    unregister,
)

__all__ = [
    "GATE_STEPS", "INTENT_CODES", "ActiveFlow", "GateContext", "GateDecision", "GateMode", "GateRule",
    "IntentRouter", "RouteKind", "SceneDescriptor", "SceneRegistry", "SceneRegistryError", "SceneReply",
    "SceneRoute", "StepTrace", "all_scenes", "classify", "gate_classify", "get_registry",
    "get_scene", "handle_message", "is_switch", "load_scene_file", "make_gate_context", "register", "run_scene",
    "text_of", "unregister",
]
