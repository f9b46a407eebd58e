"""L2: nearest seed sentence (top-1 cosine) with a per-encoder threshold.

The seed corpus is ``data/seeds.yaml`` (intent → language → sentences); the
thresholds and score → confidence bands are ``data/thresholds.yaml``, one
entry per encoder name (``tfidf``, ``embeddings``), written by
``python -m navigo_core intent calibrate``. An entry may hold a ``by_lang``
override (``zh``/``en``) because character n-gram scores of Chinese and
English sit on different scales.
"""

from __future__ import annotations

import math

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import BaseModel, Field

from navigo_core.i18n import LANGS, detect_lang
from navigo_core.intent.encoders import Encoder
from navigo_core.intent.models import Confidence
from navigo_core.intent.taxonomy import DATA_DIR, is_known
from navigo_core.safe_yaml import read_yaml

SEEDS_FILE = DATA_DIR / "seeds.yaml"
EXAMPLES_FILE = DATA_DIR / "examples.yaml"  # labelled user sentences (generated: benchmarks/build_l2_examples.py)
THRESHOLDS_FILE = DATA_DIR / "thresholds.yaml"


@dataclass(frozen=True)
class Seed:
    text: str
    intent: str
    lang: str


def load_seeds(path: Path | str | None = None) -> list[Seed]:
    """The seed sentences, validated: known intents, ``en``/``zh`` only, no duplicates.

    ``path`` None: the hand-written ``seeds.yaml`` and the labelled ``examples.yaml``."""
    paths = [Path(path)] if path is not None else [p for p in (SEEDS_FILE, EXAMPLES_FILE) if p.is_file()]
    seeds: list[Seed] = []
    seen: set[str] = set()
    for p in paths:
        seeds += _load_one(p, seen)
    return seeds


def _load_one(path: Path, seen: set[str]) -> list[Seed]:
    data = read_yaml(path) or {}
    seeds: list[Seed] = []
    for intent, by_lang in data.items():
        if not is_known(intent):
            raise ValueError(f"{Path(path).name}: unknown intent {intent!r}")
        for lang, texts in (by_lang or {}).items():
            if lang not in LANGS:
                raise ValueError(f"{Path(path).name}: {intent}: language must be one of {LANGS}, not {lang!r}")
            for text in texts or []:
                text = str(text).strip()
                key = text.lower()
                if not text or key in seen:
                    raise ValueError(f"{Path(path).name}: empty or duplicate seed {text!r}")
                seen.add(key)
                seeds.append(Seed(text, intent, lang))
    return seeds


class Band(BaseModel):
    """Threshold and score → confidence mapping of one encoder (optionally one language)."""

    threshold: float = Field(ge=-1.0, le=1.0)
    high: float = Field(ge=-1.0, le=1.0)
    medium: float = Field(ge=-1.0, le=1.0)

    def confidence(self, score: float) -> Confidence:
        if score >= self.high:
            return "high"
        if score >= self.medium:
            return "medium"
        return "low"


class EncoderThresholds(Band):
    by_lang: dict[str, Band] = Field(default_factory=dict)
    # intent → a lower score from which an answer of that intent is a hit anyway (the language
    # thresholds are set by the hardest calibration rows; some intents are answered better)
    by_intent: dict[str, float] = Field(default_factory=dict)
    note: str = ""

    def for_lang(self, lang: str) -> Band:
        return self.by_lang.get(lang) or self

    def accepts(self, intent: str, score: float, lang: str) -> bool:
        """Whether an L2 answer of ``intent`` with ``score`` in ``lang`` is a hit."""
        return score >= self.for_lang(lang).threshold or score >= self.by_intent.get(intent, math.inf)


DEFAULT_THRESHOLDS = {
    "tfidf": EncoderThresholds(threshold=0.6, high=0.75, medium=0.6),
    "tfidf-lr": EncoderThresholds(threshold=0.5, high=0.8, medium=0.5),
    "embeddings": EncoderThresholds(threshold=0.75, high=0.85, medium=0.75),
}


def load_thresholds(path: Path | str = THRESHOLDS_FILE) -> dict[str, EncoderThresholds]:
    """Per-encoder thresholds; encoders missing from the file get the built-in defaults."""
    out = dict(DEFAULT_THRESHOLDS)
    p = Path(path)
    if p.exists():
        data = read_yaml(p) or {}
        for name, entry in data.items():
            if isinstance(entry, dict):
                out[name] = EncoderThresholds.model_validate(entry)
    return out


def save_thresholds(updates: dict[str, EncoderThresholds], path: Path | str = THRESHOLDS_FILE) -> Path:
    """Write ``updates`` into the thresholds file, keeping the other encoders' entries."""
    p = Path(path)
    current: dict[str, Any] = {}
    if p.exists():
        current = read_yaml(p) or {}
    for name, th in updates.items():
        current[name] = th.model_dump(exclude_defaults=False)
        if not current[name].get("by_lang"):
            current[name].pop("by_lang", None)
        if not current[name].get("by_intent"):
            current[name].pop("by_intent", None)
        if not current[name].get("note"):
            current[name].pop("note", None)
    header = (
        "# L2 thresholds per encoder: a top-1 match scoring below `threshold` is a miss.\n"
        "# Score → confidence: >= high → high, >= medium → medium, else low.\n"
        "# `by_lang` overrides one language. Written by `python -m navigo_core intent calibrate`.\n"
        "# `by_intent`: an answer of that intent is a hit from that score on (kept by calibrate;\n"
        "# chosen on held-out tuning sets by benchmarks/bench_l2_heldout.py).\n"
    )
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(header + yaml.safe_dump(current, allow_unicode=True, sort_keys=True), encoding="utf-8")
    return p


@dataclass(frozen=True)
class VectorMatch:
    """The nearest seed of one message (whether or not it clears the threshold)."""

    intent: str
    score: float
    seed: str
    seed_index: int
    lang: str
    hit: bool
    confidence: Confidence


class VectorIndex:
    """A fitted encoder over the seed corpus plus its thresholds."""

    def __init__(self, encoder: Encoder, seeds: Sequence[Seed], thresholds: EncoderThresholds) -> None:
        if not seeds:
            raise ValueError("the L2 index needs at least one seed sentence")
        self.encoder = encoder
        self.seeds = list(seeds)
        self.thresholds = thresholds
        self._intents = [s.intent for s in self.seeds]

    @classmethod
    def build(cls, encoder: Encoder, seeds: Sequence[Seed] | None = None,
              thresholds: EncoderThresholds | None = None) -> "VectorIndex":
        """Fit ``encoder`` on the seeds (once) and attach the thresholds for its name."""
        seeds = list(seeds) if seeds is not None else load_seeds()
        encoder.fit([s.text for s in seeds])
        th = thresholds or load_thresholds().get(encoder.name) or DEFAULT_THRESHOLDS["tfidf"]
        return cls(encoder, seeds, th)

    def with_thresholds(self, thresholds: EncoderThresholds) -> "VectorIndex":
        """The same fitted index with other thresholds (no refit)."""
        return VectorIndex(self.encoder, self.seeds, thresholds)

    @property
    def encoder_name(self) -> str:
        return self.encoder.name

    def _match(self, sims: np.ndarray, lang: str) -> VectorMatch:
        i = int(np.argmax(sims))
        score = float(sims[i])
        band = self.thresholds.for_lang(lang)
        return VectorMatch(self._intents[i], score, self.seeds[i].text, i, lang,
                           self.thresholds.accepts(self._intents[i], score, lang), band.confidence(score))

    def nearest(self, text: str, lang: str | None = None) -> VectorMatch:
        """Top-1 seed of ``text`` (raises whatever the encoder raises)."""
        return self._match(self.encoder.scores_one(text), lang or detect_lang(text))

    def nearest_batch(self, texts: Sequence[str]) -> list[VectorMatch]:
        """Top-1 seeds of many texts in one vectorised pass."""
        if not texts:
            return []
        sims = self.encoder.scores(list(texts))
        return [self._match(sims[k], detect_lang(t)) for k, t in enumerate(texts)]

    def match(self, text: str, lang: str | None = None) -> VectorMatch | None:
        """The top-1 seed when it clears the threshold, else None."""
        m = self.nearest(text, lang)
        return m if m.hit else None


__all__ = [
    "DEFAULT_THRESHOLDS",
    "EXAMPLES_FILE",
    "SEEDS_FILE",
    "THRESHOLDS_FILE",
    "Band",
    "EncoderThresholds",
    "Seed",
    "VectorIndex",
    "VectorMatch",
    "load_seeds",
    "load_thresholds",
    "save_thresholds",
]
