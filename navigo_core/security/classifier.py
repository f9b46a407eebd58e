"""The learned layer of the risk guard: a bilingual prompt-injection classifier.

:func:`injection_score` gives the probability (0–1) that a text is a prompt-injection or jailbreak
attempt; :func:`injection_threshold` the calibrated cut-off (per language) above which
:func:`~navigo_core.security.rules.detect_prompt_injection` flags it as ``classifier:<score>``.

Model: hashed character and word n-grams of :func:`~navigo_core.security.features.prepare`-d text
(normalised; head and tail of long texts), sublinear tf-idf per block, L2-normalised, plus the
hand-made concept features of :mod:`navigo_core.security.features`, into one linear model (a linear SVM whose
margin is Platt-scaled to a probability: the model's ``platt`` meta; older logistic-regression files have none).
When the model's meta has ``segments`` (the shipped one does, for English), a text scores as the maximum
of its whole and of each of its sentences / lines, so a hijack appended to a real request still shows.
The hashing is stateless, so the model file holds only weights: ``data/injection_model.npz``
(a zip of ``.npy`` arrays and ``meta.json``; no pickle), rebuilt bit for bit by
``make model`` (:mod:`navigo_core.security.train`). Loaded lazily, once.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction._hashing_fast import transform as _hash_pairs  # the hasher HashingVectorizer uses
from sklearn.feature_extraction.text import HashingVectorizer

from navigo_core.security.features import CJK_CHAR, N_CONCEPTS, N_DENSE, crop_raw, dense_features, prepare, segments

__all__ = ["MODEL_PATH", "InjectionModel", "expand_dense", "hashed_counts", "injection_score", "injection_scores", "injection_threshold",
           "load_model", "text_lang"]

MODEL_PATH = Path(__file__).parent / "data" / "injection_model.npz"


def make_vectorizer(analyzer: str, ngram: tuple[int, int], bits: int) -> HashingVectorizer:
    """The (stateless) count hasher of one feature block; training and scoring share it."""
    kw = {"token_pattern": r"(?u)\b\w+\b"} if analyzer == "word" else {}
    return HashingVectorizer(analyzer=analyzer, ngram_range=tuple(ngram), n_features=2 ** bits,
                             alternate_sign=False, norm=None, lowercase=False, dtype=np.float64, **kw)


#: scikit-learn's whitespace folding before character n-grams (``_VectorizerMixin._white_spaces``).
_WHITE_SPACES = re.compile(r"\s\s+")


_C1, _C2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _murmur3_s32(words: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """MurmurHash3 (x86, 32 bit, seed 0: the hash of scikit-learn's hashers) of byte strings, as signed 32-bit
    integers. ``words[k]`` is the little-endian 32-bit word of the bytes at ``k .. k + 3`` of the buffer the strings
    are spans of; string ``i`` starts at byte ``starts[i]`` and is ``lengths[i]`` bytes long."""
    h = np.zeros(len(lengths), dtype=np.uint32)
    full = lengths // 4
    rem = (lengths % 4).astype(np.uint32)
    tail_mask = (np.uint32(1) << (np.uint32(8) * rem)) - np.uint32(1)  # the tail's own bytes (rem 0: unused)
    for j in range(int(-(-lengths.max(initial=0) // 4))):
        k1 = words[starts + 4 * j]
        k1 = np.where(full == j, k1 & tail_mask, k1)
        mixed = _rotl(k1 * _C1, 15) * _C2
        block = _rotl(h ^ mixed, 13) * np.uint32(5) + np.uint32(0xE6546B64)
        h = np.where(full > j, block, np.where((full == j) & (rem > 0), h ^ mixed, h))
    h ^= lengths.astype(np.uint32)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h.view(np.int32)


#: Texts hashed together by :func:`_char_ngram_arrays` at most (bounds the memory of a training-size call).
_HASH_CHUNK = 2000


def _char_ngram_arrays(texts: list[str], lo: int, hi: int, n_features: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What :func:`hashed_counts` gives for scikit-learn's ``char`` analyzer (no lower-casing, no accent
    stripping) as CSR arrays ``(data, indices, indptr)`` (column indices sorted, no duplicates), computed in numpy
    over all the texts at once: every n-gram is a span of the texts' UTF-8 bytes, all spans are hashed together
    (:func:`_murmur3_s32`), and (text, bucket) pairs are counted. Long texts make the p99 of the guard's latency,
    and a text is scored with its segments in one call."""
    if len(texts) > _HASH_CHUNK:
        parts = [_char_ngram_arrays(texts[i: i + _HASH_CHUNK], lo, hi, n_features)
                 for i in range(0, len(texts), _HASH_CHUNK)]
        offsets = np.cumsum([0] + [len(p[0]) for p in parts[:-1]])
        indptr = np.concatenate([[0]] + [p[2][1:] + off for p, off in zip(parts, offsets)])
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), indptr
    texts = [_WHITE_SPACES.sub(" ", t) for t in texts]
    joined = "".join(texts)
    raw = joined.encode("utf-8")
    lens = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    n_chars = len(joined)
    if len(raw) == n_chars:  # ASCII: a character is a byte
        byte_off = np.arange(n_chars + 1, dtype=np.int64)
    else:
        codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
        byte_off = np.zeros(n_chars + 1, dtype=np.int64)
        np.cumsum(1 + (codes >= 0x80) + (codes >= 0x800) + (codes >= 0x10000), out=byte_off[1:])
    # the 32-bit word at every byte offset, the buffer zero-padded so that any span's words can be read
    padded = np.zeros(len(raw) + 4 * (hi + 2), dtype=np.uint32)
    padded[: len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    words = padded[:-3] | (padded[1:-2] << np.uint32(8)) | (padded[2:-1] << np.uint32(16)) | (padded[3:] << np.uint32(24))
    row_of = np.repeat(np.arange(len(texts), dtype=np.int64), lens)
    end_of = np.repeat(np.cumsum(lens), lens)
    pos = np.arange(n_chars, dtype=np.int64)
    starts, sizes, owners = [], [], []
    for n in range(lo, hi + 1):
        p = pos[pos + n <= end_of]  # the n-grams that stay inside their text
        starts.append(byte_off[p])
        sizes.append(byte_off[p + n] - byte_off[p])
        owners.append(row_of[p])
    start, size, owner = np.concatenate(starts), np.concatenate(sizes), np.concatenate(owners)
    h = _murmur3_s32(words, start, size).astype(np.int64)
    # scikit-learn takes abs(h) % n_features, and abs(-2**31) as 2**31 - 1 (``_hashing_fast.pyx``)
    bucket = np.where(h == -(2 ** 31), (2 ** 31 - 1 - (n_features - 1)) % n_features, np.abs(h) % n_features)
    keys, counts = np.unique(owner * n_features + bucket, return_counts=True)
    indptr = np.searchsorted(keys, np.arange(len(texts) + 1, dtype=np.int64) * n_features)
    return counts.astype(np.float64), (keys % n_features).astype(np.int32), indptr


def _char_ngram_counts(text: str, lo: int, hi: int) -> Counter[str]:
    """The counts of what scikit-learn's ``char`` analyzer yields for ``text``, the n-grams joined from shifted
    copies of the text in C (for short inputs, where :func:`_char_ngram_arrays`'s fixed cost does not pay)."""
    text = _WHITE_SPACES.sub(" ", text)
    grams: list[str] = list(text) if lo == 1 else []
    for n in range(max(lo, 2), min(hi, len(text)) + 1):
        grams.extend(map("".join, zip(*(islice(text, k, None) for k in range(n)))))
    return Counter(grams)


#: From this many characters in one call, character n-grams are hashed in numpy (measured crossover ~100).
NUMPY_HASH_CHARS = 150


def _plain_char(vectorizer: HashingVectorizer) -> bool:
    """A ``char`` analyzer with no preprocessing (the model's), which :func:`_char_ngram_arrays` reproduces."""
    return (vectorizer.analyzer == "char" and not vectorizer.lowercase and vectorizer.strip_accents is None
            and vectorizer.preprocessor is None and vectorizer.input == "content")


def _count_arrays(vectorizer: HashingVectorizer, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`hashed_counts` as CSR arrays ``(data, indices, indptr)`` with no duplicate column in a row."""
    if _plain_char(vectorizer):
        lo, hi = vectorizer.ngram_range
        if sum(map(len, texts)) >= NUMPY_HASH_CHARS:
            return _char_ngram_arrays(texts, lo, hi, vectorizer.n_features)
        count: Callable[[str], Counter[str]] = lambda t: _char_ngram_counts(t, lo, hi)
    else:
        analyze = vectorizer.build_analyzer()
        count = lambda t: Counter(analyze(t))
    indices, indptr, values = _hash_pairs([count(t).items() for t in texts], vectorizer.n_features,
                                          np.float64, False, 0)
    # hash collisions of distinct n-grams add up, as in scikit-learn (scipy's sum_duplicates, without a matrix)
    n = vectorizer.n_features
    keys = indices.astype(np.int64)
    if len(texts) > 1:
        keys += _row_numbers(indptr) * n
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    first = np.ones(len(keys), dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    data = np.add.reduceat(values[order], starts) if len(keys) else values
    keys = keys[starts]
    return data, (keys % n).astype(np.int32), np.searchsorted(keys, np.arange(len(texts) + 1, dtype=np.int64) * n)


def _row_numbers(indptr: np.ndarray) -> np.ndarray:
    """The row of each stored value of a CSR matrix with these row pointers."""
    return np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))


def hashed_counts(vectorizer: HashingVectorizer, texts: list[str]) -> sp.csr_matrix:
    """``vectorizer.transform(texts)`` as a CSR matrix, the same numbers in less time: character n-grams are
    hashed in numpy (:func:`_char_ngram_arrays`) when the input is long; otherwise each distinct n-gram of a text
    is hashed once with its count (scikit-learn's own hasher hashes every occurrence, each wrapped in a Python
    pair). ``tests/unit/test_injection_model.py`` checks the two agree."""
    return sp.csr_matrix(_count_arrays(vectorizer, texts), shape=(len(texts), vectorizer.n_features))


def expand_dense(dense: np.ndarray, prepared: list[str], by_lang: bool) -> np.ndarray:
    """The concept block as the model sees it: as is, or (``by_lang``) one copy per language, the other
    language's copy zeroed, so English and Chinese concepts get their own weights."""
    if not by_lang:
        return dense
    zh = np.array([[1.0 if text_lang(p) == "zh" else 0.0] for p in prepared]).reshape(-1, 1)
    return np.hstack([dense * (1.0 - zh), dense * zh])


def text_lang(text: str) -> str:
    """``"zh"`` when CJK characters make up at least a fifth of the letters, else ``"en"``."""
    cjk = len(CJK_CHAR.findall(text))
    alpha = sum(map(str.isalpha, text))
    return "zh" if alpha and cjk / alpha >= 0.2 else "en"


@dataclass(frozen=True)
class _Block:
    vectorizer: HashingVectorizer
    weight: np.ndarray  # per bucket
    idf: np.ndarray  # per bucket


class InjectionModel:
    """A loaded classifier (see the module docstring)."""

    def __init__(self, meta: dict, arrays: dict[str, np.ndarray]):
        self.meta = meta
        blocks = []
        for i, spec in enumerate(meta["blocks"]):
            size = 2 ** spec["bits"]
            idx = arrays[f"b{i}_idx"].astype(np.int64)
            weight = np.zeros(size, dtype=np.float64)
            weight[idx] = arrays[f"b{i}_w"].astype(np.float64)
            idf = np.full(size, float(spec["idf_unseen"]), dtype=np.float64)
            idf[idx] = arrays[f"b{i}_idf"].astype(np.float64)
            blocks.append(_Block(make_vectorizer(spec["analyzer"], spec["ngram"], spec["bits"]), weight, idf))
        self.blocks = tuple(blocks)
        self.dense_w = arrays["dense_w"].astype(np.float64)
        self.dense_scale = float(meta["dense_scale"])
        self.dense_by_lang = bool(meta.get("dense_by_lang", False))
        self.bias = float(meta["bias"])
        platt = meta.get("platt")
        self.platt: tuple[float, float] | None = (float(platt[0]), float(platt[1])) if platt else None
        if self.dense_w.shape[0] != N_DENSE * (2 if self.dense_by_lang else 1):
            raise ValueError("injection model does not match navigo_core.security.features (retrain: make model)")
        self.thresholds: dict[str, float] = {k: float(v) for k, v in meta.get("thresholds", {}).items()}

    def decision(self, prepared: list[str], dense: np.ndarray) -> np.ndarray:
        """Logits of already :func:`prepare`-d texts whose :func:`dense_features` are the rows of ``dense``."""
        n = len(prepared)
        out = np.full(n, self.bias, dtype=np.float64)
        for b in self.blocks:
            data, cols, indptr = _count_arrays(b.vectorizer, prepared)
            rows = _row_numbers(indptr) if n > 1 else np.zeros(len(data), dtype=np.int64)
            vals = (np.log(data) + 1.0) * b.idf[cols]  # sublinear tf-idf
            norm = np.sqrt(np.bincount(rows, vals * vals, minlength=n))
            dot = np.bincount(rows, vals * b.weight[cols], minlength=n)
            out += np.divide(dot, norm, out=np.zeros(n), where=norm > 0)
        if prepared:
            out += (expand_dense(dense, prepared, self.dense_by_lang) @ self.dense_w) * self.dense_scale
        return out

    def scores(self, texts: list[str]) -> np.ndarray:
        prepared = [prepare(t) for t in texts]
        owner: list[int] = []
        parts: list[str] = []
        seg = self.meta.get("segments")
        if seg:  # a text scores as its most suspicious part: the whole, or one of its segments
            langs = seg.get("langs", ("en", "zh"))
            for i, p in enumerate(prepared):
                if text_lang(p) not in langs:
                    continue
                for part in segments(p, seg["max_segments"], seg["min_chars"]):
                    owner.append(i)
                    parts.append(part)
        # one pass over the wholes and their segments; a segment looks only for the concepts its whole text
        # shows (it is a part of that text) and has no raw text to decode payloads from
        dense = np.zeros((len(prepared) + len(parts), N_DENSE))
        for r, (p, t) in enumerate(zip(prepared, texts)):
            dense[r] = dense_features(p, crop_raw(t))
        for r, (i, part) in enumerate(zip(owner, parts)):
            dense[len(prepared) + r] = dense_features(part, None, dense[i, :N_CONCEPTS] > 0)
        both = self.decision(prepared + parts, dense)
        logits = both[: len(prepared)].copy()
        if parts:
            np.maximum.at(logits, np.array(owner), both[len(prepared):])
        if self.platt is not None:  # a linear SVM's margin mapped to a probability (train._platt)
            logits = self.platt[0] * logits + self.platt[1]
        probs = 1.0 / (1.0 + np.exp(-logits))
        return np.where([bool(p) for p in prepared], probs, 0.0)

    def threshold(self, text: str) -> float:
        return self.thresholds.get(text_lang(text), self.thresholds.get("any", 1.0))


def read_model(path: Path) -> InjectionModel:
    """Read a model file written by :func:`navigo_core.security.train.write_model` (no pickle)."""
    arrays: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("meta.json").decode("utf-8"))
        for name in zf.namelist():
            if name.endswith(".npy"):
                arrays[name[:-4]] = np.lib.format.read_array(io.BytesIO(zf.read(name)), allow_pickle=False)
    return InjectionModel(meta, decode_arrays(arrays))


def decode_arrays(stored: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Bucket indexes back from their gaps (``train.encode_arrays`` stores them so)."""
    out = dict(stored)
    for name in [n for n in stored if n.endswith("_didx")]:
        out[name[:-5] + "_idx"] = np.cumsum(out.pop(name).astype(np.int64))
    return out


@lru_cache(maxsize=1)
def load_model() -> InjectionModel:
    """The shipped model (read once)."""
    return read_model(MODEL_PATH)


def injection_score(text: str) -> float:
    """Probability (0–1) that ``text`` is a prompt-injection / jailbreak attempt; 0.0 for empty text."""
    if not text or not text.strip():
        return 0.0
    return float(load_model().scores([text])[0])


def injection_scores(texts: list[str]) -> list[float]:
    """:func:`injection_score` of many texts at once (faster: one hashing call per block)."""
    if not texts:
        return []
    return [float(s) for s in load_model().scores(list(texts))]


def injection_threshold(text: str = "") -> float:
    """The calibrated flagging threshold for ``text``'s language (``en`` / ``zh``)."""
    return load_model().threshold(text)
