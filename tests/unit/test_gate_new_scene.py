"""The seed's acceptance test: a new scene touches one file.

A "visa" scene is written to a file outside the package, registered from that
file alone, and routed to by ``gate_classify`` (by its rule and by the intent
router), shows up in the greeting's capability list, and leaves again when
unregistered. No file of the package is written. Scene files inside the package
are discovered automatically.
"""

from __future__ import annotations

import hashlib
import pkgutil
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import navigo_core
import navigo_core.scenes as scenes_pkg
from navigo_core.intent.models import IntentItem, IntentResult
from navigo_core.scenes import (
    GateContext,
    SceneRegistry,
    SceneRegistryError,
    gate_classify,
    get_registry,
    handle_message,
    load_scene_file,
    unregister,
)
from navigo_core.scenes.registry import INFRASTRUCTURE

PACKAGE_DIR = Path(navigo_core.__file__).resolve().parent
FIRST_SCENES = {"greeting", "off_topic", "route_planning", "weather", "trip_planning"}

VISA_SCENE = textwrap.dedent('''
    """Visa questions: the only file this scene needs."""
    from navigo_core.scenes import GateRule, SceneDescriptor, SceneReply, SceneRoute

    TEXT = {"en": "Visa rules depend on your passport; check the embassy of {country}.",
            "zh": "签证要求取决于你的护照，请查询{country}使馆的信息。"}


    def handle(message, context):
        lang = context.lang_for(message)
        country = "Japan" if "japan" in message.lower() else ("日本" if "日本" in message else "?")
        return SceneReply(scene_id="visa", text=TEXT[lang].format(country=country), lang=lang,
                          payload={"country": country})


    SCENE = SceneDescriptor(
        scene_id="visa",
        label={"en": "a visa question", "zh": "签证问题"},
        signal_keywords=("visa", "签证"),
        ontology_fields=("country", "nationality"),
        gate=GateRule(patterns=(r"\\bvisas?\\b", r"签证|入境要求"), negatives=(r"\\bvisa (?:card|debit)\\b",)),
        route=SceneRoute(intents=("policy_query",)),
        handler=handle,
        priority=15,
        capability={"en": "Answer visa questions, e.g. “do I need a visa for Japan?”.",
                    "zh": "解答签证问题，例如“去日本需要签证吗？”。"},
        prompt_fragment={"en": "Visa and entry-requirement questions are visa questions.", "zh": "签证和入境要求属于签证问题。"},
    )
''')


class StubRouter:
    def __init__(self, code: str) -> None:
        self.code = code

    def route(self, text: str) -> IntentResult:
        item = IntentItem(intent=self.code, target_agent="InfoAgent", confidence="high", reason="…")
        return IntentResult(intents=[item], primary_intent=self.code, overall_reason="…", source="vector", score=0.8)


def package_fingerprint() -> dict[str, str]:
    """sha256 of every file in navigo_core/ (caches excluded)."""
    return {
        str(p.relative_to(PACKAGE_DIR)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(PACKAGE_DIR.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture
def visa_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "scene_visa.py"
    path.write_text(VISA_SCENE, encoding="utf-8")
    yield path
    if "visa" in get_registry():  # never leak the scene into other tests
        unregister("visa")


def test_a_new_scene_from_its_own_file_is_routed_without_touching_the_package(visa_file: Path) -> None:
    before = package_fingerprint()
    assert "visa" not in get_registry()
    assert gate_classify("Do I need a visa for Japan?", GateContext()).scene_id != "visa"

    scene = load_scene_file(visa_file)
    assert scene.scene_id == "visa" and "visa" in get_registry()
    assert get_registry().source("visa") == str(visa_file.resolve())

    # its rule gate, in both languages
    for message, lang in (("Do I need a visa for Japan?", "en"), ("去日本需要办签证吗", "zh")):
        decision, reply = handle_message(message, GateContext())
        assert (decision.step, decision.scene_id, decision.lang) == ("rule", "visa", lang)
        assert decision.reason == {"en": "Recognised as a visa question from its wording.",
                                   "zh": "根据措辞识别为签证问题。"}[lang]
        assert reply.scene_id == "visa" and reply.payload["country"] in ("Japan", "日本")
    assert gate_classify("Can I pay with my Visa card in Tokyo?", GateContext()).scene_id != "visa"  # negative

    # its intent route
    decision = gate_classify("What papers does the border want in Japan?", GateContext(router=StubRouter("policy_query")))
    assert (decision.step, decision.scene_id) == ("intent", "visa")

    # the greeting lists it; the off-topic gate knows its signal words; the LLM prompt has its hint
    _, hello = handle_message("hello", GateContext())
    assert "Answer visa questions" in hello.text
    assert get_registry().signal_hit("visa for coding bootcamps?") == "visa"
    assert "entry-requirement" in get_registry().prompt_fragments("en")

    # unregistering removes it everywhere
    module_names = [n for n in sys.modules if n.startswith("_navigo_scene_file_scene_visa")]
    assert len(module_names) == 1
    unregister("visa")
    assert "visa" not in get_registry() and module_names[0] not in sys.modules
    assert gate_classify("Do I need a visa for Japan?", GateContext()).scene_id != "visa"
    _, hello = handle_message("hello", GateContext())
    assert "Answer visa questions" not in hello.text

    assert package_fingerprint() == before  # no file of the package was written


def test_a_second_scene_with_the_same_id_is_a_clear_error(visa_file: Path, tmp_path: Path) -> None:
    load_scene_file(visa_file)
    copy = tmp_path / "another_visa.py"
    copy.write_text(VISA_SCENE, encoding="utf-8")
    with pytest.raises(SceneRegistryError, match=r"duplicate scene id 'visa'.*scene_visa\.py.*another_visa\.py"):
        load_scene_file(copy)
    assert not any(n.startswith("_navigo_scene_file_another_visa") for n in sys.modules)
    with pytest.raises(SceneRegistryError, match="duplicate scene id 'greeting'"):
        get_registry().register(get_registry().get("greeting").__class__(
            scene_id="greeting", label="x", handler=lambda m, c: None))


def test_a_file_without_scene_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "not_a_scene.py"
    path.write_text("X = 1\n", encoding="utf-8")
    with pytest.raises(SceneRegistryError, match="defines no SCENE"):
        load_scene_file(path)
    with pytest.raises(SceneRegistryError, match="does not exist"):
        load_scene_file(tmp_path / "missing.py")


def test_package_scene_files_are_discovered_automatically() -> None:
    modules = {m.name for m in pkgutil.iter_modules(scenes_pkg.__path__)}
    scene_modules = {m for m in modules if m not in INFRASTRUCTURE and not m.startswith("_")}
    assert FIRST_SCENES <= scene_modules  # one file per scene, nothing else registered by hand
    fresh = SceneRegistry()
    found = fresh.discover()
    assert {s.scene_id for s in found} == scene_modules and len(fresh) == len(scene_modules)
    assert {fresh.source(s) for s in fresh.ids()} == {f"navigo_core.scenes.{m}" for m in scene_modules}
    assert fresh.discover() == found  # idempotent
    assert FIRST_SCENES <= set(get_registry().ids())


def test_dropping_a_file_into_a_scene_package_is_enough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Discovery over any package: the new file is picked up, infrastructure (``_*``) is not."""
    pkg_name = f"ext_scenes_{tmp_path.name.replace('-', '_')}"
    pkg = tmp_path / pkg_name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "_helpers.py").write_text("HELPER = True\n", encoding="utf-8")
    (pkg / "visa.py").write_text(VISA_SCENE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        registry = SceneRegistry()
        registry.discover()  # the package's own scenes
        found = registry.discover(pkg_name)
        assert [s.scene_id for s in found] == ["visa"]
        decision = gate_classify("签证怎么办理", GateContext(registry=registry))
        assert (decision.step, decision.scene_id) == ("rule", "visa")
        assert "visa" not in get_registry()  # the default registry is untouched
    finally:
        for name in [n for n in sys.modules if n == pkg_name or n.startswith(pkg_name + ".")]:
            del sys.modules[name]
