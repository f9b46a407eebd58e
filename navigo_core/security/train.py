"""Rebuild the injection classifier (``make model``): deterministic, one thread, bit-for-bit output.

``python -m navigo_core.security.train [--out PATH]`` trains on

* ``training/injection/train.jsonl.gz`` — the public corpus (sources and licences:
  ``training/injection/LICENSES.md``);
* ``training/injection/dev_licensed.jsonl.gz`` — the licensed rows of the shared dev set, when present;
* ``training/injection/augment.py`` — own-written rows (short paraphrased attacks, trigger-word requests);
* ``training/injection/own_attacks.jsonl`` and ``own_benign.jsonl`` — ~1,200 own-written attacks and ~1,350
  hard benign requests (en + zh; indirect injections in documents, hijacks appended to real requests,
  subtle extraction, obfuscation; benign text that talks about AI, prompts, rules, passwords, modes);
* ``training/injection/own_long.jsonl`` — 310 own-written long, multi-line rows: 200 benign tasks dense with
  trigger words (notes, to-do lists, role-play practice, outlines about prompts) and 110 attacks of the same
  shapes with an instruction to the assistant hidden inside;
* benign sentences of the project's own labelled sets: ``tests/data/routing_tune*.jsonl``,
  ``calibration.jsonl``, ``out_of_scope_train*.jsonl`` (the other sets stay out: untrained checks),

with the sentences of each benign English text as benign rows of their own (``CONFIG["benign_segments"]``),
and calibrates the flagging threshold per language on benign text it did not train on: the lowest
threshold giving ≤ 0.25 % false positives (``CONFIG["max_fpr_calibration"]``; round 4: 1 %) on the even-indexed
rows of ``tests/data/injection_benign_fresh.jsonl`` with all of ``injection_benign_fresh3.jsonl`` (480 rows per
language) *and* no false positive on any row of the project's
labelled sets (every ``tests/data/*.jsonl`` except the injection files' evaluation parts). The odd
rows of ``injection_benign_fresh.jsonl`` and ``injection_attacks_fresh.jsonl`` are never read here.

The model file is a zip of ``meta.json`` and ``.npy`` arrays with fixed timestamps; weights are
rounded (float32, then 1e-6) so that the bytes do not depend on float noise.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.util
import io
import json
import math
import sys
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

from navigo_core.security.classifier import MODEL_PATH, expand_dense, hashed_counts, make_vectorizer, read_model, text_lang
from navigo_core.security.features import MAX_CHARS, N_CONCEPTS, N_DENSE, crop_raw, dense_features, prepare, segments

__all__ = ["CONFIG", "OWN_FILES", "REPO_BENIGN_TRAIN", "build", "calibrate", "calibration_rows", "fit",
           "labelled_benign_rows",
           "load_training_rows", "main", "own_rows", "sample_weights", "write_model"]

ROOT = Path(__file__).resolve().parents[2]

#: The chosen configuration (see training/injection/EXPERIMENTS.md for what was tried).
CONFIG: dict = {
    "blocks": [
        {"analyzer": "char", "ngram": [1, 5], "bits": 19},
        {"analyzer": "word", "ngram": [1, 2], "bits": 19},
    ],
    "sublinear_tf": True,
    "dense_scale": 0.6,
    # a linear SVM (hinge loss) beat logistic regression (C=10) on every held-out measure of round 3; its margin
    # is mapped to a probability by Platt scaling fitted on cross-fitted margins (``platt_folds``)
    "model": "linear_svm",
    "C": 1.0,
    "platt_folds": 3,
    "class_weight": "balanced",
    # own-written rows (augment.py, own_attacks.jsonl, own_benign.jsonl) count twice: closest to what the
    # product receives (hijacks appended to real requests, injections inside documents, hard benign text)
    "group_weight": {"own": 2.0},
    # round 7's Chinese safety quizzes and small talk (one narrow family) count like public rows: at the own weight
    # the round's rows lowered the Chinese attack scores around the threshold (own fresh attacks zh 163 -> 157 of
    # 210; at this weight 160, the dev false positives the same). Its English half (own_round7_en.jsonl) is not
    # trained on: it lifted one blind ordinary English request over the threshold (EXPERIMENTS.md, round 7)
    "origin_weight": {"own_round7_zh.jsonl": 0.5},
    # English texts also score as their most suspicious sentence (an instruction appended to, or hidden
    # inside, ordinary text); measured no gain for Chinese, so Chinese texts score as a whole
    "segments": {"max_segments": 8, "min_chars": 24, "langs": ["en"]},
    # round 5: the calibration sets (480 benign rows per language) have heavy, uneven tails (one set's 1 % point
    # was another's 2 %); aiming at 0.25 % on them (one false positive in 480) leaves the margin for text the
    # threshold never saw to stay within 1 %
    "max_fpr_calibration": 0.0025,
    # round 10: the sentences of every benign English text are benign training rows too, at a quarter of their
    # text's weight (English texts score as their most suspicious sentence, which training never saw alone:
    # benign persona prompts, "I want you to act as a movie critic. … Only reply with …", were flagged by one
    # sentence). At the same validation false positives it catches more own attacks (EXPERIMENTS.md, round 10)
    "benign_segments": {"weight": 0.25},
}


#: Own-written rows (fields text, label 1/0, lang, subtype), written for this project without reading the
#: evaluation files; see training/injection/LICENSES.md.
OWN_FILES = ("own_attacks.jsonl", "own_benign.jsonl", "own_long.jsonl", "own_round5.jsonl", "own_round5b.jsonl",
             "own_round7_zh.jsonl", "own_round8.jsonl", "own_round11_zh.jsonl", "own_round13.jsonl")
#: Project sets used as benign *training* rows (the rest of tests/data stays untrained).
REPO_BENIGN_TRAIN = ("routing_tune*.jsonl", "calibration.jsonl", "out_of_scope_train*.jsonl")
#: Evaluation-only injection files (never trained on; the benign one's even rows calibrate the threshold).
BENIGN_FRESH = "injection_benign_fresh.jsonl"
#: A third benign set written blind (round 5), all of it a calibration set with the even rows above: 480
#: rows per language instead of 180 make the 1 % point less a matter of one or two sentences.
BENIGN_CALIBRATION = "injection_benign_fresh3.jsonl"
ATTACKS_FRESH = "injection_attacks_fresh.jsonl"
#: Every injection evaluation file (``injection_*fresh*.jsonl``: the two above, and
#: ``injection_benign_fresh2.jsonl``, a second benign set written blind, never read here at all): measured by
#: ``benchmarks/bench_security.py``, left out of :func:`labelled_benign_rows`.
EVAL_GLOB = "injection_*fresh*.jsonl"


def is_evaluation_file(path: Path) -> bool:
    """Whether ``path`` is an injection evaluation file (:data:`EVAL_GLOB`)."""
    return path.match(EVAL_GLOB)


def _jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _row_lang(row: dict) -> str:
    lang = row.get("lang")
    return str(lang) if lang in ("en", "zh") else text_lang(row["text"])


def own_rows(root: Path = ROOT) -> list[dict]:
    """The project's own-written rows: those composed by ``training/injection/augment.py`` followed by
    ``training/injection/own_attacks.jsonl`` and ``own_benign.jsonl`` (:data:`OWN_FILES`); absent files
    contribute nothing."""
    folder = root / "training" / "injection"
    out: list[dict] = []
    path = folder / "augment.py"
    if path.exists():
        spec = importlib.util.spec_from_file_location("_navigo_injection_augment", path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out += [dict(r, origin="augment.py") for r in module.rows()]
    for name in OWN_FILES:
        if (folder / name).exists():
            out += [{"text": r["text"], "label": int(r["label"]), "lang": _row_lang(r), "subtype": r.get("subtype", ""),
                     "origin": name} for r in _jsonl(folder / name)]
    return out


def load_training_rows(root: Path = ROOT) -> list[dict]:
    """Training rows ``{text, label (0/1), lang}`` in a fixed order."""
    rows = []
    for name, group in (("train.jsonl.gz", "public"), ("dev_licensed.jsonl.gz", "dev")):
        path = root / "training" / "injection" / name
        if path.exists():
            for r in _jsonl(path):
                label = r["label"]
                label = 1 if label in (1, "1", "malicious") else 0
                rows.append({"text": r["text"], "label": label, "lang": _row_lang(r), "group": group})
    for r in own_rows(root):
        rows.append({"text": r["text"], "label": r["label"], "lang": r["lang"], "group": "own", "origin": r["origin"]})
    for pattern in REPO_BENIGN_TRAIN:
        for path in sorted((root / "tests" / "data").glob(pattern)):
            for r in _jsonl(path):
                rows.append({"text": r["text"], "label": 0, "lang": _row_lang(r), "group": "repo"})
    return rows


def sample_weights(rows: list[dict], config: dict = CONFIG) -> np.ndarray:
    """Per-row training weight: ``config["group_weight"]`` by the row's group (public / dev / own / repo;
    1.0 when absent) times ``config["origin_weight"]`` by the own file it came from times ``config["lang_weight"]``
    by its language."""
    gw = config.get("group_weight") or {}
    ow = config.get("origin_weight") or {}
    lw = config.get("lang_weight") or {}
    return np.array([float(gw.get(r.get("group", "public"), 1.0)) * float(ow.get(r.get("origin", ""), 1.0))
                     * float(lw.get(r["lang"], 1.0)) for r in rows])


def labelled_benign_rows(root: Path = ROOT, include_fresh_calibration: bool = True) -> list[dict]:
    """Every benign row of the project's labelled sets (all tests/data/*.jsonl but the injection files),
    plus the calibration (even) half of injection_benign_fresh.jsonl when asked."""
    rows = []
    for path in sorted((root / "tests" / "data").glob("*.jsonl")):
        if is_evaluation_file(path):
            continue
        rows += [{"text": r["text"], "lang": _row_lang(r), "set": path.name} for r in _jsonl(path)]
    if include_fresh_calibration:
        rows += [dict(r, set=BENIGN_FRESH + " (even)") for r in calibration_rows(root)]
    return rows


def calibration_rows(root: Path = ROOT) -> list[dict]:
    """The even-indexed rows of injection_benign_fresh.jsonl and every row of injection_benign_fresh3.jsonl
    (absent files contribute nothing)."""
    out: list[dict] = []
    path = root / "tests" / "data" / BENIGN_FRESH
    if path.exists():
        out += [{"text": r["text"], "lang": _row_lang(r)} for i, r in enumerate(_jsonl(path)) if i % 2 == 0]
    path = root / "tests" / "data" / BENIGN_CALIBRATION
    if path.exists():
        out += [{"text": r["text"], "lang": _row_lang(r)} for r in _jsonl(path)]
    return out


def _round(a: np.ndarray) -> np.ndarray:
    return np.round(a.astype(np.float32).astype(np.float64), 6).astype(np.float32)


def _counts(prepared: list[str], config: dict) -> list:
    """The hashed n-gram counts of each block."""
    return [hashed_counts(make_vectorizer(b["analyzer"], tuple(b["ngram"]), b["bits"]), prepared)
            for b in config["blocks"]]


def _dense(rows: Sequence[np.ndarray]) -> np.ndarray:
    return np.vstack(rows) if len(rows) else np.zeros((0, N_DENSE))


def _features(prepared: list[str], config: dict, raws: Sequence[str | None] | None = None):
    """Counts and dense features of whole texts (the experiment scripts in training/injection use it)."""
    raw_texts: Sequence[str | None] = [None] * len(prepared) if raws is None else raws
    return _counts(prepared, config), _dense([dense_features(p, r) for p, r in zip(prepared, raw_texts)])


def fit(rows: list[dict], config: dict = CONFIG) -> tuple[dict, dict[str, np.ndarray]]:
    """Train on ``rows``; return (meta, arrays) with rounded weights."""
    prepared = [prepare(r["text"]) for r in rows]
    y = np.array([r["label"] for r in rows])
    weights = sample_weights(rows, config)
    dense = _dense([dense_features(p, crop_raw(r["text"])) for p, r in zip(prepared, rows)])
    bseg, seg = config.get("benign_segments"), config.get("segments")
    if bseg and seg:  # the sentences of benign texts are benign too: the model scores English texts by them
        extra_p: list[str] = []
        extra_d: list[np.ndarray] = []
        extra_w: list[float] = []
        for i, (r, p) in enumerate(zip(rows, prepared)):
            if r["label"] != 0 or text_lang(p) not in seg.get("langs", ("en", "zh")):
                continue
            for part in segments(p, seg["max_segments"], seg["min_chars"]):
                # as the scorer sees a segment: only the concepts its whole text shows, no raw text
                extra_p.append(part)
                extra_d.append(dense_features(part, None, dense[i, :N_CONCEPTS] > 0))
                extra_w.append(weights[i] * float(bseg["weight"]))
        prepared = prepared + extra_p
        dense = np.vstack([dense, _dense(extra_d)])
        y = np.concatenate([y, np.zeros(len(extra_p), dtype=y.dtype)])
        weights = np.concatenate([weights, np.array(extra_w)])
    counts = _counts(prepared, config)
    blocks, meta_blocks, arrays = [], [], {}
    for i, (spec, X) in enumerate(zip(config["blocks"], counts)):
        tf = TfidfTransformer(sublinear_tf=config["sublinear_tf"], use_idf=True, smooth_idf=True, norm="l2")
        blocks.append(tf.fit_transform(X))
        seen = np.flatnonzero(np.asarray((X > 0).sum(axis=0)).ravel())
        arrays[f"b{i}_idx"] = seen.astype(np.uint32)
        arrays[f"b{i}_idf"] = _round(tf.idf_[seen])
        meta_blocks.append(dict(spec, idf_unseen=float(_round(np.array([math.log(1 + X.shape[0]) + 1.0]))[0])))
    dense = expand_dense(dense, prepared, bool(config.get("dense_by_lang")))
    Xall = sp.hstack(blocks + [sp.csr_matrix(dense * config["dense_scale"])]).tocsr()
    clf = _linear_model(config)
    clf.fit(Xall, y, sample_weight=weights)
    coef = clf.coef_.ravel()
    start = 0
    for i, spec in enumerate(config["blocks"]):
        w = coef[start: start + 2 ** spec["bits"]]
        start += 2 ** spec["bits"]
        arrays[f"b{i}_w"] = _round(w[arrays[f"b{i}_idx"].astype(np.int64)])
    arrays["dense_w"] = _round(coef[start:])
    svm = config.get("model", "logreg") == "linear_svm"
    meta = {
        "format": 2,
        "model": ("hashed char+word n-gram tf-idf + concept features, "
                  + ("linear SVM, Platt-scaled" if svm else "logistic regression") + " (max over segments)"),
        "blocks": meta_blocks,
        "dense_scale": config["dense_scale"],
        "bias": float(_round(clf.intercept_)[0]),
        "max_chars": MAX_CHARS,
        "train_rows": int(len(rows)),
        "train_malicious": int(y.sum()),
    }
    if config.get("segments"):
        meta["segments"] = dict(config["segments"])
    if config.get("dense_by_lang"):
        meta["dense_by_lang"] = True
    if svm:
        meta["platt"] = _platt(Xall, y, weights, config)
    return meta, arrays


def _linear_model(config: dict):
    """The (unfitted) linear classifier of ``config["model"]``: ``linear_svm`` or ``logreg`` (the default)."""
    if config.get("model", "logreg") == "linear_svm":
        return LinearSVC(C=config["C"], class_weight=config["class_weight"], max_iter=20000, random_state=0)
    return LogisticRegression(C=config["C"], class_weight=config["class_weight"], solver="liblinear",
                              max_iter=5000, random_state=0)


def _platt(X, y: np.ndarray, weights: np.ndarray, config: dict) -> list[float]:
    """Platt scaling ``[a, b]`` (probability = sigmoid(a * margin + b)): a one-feature logistic regression,
    class-balanced like the model, on margins of rows scored by a model fitted without them (row index
    modulo ``config["platt_folds"]``). Monotone, so it changes no ranking and no per-language recall."""
    k = int(config.get("platt_folds", 3))
    fold = np.arange(X.shape[0]) % k
    margins = np.zeros(X.shape[0])
    for f in range(k):
        train, held = fold != f, fold == f
        m = _linear_model(config)
        m.fit(X[train], y[train], sample_weight=weights[train])
        margins[held] = m.decision_function(X[held])
    platt = LogisticRegression(C=1e4, class_weight="balanced", solver="lbfgs", max_iter=1000)
    platt.fit(margins.reshape(-1, 1), y)
    return [float(_round(platt.coef_.ravel())[0]), float(_round(platt.intercept_)[0])]


def calibrate(model, benign_calibration: list[dict], labelled: list[dict], max_fpr: float) -> dict[str, float]:
    """Per language: the lowest threshold (on a 0.001 grid) with ≤ max_fpr false positives on
    ``benign_calibration`` and none on ``labelled``."""
    out = {}
    for lang in ("en", "zh"):
        cal = [r["text"] for r in benign_calibration if text_lang(r["text"]) == lang]
        lab = [r["text"] for r in labelled if text_lang(r["text"]) == lang]
        s_cal = np.sort(model.scores(cal)) if cal else np.zeros(0)
        s_lab = model.scores(lab) if lab else np.zeros(0)
        floor = float(s_lab.max()) if len(s_lab) else 0.0
        if len(s_cal):
            k = int(math.floor(max_fpr * len(s_cal)))  # false positives allowed
            floor = max(floor, float(s_cal[len(s_cal) - 1 - k]))
        out[lang] = round(min(math.floor(floor * 1000 + 1) / 1000, 0.999), 3)
    return out


def encode_arrays(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The stored form (:func:`navigo_core.security.classifier.decode_arrays` reverses it): bucket
    indexes as gaps (they compress to a third), weights and idf as float16 (the scores move by
    less than 0.001; the thresholds are calibrated on the stored model)."""
    out: dict[str, np.ndarray] = {}
    for name, a in arrays.items():
        if name.endswith("_idx"):
            out[name[:-4] + "_didx"] = np.diff(a.astype(np.int64), prepend=0).astype(np.uint32)
        elif name.endswith(("_w", "_idf")):
            out[name] = a.astype(np.float16)
        else:
            out[name] = a
    return out


def write_model(path: Path, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """A zip of meta.json and .npy arrays with fixed timestamps and order (reproducible bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        def put(name: str, data: bytes) -> None:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data, compresslevel=9)

        put("meta.json", json.dumps(meta, sort_keys=True, indent=1, ensure_ascii=False).encode("utf-8"))
        for name, array in sorted(encode_arrays(arrays).items()):
            b = io.BytesIO()
            np.lib.format.write_array(b, np.ascontiguousarray(array), allow_pickle=False)
            put(name + ".npy", b.getvalue())
    path.write_bytes(buf.getvalue())


def build(out: Path = MODEL_PATH, root: Path = ROOT, config: dict = CONFIG) -> Path:
    """Train, calibrate and write the model to ``out``."""
    with threadpool_limits(1):
        rows = load_training_rows(root)
        meta, arrays = fit(rows, config)
        tmp = out.with_suffix(".uncalibrated.npz")
        write_model(tmp, meta, arrays)
        model = read_model(tmp)
        tmp.unlink()
        meta["thresholds"] = calibrate(model, calibration_rows(root), labelled_benign_rows(root, False),
                                       config["max_fpr_calibration"])
        meta["calibration"] = ("per language: lowest threshold with <= 0.25% false positives on the even rows of "
                               f"tests/data/{BENIGN_FRESH} and all of tests/data/{BENIGN_CALIBRATION}, and none on "
                               "the project's labelled sets")
        write_model(out, meta, arrays)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Rebuild the prompt-injection classifier.")
    parser.add_argument("--out", type=Path, default=MODEL_PATH, help=f"model file (default {MODEL_PATH})")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    path = build(args.out)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    meta = read_model(path).meta
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB, sha256 {digest[:16]}) in "
          f"{time.perf_counter() - t0:.1f} s; thresholds {meta['thresholds']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
