"""The one scene registry.

Discovery: every module of the ``navigo_core.scenes`` package that is not
infrastructure (:data:`INFRASTRUCTURE`, or a name starting with ``_``) is a
scene file and must define a module-level ``SCENE = SceneDescriptor(...)``.
:func:`get_registry` imports them all (``pkgutil.iter_modules``) the first
time it is called, so adding a scene is adding one file.

Scenes from elsewhere (a plug-in, a test) come in with :func:`load_scene_file`
(a ``.py`` file defining ``SCENE``) or :func:`register`. Two different scenes
with one ``scene_id`` (or one resumable ``flow_id``) raise
:class:`SceneRegistryError` naming both sources.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import pkgutil
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from navigo_core.intent.rules import Rule, RuleSet, default_rules
from navigo_core.scenes.descriptor import GATE_FLAGS, GateMode, RouteKind, SceneDescriptor, keyword_regex

PACKAGE = "navigo_core.scenes"
INFRASTRUCTURE = frozenset({"descriptor", "registry", "gate", "evaluate", "defaults"})


class SceneRegistryError(ValueError):
    """A scene could not be registered or found (a developer error, not a user one)."""


class SceneRegistry:
    def __init__(self) -> None:
        self._scenes: dict[str, SceneDescriptor] = {}
        self._sources: dict[str, str] = {}
        self._file_modules: dict[str, str] = {}  # scene_id -> sys.modules name (load_scene_file)
        self._lock = threading.RLock()
        self._discovered: set[str] = set()
        self._version = 0
        self._signal_cache: tuple[int, re.Pattern[str] | None] = (-1, None)
        self._rules_cache: tuple[int, RuleSet | None] = (-1, None)

    # --- registration ---------------------------------------------------------

    def register(self, scene: SceneDescriptor, *, source: str = "") -> SceneDescriptor:
        """Add ``scene``. Registering the very same descriptor again is a no-op."""
        if not isinstance(scene, SceneDescriptor):
            raise SceneRegistryError(f"not a SceneDescriptor: {scene!r} (from {source or 'unknown source'})")
        with self._lock:
            existing = self._scenes.get(scene.scene_id)
            if existing is scene:
                return scene
            if existing is not None:
                raise SceneRegistryError(
                    f"duplicate scene id {scene.scene_id!r}: already registered from "
                    f"{self._sources.get(scene.scene_id) or 'unknown source'}, again from {source or 'unknown source'}"
                )
            for other in self._scenes.values():
                if scene.flow_id and other.flow_id == scene.flow_id and (scene.can_resume or other.can_resume):
                    raise SceneRegistryError(
                        f"scene {scene.scene_id!r} uses flow_id {scene.flow_id!r}, already used by scene {other.scene_id!r}"
                    )
                if scene.fallback and other.fallback:
                    raise SceneRegistryError(
                        f"scene {scene.scene_id!r} is a fallback scene, but {other.scene_id!r} already is (at most one)"
                    )
            self._scenes[scene.scene_id] = scene
            self._sources[scene.scene_id] = source
            self._version += 1
            return scene

    def unregister(self, scene_id: str) -> SceneDescriptor:
        """Remove a scene (and forget the module :meth:`load_scene_file` imported for it)."""
        with self._lock:
            if scene_id not in self._scenes:
                raise SceneRegistryError(f"unknown scene id {scene_id!r}")
            scene = self._scenes.pop(scene_id)
            self._sources.pop(scene_id, None)
            module_name = self._file_modules.pop(scene_id, None)
            if module_name:
                sys.modules.pop(module_name, None)
            self._version += 1
            return scene

    def load_scene_file(self, path: str | Path) -> SceneDescriptor:
        """Import the Python file ``path`` (which defines ``SCENE``) and register its scene."""
        path = Path(path).resolve()
        if not path.is_file():
            raise SceneRegistryError(f"scene file {path} does not exist")
        digest = hashlib.sha1(str(path).encode("utf-8")).hexdigest()[:10]
        module_name = f"_navigo_scene_file_{re.sub(r'[^0-9A-Za-z_]', '_', path.stem)}_{digest}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise SceneRegistryError(f"cannot import scene file {path}")
        module = importlib.util.module_from_spec(spec)
        with self._lock:
            sys.modules[module_name] = module
            try:
                spec.loader.exec_module(module)
                scene = self._scene_of(module, str(path))
                self.register(scene, source=str(path))
            except BaseException:
                sys.modules.pop(module_name, None)
                raise
            self._file_modules[scene.scene_id] = module_name
            return scene

    def discover(self, package: str = PACKAGE) -> list[SceneDescriptor]:
        """Import every scene module of ``package`` and register its ``SCENE`` (once per package).

        Returns the package's scenes by priority.
        """
        with self._lock:
            if package in self._discovered:
                return [s for s in self.scenes() if self._sources.get(s.scene_id, "").startswith(package + ".")]
            pkg = importlib.import_module(package)
            found: list[SceneDescriptor] = []
            for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
                if info.ispkg or info.name in INFRASTRUCTURE or info.name.startswith("_"):
                    continue
                qualified = f"{package}.{info.name}"
                try:
                    module = importlib.import_module(qualified)
                except Exception as exc:
                    raise SceneRegistryError(f"scene module {qualified} failed to import: {exc}") from exc
                found.append(self.register(self._scene_of(module, qualified), source=qualified))
            self._discovered.add(package)
            return sorted(found, key=lambda s: (s.priority, s.scene_id))

    @staticmethod
    def _scene_of(module: object, where: str) -> SceneDescriptor:
        scene = getattr(module, "SCENE", None)
        if not isinstance(scene, SceneDescriptor):
            raise SceneRegistryError(
                f"{where} defines no SCENE = SceneDescriptor(...). Scene files must; infrastructure modules "
                f"are {sorted(INFRASTRUCTURE)} or start with '_'."
            )
        return scene

    # --- lookup -------------------------------------------------------------

    def get(self, scene_id: str) -> SceneDescriptor:
        try:
            return self._scenes[scene_id]
        except KeyError:
            raise SceneRegistryError(f"unknown scene id {scene_id!r}; registered: {', '.join(self.ids())}") from None

    def find(self, scene_id: str) -> SceneDescriptor | None:
        return self._scenes.get(scene_id)

    def source(self, scene_id: str) -> str:
        return self._sources.get(scene_id, "")

    def __contains__(self, scene_id: object) -> bool:
        return scene_id in self._scenes

    def __len__(self) -> int:
        return len(self._scenes)

    def __iter__(self) -> Iterator[SceneDescriptor]:
        return iter(self.scenes())

    @property
    def version(self) -> int:
        """Bumped on every change (caches key on it)."""
        return self._version

    def scenes(self) -> tuple[SceneDescriptor, ...]:
        """All scenes, by priority (smaller first), then id."""
        with self._lock:
            return tuple(sorted(self._scenes.values(), key=lambda s: (s.priority, s.scene_id)))

    def ids(self) -> tuple[str, ...]:
        return tuple(s.scene_id for s in self.scenes())

    def by_flow(self, flow_id: str) -> SceneDescriptor | None:
        """The resumable scene that owns ``flow_id``."""
        return next((s for s in self.scenes() if s.can_resume and s.flow_id == flow_id), None)

    def off_topic_scenes(self) -> tuple[SceneDescriptor, ...]:
        return tuple(s for s in self.scenes() if s.gate.mode is GateMode.OFF_TOPIC)

    def model_scene(self) -> SceneDescriptor | None:
        return next((s for s in self.scenes() if s.route.kind is RouteKind.MODEL), None)

    def fallback_scene(self) -> SceneDescriptor | None:
        return next((s for s in self.scenes() if s.fallback), None)

    def scene_rules(self) -> list[Rule]:
        """The rules that scenes from outside the package bring (their ``GateRule``), in
        scene priority order, as rules of the one rule system (same matching, same
        normalisation). The package's own scenes bring none: their rules are in
        ``intent/data/rules.yaml``."""
        out: list[Rule] = []
        for scene in self.scenes():
            gate = scene.gate
            if gate.mode is not GateMode.CHOICE or not gate.active:
                continue
            keyword = re.compile("|".join(f"(?:{p})" for p in gate.patterns), GATE_FLAGS) if gate.patterns else None
            negative = re.compile("|".join(f"(?:{p})" for p in gate.negatives), GATE_FLAGS) if gate.negatives else None
            intent = scene.route.intents[0] if scene.route.intents else "unknown"
            out.append(Rule(f"{scene.scene_id}.gate", intent, keyword, negative, scene=scene.scene_id,
                            interrupts=bool(gate.interrupts), check=gate.matcher,
                            source=self._sources.get(scene.scene_id) or scene.scene_id))
        return out

    def rules(self) -> RuleSet:
        """The one rule set the gate runs: scene-brought rules first, then ``rules.yaml``."""
        with self._lock:
            version, rules = self._rules_cache
            if version == self._version and rules is not None:
                return rules
            rules = default_rules().extended(self.scene_rules())
            self._rules_cache = (self._version, rules)
            return rules

    def scene_for_intent(self, intent: str) -> SceneDescriptor | None:
        """The first scene, by priority, that declares ``intent``."""
        return next((s for s in self.scenes() if intent in s.route.intents), None)

    def scene_for(self, intent: str, scene_id: str | None = None) -> SceneDescriptor | None:
        """The scene that serves a rule hit: the one it names, else the one declaring its intent."""
        return self.find(scene_id) if scene_id else self.scene_for_intent(intent)

    def signal_pattern(self) -> re.Pattern[str] | None:
        """One regex of every on-topic scene's ``signal_keywords`` (off-topic scenes excluded)."""
        with self._lock:
            version, pattern = self._signal_cache
            if version == self._version:
                return pattern
            words = sorted({kw for s in self.scenes() if s.gate.mode is not GateMode.OFF_TOPIC
                            for kw in s.signal_keywords if kw.strip()}, key=lambda w: (-len(w), w))
            pattern = re.compile("|".join(keyword_regex(w) for w in words), GATE_FLAGS) if words else None
            self._signal_cache = (self._version, pattern)
            return pattern

    def signal_hit(self, text: str) -> str | None:
        pattern = self.signal_pattern()
        m = pattern.search(text) if pattern and text else None
        return m.group(0) if m else None

    def capabilities(self, lang: str) -> list[str]:
        """The "what I can do" lines of every scene that has one, by priority."""
        return [c for c in (s.capability_text(lang) for s in self.scenes()) if c]

    def prompt_fragments(self, lang: str = "en") -> str:
        """Every scene's recognition hint, one per line (for an LLM system prompt)."""
        return "\n".join(f"- {p}" for p in (s.prompt_text(lang) for s in self.scenes()) if p)


# --- the default registry ---------------------------------------------------

_DEFAULT = SceneRegistry()


def get_registry() -> SceneRegistry:
    """The package's registry, with the package's scene files discovered."""
    if PACKAGE not in _DEFAULT._discovered:
        _DEFAULT.discover(PACKAGE)
    return _DEFAULT


def register(scene: SceneDescriptor, *, source: str = "") -> SceneDescriptor:
    return get_registry().register(scene, source=source)


def unregister(scene_id: str) -> SceneDescriptor:
    return get_registry().unregister(scene_id)


def load_scene_file(path: str | Path) -> SceneDescriptor:
    return get_registry().load_scene_file(path)


def get_scene(scene_id: str) -> SceneDescriptor:
    return get_registry().get(scene_id)


def all_scenes() -> tuple[SceneDescriptor, ...]:
    return get_registry().scenes()
