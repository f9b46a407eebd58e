"""L2 encoders behind one interface.

An encoder is fitted once on the seed sentences and then scores a message
against every seed (cosine similarity, rows L2-normalised):

* :class:`TfidfEncoder` — offline default: character n-gram TF-IDF
  (scikit-learn ``TfidfVectorizer(analyzer="char_wb")``) fitted on the seed
  corpus. Works for Chinese without word segmentation. ``scores_one`` is a
  hand-rolled fast path (the fitted analyzer, vocabulary and idf, then a
  sparse gather over the seeds' postings) that gives the same numbers as the
  sklearn ``transform`` in a fraction of its per-call overhead; ``scores``
  vectorises a batch through sklearn.
* :class:`EmbeddingsEncoder` — the LLM client's ``embed()`` (an
  OpenAI-compatible embeddings model), used when ``settings.intent_encoder``
  asks for it. Any error it raises makes L2 miss (handled by the router).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from navigo_core.intent.rules import normalize


class Encoder(ABC):
    """Fit on seeds once; then score messages against every seed."""

    name: str = "encoder"

    @abstractmethod
    def fit(self, seeds: Sequence[str]) -> "Encoder":
        """Encode the seed sentences (called once)."""

    @abstractmethod
    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """Cosine similarity of each text to each seed: shape (len(texts), n_seeds)."""

    def scores_one(self, text: str) -> np.ndarray:
        """Cosine similarity of one text to each seed: shape (n_seeds,)."""
        return self.scores([text])[0]

    @property
    def n_seeds(self) -> int:
        return 0

    def describe(self) -> str:
        return self.name


def tfidf_row(text: str, analyzer: Any, vocab: dict[str, int], idf: np.ndarray,
              sublinear_tf: bool) -> tuple[np.ndarray, np.ndarray]:
    """One text's row of a fitted ``TfidfVectorizer`` (norm "l2"), as feature indices and values, without
    scikit-learn's per-call checks (most of the time of a single-message ``transform``): the analyzer's
    n-grams found in the vocabulary, counted, tf (sublinear if asked) times idf, scaled to unit length."""
    counts: dict[int, int] = {}
    for gram in analyzer(text):
        j = vocab.get(gram)
        if j is not None:
            counts[j] = counts.get(j, 0) + 1
    if not counts:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    feats = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
    tf = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
    if sublinear_tf:
        tf = np.log(tf) + 1.0
    w = tf * idf[feats]
    w /= math.sqrt(float(w @ w))
    return feats, w


class TfidfEncoder(Encoder):
    """Character n-gram TF-IDF over the seed corpus (offline, no download)."""

    name = "tfidf"

    def __init__(self, ngram_range: tuple[int, int] = (1, 3), sublinear_tf: bool = True) -> None:
        self.ngram_range = ngram_range
        self.sublinear_tf = sublinear_tf
        self._vec: Any = None

    def fit(self, seeds: Sequence[str]) -> "TfidfEncoder":
        from sklearn.feature_extraction.text import TfidfVectorizer

        vec = TfidfVectorizer(analyzer="char_wb", ngram_range=self.ngram_range, preprocessor=normalize,
                              sublinear_tf=self.sublinear_tf, norm="l2", dtype=np.float64)
        seed_matrix = vec.fit_transform(list(seeds)).tocsr()  # (n_seeds, n_features), rows unit length
        self._vec = vec
        self._seed_t = seed_matrix.T.tocsr()  # feature → postings (seed ids and weights)
        self._seed_matrix_t = seed_matrix.T.tocsc()
        self._n = seed_matrix.shape[0]
        self._analyzer = vec.build_analyzer()
        self._vocab: dict[str, int] = vec.vocabulary_
        self._idf = vec.idf_
        self._indptr = self._seed_t.indptr
        self._indices = self._seed_t.indices
        self._data = self._seed_t.data
        return self

    @property
    def n_seeds(self) -> int:
        return self._n

    def describe(self) -> str:
        lo, hi = self.ngram_range
        return f"tfidf char_wb {lo}-{hi}"

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        q = self._vec.transform(list(texts))
        return np.asarray((q @ self._seed_matrix_t).todense())

    def scores_one(self, text: str) -> np.ndarray:
        out = np.zeros(self._n)
        feats, w = tfidf_row(text, self._analyzer, self._vocab, self._idf, self.sublinear_tf)
        if not len(feats):
            return out
        starts = self._indptr[feats]
        lengths = self._indptr[feats + 1] - starts
        total = int(lengths.sum())
        if total == 0:
            return out
        # positions of every posting of every query feature, without a Python loop
        offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
        pos = np.arange(total) + offsets
        return np.bincount(self._indices[pos], weights=self._data[pos] * np.repeat(w, lengths), minlength=self._n)


class EmbeddingsEncoder(Encoder):
    """An OpenAI-compatible embeddings model through the LLM client's ``embed()``."""

    name = "embeddings"

    def __init__(self, client: Any, model: str | None = None, batch_size: int = 64) -> None:
        self.client = client
        self.model = model or None
        self.batch_size = batch_size
        self._seeds = np.zeros((0, 0))

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            chunk = list(texts[i:i + self.batch_size])
            got = self.client.embed(chunk, model=self.model)
            if len(got) != len(chunk):
                raise ValueError(f"embed() returned {len(got)} vectors for {len(chunk)} texts")
            rows.extend(got)
        m = np.asarray(rows, dtype=np.float64)
        if m.ndim != 2 or not np.all(np.isfinite(m)):
            raise ValueError("embed() returned vectors of uneven length or non-finite values")
        norms = np.linalg.norm(m, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return m / norms

    def fit(self, seeds: Sequence[str]) -> "EmbeddingsEncoder":
        self._seeds = self._embed(list(seeds))
        return self

    @property
    def n_seeds(self) -> int:
        return self._seeds.shape[0]

    def describe(self) -> str:
        return f"embeddings {self.model or '(default model)'}"

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        q = self._embed(list(texts))
        if q.shape[1] != self._seeds.shape[1]:
            raise ValueError("embedding size differs from the seeds' (model changed?)")
        return q @ self._seeds.T


__all__ = ["Encoder", "EmbeddingsEncoder", "TfidfEncoder", "tfidf_row"]
