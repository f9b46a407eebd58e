"""Evaluate a router on labelled messages, and calibrate the L2 thresholds.

Labelled data is JSON Lines: one object per line with ``text`` and ``intent``
(a taxonomy code; ``unknown`` = out of scope) and optionally ``alt_intents``
(other codes also counted as correct) and ``lang`` (default: detected).

Definitions (used by the CLI, the benchmark and the Router lab):

* a layer *answers* a message when it is the layer that stopped the pipeline;
  *coverage* of a layer = answered / all messages; *precision* = correct / answered;
* *in-scope resolved* = in-scope messages answered by L1 or L2 (whatever they said);
  *in-scope precision* = correct among those (an in-scope message that L2 sends
  to ``unknown`` counts as resolved and wrong);
* *out-of-scope captured* = out-of-scope messages that L1 or L2 gave an in-scope
  intent (landing on ``unknown`` is not a capture).

Evaluation runs L1 and L2 only; L3 answers ``unknown`` unless ``use_llm`` and the
router has an LLM (then each L3 message costs one call).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from navigo_core.errors import InputError
from navigo_core.i18n import detect_lang
from navigo_core.intent.taxonomy import INTENT_CODES, UNKNOWN, normalize_code
from navigo_core.intent.vector import Band, EncoderThresholds

LAYER_NAMES = ("L1", "L2", "L3")


@dataclass(frozen=True)
class LabelledRow:
    text: str
    intent: str
    alt_intents: tuple[str, ...] = ()
    lang: str = "en"
    scene: str | None = None  # the chat scene that should answer (scene-level sets)

    @property
    def in_scope(self) -> bool:
        return self.intent != UNKNOWN

    def accepts(self, pred: str) -> bool:
        return pred == self.intent or pred in self.alt_intents


def parse_rows(items: Iterable[dict[str, Any]]) -> list[LabelledRow]:
    rows = []
    for item in items:
        text = str(item["text"])
        rows.append(LabelledRow(text, normalize_code(item["intent"]),
                                tuple(normalize_code(a) for a in item.get("alt_intents") or ()),
                                str(item.get("lang") or detect_lang(text)), item.get("scene") or None))
    return rows


def load_labelled(path: Path | str) -> list[LabelledRow]:
    """Rows of a JSON Lines file; ``InputError`` (exit 2 in the CLI) for a missing file or a bad line."""
    p = Path(path)
    if not p.is_file():
        raise InputError("intent.cli.data_missing", path=str(p))
    items: list[dict[str, Any]] = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError("intent.cli.data_invalid", path=str(p), line=n, detail=exc.msg) from exc
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str) or not isinstance(obj.get("intent"), str):
            raise InputError("intent.cli.data_invalid", path=str(p), line=n, detail="text and intent must be strings")
        items.append(obj)
    if not items:
        raise InputError("intent.cli.data_empty", path=str(p))
    return parse_rows(items)


# --- running the layers ---------------------------------------------------------------

@dataclass(frozen=True)
class RawOutcome:
    """L1's decision and L2's raw nearest seed for one row (before any L2 threshold)."""

    row: LabelledRow
    l1: str | None  # the L1 intent, None: miss
    l2_intent: str | None  # nearest seed's intent (None: L1 hit, no L2, or an L2 error)
    l2_score: float


def run_layers(router: Any, rows: Sequence[LabelledRow]) -> list[RawOutcome]:
    """L1 on every row, then L2's nearest seed for the L1 misses in one vectorised batch.

    As in the chat's gate, a message of an ``off_topic`` category of the rules (coding, maths,
    leave requests …) is answered before any layer: here it counts as L1 ``unknown``, so the L2
    thresholds are chosen on the messages that really reach L2."""
    rules = router.rules
    l1: list[str | None] = []
    for r in rows:
        hit = rules.match(r.text) if rules is not None else None
        if hit is not None:
            l1.append(hit.intent)
        elif rules is not None and rules.off_topic_category(r.text, gate_only=True) is not None:
            l1.append(UNKNOWN)
        else:
            l1.append(None)
    todo = [i for i, h in enumerate(l1) if h is None and rows[i].text.strip()]
    nearest: dict[int, tuple[str, float]] = {}
    if router.l2 is not None and todo:
        try:
            matches = router.l2.nearest_batch([rows[i].text for i in todo])
            nearest = {i: (m.intent, m.score) for i, m in zip(todo, matches)}
        except Exception:  # any L2 error is a miss, as in the router
            nearest = {}
    return [RawOutcome(r, h, *(nearest.get(i) or (None, float("-inf")))) for i, (r, h) in enumerate(zip(rows, l1))]


@dataclass(frozen=True)
class Decision:
    row: LabelledRow
    layer: str
    pred: str

    @property
    def correct(self) -> bool:
        return self.row.accepts(self.pred)


def decide(raw: Sequence[RawOutcome], thresholds: EncoderThresholds | None,
           l3: Any = None) -> list[Decision]:
    """Final layer and prediction per row under ``thresholds`` (None: no L2)."""
    out = []
    for o in raw:
        if o.l1 is not None:
            out.append(Decision(o.row, "L1", o.l1))
        elif (thresholds is not None and o.l2_intent is not None
              and thresholds.accepts(o.l2_intent, o.l2_score, o.row.lang)):
            out.append(Decision(o.row, "L2", o.l2_intent))
        else:
            pred = l3.classify(o.row.text, o.row.lang).primary_intent if l3 is not None else UNKNOWN
            out.append(Decision(o.row, "L3", pred))
    return out


# --- metrics --------------------------------------------------------------------------

@dataclass
class LayerStats:
    answered: int = 0
    correct: int = 0

    def coverage(self, n: int) -> float:
        return self.answered / n if n else 0.0

    @property
    def precision(self) -> float | None:
        return self.correct / self.answered if self.answered else None


@dataclass
class EvalReport:
    n: int
    n_in: int
    n_oos: int
    accuracy: float
    layers: dict[str, LayerStats]
    in_resolved: int
    in_resolved_correct: int
    oos_captured: int
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)
    by_lang: dict[str, "EvalReport"] = field(default_factory=dict)

    @property
    def in_coverage(self) -> float:
        return self.in_resolved / self.n_in if self.n_in else 0.0

    @property
    def in_precision(self) -> float | None:
        return self.in_resolved_correct / self.in_resolved if self.in_resolved else None

    @property
    def oos_rate(self) -> float | None:
        return self.oos_captured / self.n_oos if self.n_oos else None

    def summary(self) -> dict[str, Any]:
        return {
            "rows": self.n, "in_scope": self.n_in, "out_of_scope": self.n_oos, "accuracy": self.accuracy,
            "in_scope_resolved_l1_l2": self.in_coverage, "in_scope_precision_l1_l2": self.in_precision,
            "oos_captured_l1_l2": self.oos_rate,
            "layers": {k: {"answered": v.answered, "coverage": v.coverage(self.n), "precision": v.precision}
                       for k, v in self.layers.items()},
        }


def report_from(decisions: Sequence[Decision], *, split_lang: bool = True) -> EvalReport:
    layers = {k: LayerStats() for k in LAYER_NAMES}
    conf: Counter[tuple[str, str]] = Counter()
    in_res = in_ok = oos_cap = ok = 0
    for d in decisions:
        st = layers[d.layer]
        st.answered += 1
        st.correct += d.correct
        ok += d.correct
        conf[(d.row.intent, d.row.intent if d.correct else d.pred)] += 1
        if d.layer in ("L1", "L2"):
            if d.row.in_scope:
                in_res += 1
                in_ok += d.correct
            elif d.pred != UNKNOWN:
                oos_cap += 1
    n = len(decisions)
    n_in = sum(d.row.in_scope for d in decisions)
    rep = EvalReport(n, n_in, n - n_in, ok / n if n else 0.0, layers, in_res, in_ok, oos_cap, conf)
    if split_lang:
        langs = sorted({d.row.lang for d in decisions})
        if len(langs) > 1:
            rep.by_lang = {lang: report_from([d for d in decisions if d.row.lang == lang], split_lang=False)
                           for lang in langs}
    return rep


def evaluate(router: Any, rows: Sequence[LabelledRow], *, use_llm: bool = False) -> EvalReport:
    """Route every row through L1 and L2 (L3: offline ``unknown`` unless ``use_llm``)."""
    raw = run_layers(router, rows)
    th = router.l2.thresholds if router.l2 is not None else None
    l3 = router.llm if use_llm and getattr(router.llm, "online", False) else None
    return report_from(decide(raw, th, l3))


# --- calibration ----------------------------------------------------------------------

@dataclass
class CalibrationResult:
    encoder: str
    thresholds: EncoderThresholds
    feasible: dict[str, bool]  # per scope ("all", "en", "zh"): were both targets reachable?
    before: EvalReport
    after: EvalReport


def wilson_upper(k: int, n: int, z: float) -> float:
    """Upper end of the Wilson score interval of a rate of ``k`` in ``n`` (one-sided, ``z``)."""
    if n == 0:
        return 0.0
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return min(1.0, centre + half)


_Z = {0.8: 0.8416, 0.9: 1.2816, 0.95: 1.6449, 0.975: 1.96, 0.99: 2.3263}


def oos_allowance(n_oos: int, max_oos: float, confidence: float | None) -> float:
    """How many out-of-scope captures ``n_oos`` rows may show: the raw ``max_oos`` share, or, with a
    ``confidence``, the most captures whose Wilson upper bound still stays ≤ ``max_oos`` (small
    samples then allow fewer, so a threshold chosen on them holds on unseen messages)."""
    if n_oos == 0:
        return math.inf
    if confidence is None:
        return max_oos * n_oos
    z = _Z.get(round(confidence, 3)) or 1.6449
    k = -1
    while k + 1 <= n_oos and wilson_upper(k + 1, n_oos, z) <= max_oos:
        k += 1
    return float(max(k, 0))  # too few rows to show even 0 captures stay under max_oos: allow none


def _pick(raw: Sequence[RawOutcome], min_precision: float, max_oos: float, floor: float,
          confidence: float | None = 0.95) -> tuple[Band, bool]:
    """The lowest threshold that keeps L2's in-scope precision ≥ min_precision and the
    out-of-scope capture of L1+L2 ≤ max_oos (lowest = most coverage); see :func:`oos_allowance`."""
    n_oos = sum(not o.row.in_scope for o in raw)
    l1_oos = sum(1 for o in raw if o.l1 is not None and not o.row.in_scope and o.l1 != UNKNOWN)
    budget = oos_allowance(n_oos, max_oos, confidence) - l1_oos  # how many more captures L2 may add
    cands = sorted((o for o in raw if o.l1 is None and o.l2_intent is not None),
                   key=lambda o: o.l2_score, reverse=True)
    # walk from the highest score down, keeping running counts; remember the lowest feasible cut
    hits_in = ok_in = oos_hits = 0
    best: float | None = None
    scores = np.array([o.l2_score for o in cands])
    for k, o in enumerate(cands):
        if o.row.in_scope:
            hits_in += 1
            ok_in += o.row.accepts(o.l2_intent or "")
        elif o.l2_intent != UNKNOWN:
            oos_hits += 1
        if k + 1 < len(cands) and scores[k + 1] == o.l2_score:
            continue  # a threshold cannot split equal scores
        if o.l2_score < floor:
            break
        precision = ok_in / hits_in if hits_in else 1.0
        if precision >= min_precision and oos_hits <= budget + 1e-9:
            best = o.l2_score
    feasible = best is not None
    threshold = best if best is not None else (float(scores[0]) + 1e-3 if len(scores) else 1.0)
    threshold = math.floor(min(max(threshold, floor), 1.0) * 1e4) / 1e4  # rounded down: the chosen cut stays in
    # high confidence: the lowest cut above which every L2 answer was right (in scope) and nothing out of scope was captured
    high = None
    for o in cands:
        if o.l2_score < threshold:
            break
        wrong = (o.row.in_scope and not o.row.accepts(o.l2_intent or "")) or (not o.row.in_scope and o.l2_intent != UNKNOWN)
        if wrong:
            break
        high = o.l2_score
    if high is None or high <= threshold + 1e-6:  # no evidence for a separate high band: halfway to 1
        high = threshold + (1.0 - threshold) / 2
    high_v = round(high, 4)
    return Band(threshold=threshold, high=min(high_v, 1.0), medium=threshold), feasible


def calibrate(router: Any, rows: Sequence[LabelledRow], *, min_precision: float = 0.95, max_oos: float = 0.05,
              confidence: float | None = 0.95, per_language: bool = True, min_rows_per_lang: int = 40,
              floor: float = 0.2, note: str = "") -> CalibrationResult:
    """Choose the L2 threshold of the router's encoder from labelled rows (see module doc).

    The threshold is the lowest (most coverage) at which the in-scope messages L2
    answers are at least ``min_precision`` right and L1+L2 capture at most
    ``max_oos`` of the out-of-scope messages — with ``confidence`` (default 95 %),
    judged by the Wilson upper bound of the capture rate rather than the raw rate,
    because a few hundred rows say little about a 5 % rate. With ``per_language``,
    each language with at least ``min_rows_per_lang`` rows gets its own band
    (``by_lang``): Chinese and English n-gram scores sit on different scales.
    """
    if router.l2 is None:
        raise ValueError("the router has no L2 index to calibrate")
    raw = run_layers(router, rows)
    band, ok_all = _pick(raw, min_precision, max_oos, floor, confidence)
    feasible = {"all": ok_all}
    by_lang: dict[str, Band] = {}
    if per_language:
        for lang in sorted({o.row.lang for o in raw}):
            sub = [o for o in raw if o.row.lang == lang]
            if len(sub) >= min_rows_per_lang and any(o.row.in_scope for o in sub) and any(not o.row.in_scope for o in sub):
                by_lang[lang], feasible[lang] = _pick(sub, min_precision, max_oos, floor, confidence)
    name = router.l2.encoder_name
    conf = f" at {confidence:.0%} confidence" if confidence else ""
    stamp = note or (f"calibrated on {len(rows)} rows, {date.today().isoformat()}: precision >= {min_precision:.0%}, "
                     f"out-of-scope <= {max_oos:.0%}{conf}")
    # the per-intent floors are not chosen here (benchmarks/bench_l2_heldout.py measures them on held-out sets)
    th = EncoderThresholds(threshold=band.threshold, high=band.high, medium=band.medium, by_lang=by_lang,
                           by_intent=dict(router.l2.thresholds.by_intent), note=stamp)
    before = report_from(decide(raw, router.l2.thresholds))
    after = report_from(decide(raw, th))
    return CalibrationResult(name, th, feasible, before, after)


# --- Markdown -------------------------------------------------------------------------

def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.1%}"


def format_report(rep: EvalReport, *, title: str = "Intent evaluation") -> str:
    lines = [f"## {title}", "",
             "| rows | in scope | out of scope | accuracy | in-scope resolved by L1+L2 | precision of L1+L2 (in scope) | out-of-scope captured by L1+L2 |",
             "|---:|---:|---:|---:|---:|---:|---:|",
             f"| {rep.n} | {rep.n_in} | {rep.n_oos} | {_pct(rep.accuracy)} | {_pct(rep.in_coverage)} | "
             f"{_pct(rep.in_precision)} | {_pct(rep.oos_rate)} |", "",
             "### Per layer", "",
             "| layer | answered | coverage | precision |", "|---|---:|---:|---:|"]
    for name, st in rep.layers.items():
        lines.append(f"| {name} | {st.answered} | {_pct(st.coverage(rep.n))} | {_pct(st.precision)} |")
    if rep.by_lang:
        lines += ["", "### Per language", "",
                  "| language | rows | accuracy | in-scope resolved by L1+L2 | precision of L1+L2 | out-of-scope captured |",
                  "|---|---:|---:|---:|---:|---:|"]
        for lang, sub in rep.by_lang.items():
            lines.append(f"| {lang} | {sub.n} | {_pct(sub.accuracy)} | {_pct(sub.in_coverage)} | "
                         f"{_pct(sub.in_precision)} | {_pct(sub.oos_rate)} |")
    lines += ["", "### Confusion (rows: labelled intent; columns: predicted; alt intents count as the label)", ""]
    lines += format_confusion(rep.confusion)
    return "\n".join(lines)


def format_confusion(conf: Counter[tuple[str, str]]) -> list[str]:
    order = {c: i for i, c in enumerate(INTENT_CODES)}
    gold = sorted({g for g, _ in conf}, key=lambda c: order.get(c, 99))
    pred = sorted({p for _, p in conf}, key=lambda c: order.get(c, 99))
    head = "| labelled \\ predicted | " + " | ".join(pred) + " |"
    sep = "|---|" + "---:|" * len(pred)
    rows = [f"| {g} | " + " | ".join(str(conf.get((g, p), "") or "·") for p in pred) + " |" for g in gold]
    return [head, sep, *rows]


def format_calibration(res: CalibrationResult, path: Path | str | None = None) -> str:
    th = res.thresholds
    lines = [f"## Calibration of the {res.encoder} encoder", "",
             "| scope | threshold | medium ≥ | high ≥ | targets reachable |", "|---|---:|---:|---:|---|",
             f"| all | {th.threshold:.4f} | {th.medium:.4f} | {th.high:.4f} | {'yes' if res.feasible['all'] else 'no (L2 off)'} |"]
    for lang, b in th.by_lang.items():
        lines.append(f"| {lang} | {b.threshold:.4f} | {b.medium:.4f} | {b.high:.4f} | "
                     f"{'yes' if res.feasible.get(lang) else 'no (L2 off)'} |")
    before, after = res.before, res.after
    lines += ["", "| | in-scope resolved by L1+L2 | precision of L1+L2 | out-of-scope captured | L2 answered | L2 precision |",
              "|---|---:|---:|---:|---:|---:|",
              *(f"| {name} | {_pct(r.in_coverage)} | {_pct(r.in_precision)} | {_pct(r.oos_rate)} | "
                f"{r.layers['L2'].answered} | {_pct(r.layers['L2'].precision)} |"
                for name, r in (("before", before), ("after", after)))]
    if path is not None:
        lines += ["", f"Written to {path}."]
    return "\n".join(lines)


__all__ = ["CalibrationResult", "Decision", "EvalReport", "LabelledRow", "RawOutcome", "calibrate", "decide",
           "evaluate", "format_calibration", "format_confusion", "format_report", "load_labelled", "parse_rows",
           "run_layers"]
