"""The 16-intent taxonomy: codes, default target agents and descriptions.

The data lives in ``data/taxonomy.yaml``. Every layer (rules, vectors, LLM)
refers to intents by code only through this module; :func:`get_intent` maps
any unknown or empty code to ``unknown`` and never raises, so a typo or a new
code from the LLM degrades safely to the MasterAgent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from navigo_core.safe_yaml import read_yaml


DATA_DIR = Path(__file__).parent / "data"
TAXONOMY_FILE = DATA_DIR / "taxonomy.yaml"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class IntentCategory:
    code: str
    target_agent: str
    description: dict[str, str] = field(hash=False, compare=False)

    def describe(self, lang: str = "en") -> str:
        return self.description.get(lang) or self.description["en"]

    def label(self, lang: str = "en") -> str:
        """The user-facing name of this kind of request (from the i18n catalog)."""
        from navigo_core.i18n import t

        return t(f"intent.label.{self.code}", lang)


@lru_cache(maxsize=1)
def _load() -> tuple[IntentCategory, ...]:
    data = read_yaml(TAXONOMY_FILE)
    items = tuple(
        IntentCategory(code=e["code"], target_agent=e["target_agent"], description=dict(e["description"]))
        for e in data["intents"]
    )
    codes = [c.code for c in items]
    if len(set(codes)) != len(codes) or UNKNOWN not in codes:
        raise ValueError(f"{TAXONOMY_FILE.name}: codes must be unique and include {UNKNOWN!r}")
    return items


TAXONOMY: tuple[IntentCategory, ...] = _load()
INTENT_CODES: tuple[str, ...] = tuple(c.code for c in TAXONOMY)
_BY_CODE = {c.code: c for c in TAXONOMY}
AGENTS: tuple[str, ...] = tuple(dict.fromkeys(c.target_agent for c in TAXONOMY))


def get_intent(code: object) -> IntentCategory:
    """The category of ``code``; anything unknown, empty or not a string → ``unknown``."""
    if isinstance(code, str):
        hit = _BY_CODE.get(code.strip().lower())
        if hit is not None:
            return hit
    return _BY_CODE[UNKNOWN]


def normalize_code(code: object) -> str:
    """``code`` if it is a taxonomy code (case and spaces ignored), else ``unknown``."""
    return get_intent(code).code


def target_agent(code: object) -> str:
    return get_intent(code).target_agent


def is_known(code: object) -> bool:
    return isinstance(code, str) and code.strip().lower() in _BY_CODE


__all__ = [
    "AGENTS",
    "INTENT_CODES",
    "TAXONOMY",
    "UNKNOWN",
    "IntentCategory",
    "get_intent",
    "is_known",
    "normalize_code",
    "target_agent",
]
