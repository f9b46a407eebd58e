"""Benchmark of the request parser (``navigo_core.understand.parse_request``); prints Markdown tables.

Run from the repo root: ``.venv/bin/python benchmarks/bench_understand.py [--old] [--data FILE ...]
[--today YYYY-MM-DD] [--show-errors N]``.

Sets scored (each row is parsed once; accuracy of a field = correct / rows that label it):

1. ``../shared/data/slots/slots_dev.jsonl`` beside the repo (override the folder with
   ``NAVIGO_SLOTS_DATA``), per source: TravelPlanner with today = 2022-02-15, SMP2019 with
   today = 2026-12-01 (its date labels are raw ``date_text`` words and are not scored). Skipped
   with a message when absent; the data is never committed nor read by tests. Its ``adults``
   label is the whole party, so it is compared with adults + children.
2. ``tests/data/requests.jsonl``: the hand-written development set (each row has its own today).
3. ``benchmarks/data/requests_fresh.jsonl``: hand-written like 2 but with other sentences and
   other cities, and never used for tuning: the honest number.
4. Any ``--data FILE`` of either format (rows without ``today`` take it from their ``source``
   as above, else ``--today``; such rows count ``adults`` as the whole party).

Comparison rules: places after casefold, stripping surrounding whitespace / punctuation and a
trailing 市 / 省; an expected null must be None (or an empty string); budget equal when the
currency is equal and the amounts differ by < 0.5; ``ambiguities``: the expected field names must
be a subset of the fields the parser asks about (an explicitly empty list means it must ask
nothing); when a row labels no ambiguities but labels a place and the parser asks which of several
namesakes that place is, the place counts as wrong (a question where none was needed; asking about a
place no provider knows is the right answer and is not counted wrong); ``interests``: the same set
of ids. ``days`` comes from the result's ``days`` attribute, or from its dates when it has none.
A row whose ``parse_request`` raises counts wrong on all its fields.

``--old`` scores the previous parser (``navigo_core.planner.request.parse_request`` with the
offline gazetteer) for before/after numbers; it has no ``days`` (derived from the dates) and its
only ambiguities are its ``request.note.{origin,destination}_ambiguous`` notes.

Latency: p50 / p95 of one ``parse_request`` call per row (after one warm-up call per language).
Single-threaded; a report, not a test: it always exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import string
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SLOTS_DIR = Path(os.environ.get("NAVIGO_SLOTS_DATA", ROOT.parent / "shared" / "data" / "slots"))
SLOTS_FILE = "slots_dev.jsonl"
OWN = ROOT / "tests" / "data" / "requests.jsonl"
FRESH = ROOT / "benchmarks" / "data" / "requests_fresh.jsonl"
SOURCE_TODAY = {"travelplanner": date(2022, 2, 15), "smp2019": date(2026, 12, 1)}
DEFAULT_TODAY = date(2026, 12, 1)
FIELDS = ("origin", "destination", "start_date", "end_date", "days", "adults", "children", "budget",
          "ambiguities", "interests")
TARGET = 0.95
_STRIP = string.whitespace + string.punctuation + "，。、；：！？“”‘’（）【】《》「」·…—～"


# --- the parsers, behind one shape ------------------------------------------------

@dataclass
class Parsed:
    origin_text: str | None = None
    destination_text: str | None = None
    start_date: date | None = None
    end_date: date | None = None
    days: int | None = None
    adults: int | None = None
    children: int | None = None
    budget: tuple[float, str] | None = None
    interests: list[str] = field(default_factory=list)
    asks: set[str] = field(default_factory=set)  # fields named by the parser's ambiguities
    unknown: set[str] = field(default_factory=set)  # places asked about because no provider knows them


def _as_date(value: Any) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    return value if isinstance(value, date) else None


def _derived_days(start: date | None, end: date | None) -> int | None:
    return (end - start).days + 1 if start and end else None


def _budget(value: Any) -> tuple[float, str] | None:
    if value is None:
        return None
    amount = getattr(value, "amount", None)
    currency = getattr(value, "currency", None)
    if isinstance(value, dict):
        amount, currency = value.get("amount"), value.get("currency")
    if amount is None:
        return None
    return float(amount), str(currency or "").upper()


def _ambiguity_field(item: Any) -> str | None:
    if isinstance(item, dict):
        return item.get("field")
    return getattr(item, "field", None)


def adapt_new(res: Any) -> Parsed:
    start, end = _as_date(getattr(res, "start_date", None)), _as_date(getattr(res, "end_date", None))
    days = getattr(res, "days") if hasattr(res, "days") else _derived_days(start, end)
    return Parsed(
        origin_text=getattr(res, "origin_text", None), destination_text=getattr(res, "destination_text", None),
        start_date=start, end_date=end, days=days, adults=getattr(res, "adults", None),
        children=getattr(res, "children", None), budget=_budget(getattr(res, "budget", None)),
        interests=list(getattr(res, "interests", None) or []),
        asks={f for f in map(_ambiguity_field, getattr(res, "ambiguities", None) or []) if f},
        unknown={a.field for a in getattr(res, "ambiguities", None) or []
                 if getattr(a, "reason", "") == "understand.amb.place_unknown"})


def adapt_old(res: Any) -> Parsed:
    p = adapt_new(res)
    p.days = _derived_days(p.start_date, p.end_date)
    p.asks = {role for role in ("origin", "destination") if f"request.note.{role}_ambiguous" in (res.notes or [])}
    return p


def load_parser(old: bool) -> tuple[str, Callable[[str, date, str | None], Parsed]] | None:
    if old:
        if not (ROOT / "navigo_core" / "planner" / "parsing.py").exists():
            print("The old parser is gone from this tree (navigo_core/planner/parsing.py, until 8ecfb3b). Score it in a\n"
                  "worktree of that commit with this script and the labelled sets:\n"
                  "  git worktree add /tmp/navigo-old 8ecfb3b\n"
                  "  mkdir -p /tmp/navigo-old/benchmarks/data /tmp/navigo-old/tests/data\n"
                  "  cp benchmarks/bench_understand.py /tmp/navigo-old/benchmarks/\n"
                  "  cp benchmarks/data/requests_fresh.jsonl /tmp/navigo-old/benchmarks/data/\n"
                  "  cp tests/data/requests.jsonl /tmp/navigo-old/tests/data/\n"
                  "  cd /tmp/navigo-old && NAVIGO_SLOTS_DATA=$OLDPWD/../shared/data/slots PYTHONPATH=. "
                  "$OLDPWD/.venv/bin/python benchmarks/bench_understand.py --old")
            return None
        from navigo_core.planner.request import parse_request as old_parse
        from navigo_core.providers.places.gazetteer import GazetteerPlaceProvider

        places = GazetteerPlaceProvider()
        return ("navigo_core.planner.request.parse_request (old, gazetteer)",
                lambda text, today, lang: adapt_old(old_parse(text, today=today, places=places)))
    try:
        from navigo_core.understand import parse_request
    except ImportError as exc:
        print(f"navigo_core.understand not available ({exc}); nothing scored. "
              "Run with --old to score the previous parser.")
        return None
    return ("navigo_core.understand.parse_request",
            lambda text, today, lang: adapt_new(parse_request(text, today=today, lang=lang)))


# --- rows and sets ----------------------------------------------------------------

@dataclass
class Row:
    text: str
    lang: str | None
    today: date
    expect: dict[str, Any]
    party: bool  # "adults" is the whole party (the shared slots format)


@dataclass
class DataSet:
    name: str
    rows: list[Row]
    by_lang: bool = False


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def to_rows(raw: list[dict], default_today: date) -> list[Row]:
    rows = []
    for r in raw:
        party = "today" not in r
        today = (date.fromisoformat(r["today"]) if "today" in r
                 else SOURCE_TODAY.get(r.get("source", ""), default_today))
        expect = {k: v for k, v in r.get("expect", {}).items() if k in FIELDS}
        rows.append(Row(r["text"], r.get("lang"), today, expect, party))
    return rows


def file_sets(path: Path, label: str, default_today: date) -> list[DataSet]:
    raw = read_jsonl(path)
    sources = sorted({r["source"] for r in raw if r.get("source")})
    if sources:
        return [DataSet(f"{label} · {s}", to_rows([r for r in raw if r.get("source") == s], default_today))
                for s in sources] + ([DataSet(f"{label} · (no source)", to_rows(
                    [r for r in raw if not r.get("source")], default_today))] if any(
                    not r.get("source") for r in raw) else [])
    return [DataSet(label, to_rows(raw, default_today), by_lang=True)]


# --- scoring ----------------------------------------------------------------------

def norm_place(value: Any) -> str:
    s = str(value or "").strip(_STRIP).casefold()
    if s.endswith(("市", "省")):
        s = s[:-1].strip(_STRIP)
    return s


def _iso(value: Any) -> date | None:
    return None if value is None else date.fromisoformat(value)


def got_value(name: str, p: Parsed, row: Row) -> Any:
    if name in ("origin", "destination"):
        return getattr(p, f"{name}_text")
    if name == "adults" and row.party:
        return None if p.adults is None and p.children is None else (p.adults or 0) + (p.children or 0)
    if name == "ambiguities":
        return sorted(p.asks)
    return getattr(p, name)


def correct(name: str, want: Any, p: Parsed, row: Row) -> bool:
    got = got_value(name, p, row)
    if name in ("origin", "destination"):
        if want is None:
            return norm_place(got) == ""
        if not row.expect.get("ambiguities") and name in p.asks and name not in p.unknown:
            return False  # a question where none was needed (asking about a place nobody knows is right)
        return norm_place(got) == norm_place(want)
    if name in ("start_date", "end_date"):
        return got == _iso(want)
    if name == "budget":
        if want is None:
            return got is None
        return (got is not None and got[1] == str(want["currency"]).upper()
                and abs(got[0] - float(want["amount"])) < 0.5)
    if name == "ambiguities":
        return not p.asks if not want else set(want) <= p.asks
    if name == "interests":
        return set(got or []) == set(want or [])
    return got == want  # days, adults, children (None must be None)


@dataclass
class Tally:
    hits: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    n: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def cell(self, name: str) -> str:
        n = self.n.get(name, 0)
        return f"{100 * self.hits[name] / n:.1f} % ({self.hits[name]}/{n})" if n else "–"

    def failing(self) -> list[str]:
        return [f for f in FIELDS if self.n.get(f) and self.hits[f] / self.n[f] < TARGET]


@dataclass
class Result:
    total: Tally
    per_lang: dict[str, Tally]
    ms: list[float]
    errors: dict[str, list[tuple[str, Any, Any]]]  # field → (text, expected, got)
    raised: int


def _show(value: Any) -> str:
    if isinstance(value, date):
        return value.isoformat()
    return json.dumps(value, ensure_ascii=False, default=str)


def score(ds: DataSet, parse: Callable[[str, date, str | None], Parsed], max_prints: int = 20) -> Result:
    res = Result(Tally(), defaultdict(Tally), [], defaultdict(list), 0)
    seen_exc: dict[str, int] = {}
    for row in ds.rows:
        t0 = time.perf_counter_ns()
        try:
            p: Parsed | None = parse(row.text, row.today, row.lang)
        except Exception as exc:  # noqa: BLE001 - a report: one bad row must not stop it
            p = None
            res.raised += 1
            key = f"{type(exc).__name__}: {exc}"
            if res.raised <= max_prints:
                print(f"! [{ds.name}] parse_request raised on {row.text!r}: {key}")
            seen_exc[key] = seen_exc.get(key, 0) + 1
        res.ms.append((time.perf_counter_ns() - t0) / 1e6)
        for name, want in row.expect.items():
            ok = p is not None and correct(name, want, p, row)
            for tally in (res.total, res.per_lang[row.lang or "?"]):
                tally.n[name] += 1
                tally.hits[name] += ok
            if not ok:
                got = "raised" if p is None else got_value(name, p, row)
                if p is not None and name in ("origin", "destination") and name in p.asks:
                    got = f"{got!r} and asked about it as ambiguous"
                res.errors[name].append((row.text, want, got))
    if res.raised:
        more = f", the first {max_prints} printed" if res.raised > max_prints else ""
        print(f"! [{ds.name}] {res.raised} row(s) raised ({len(seen_exc)} distinct exceptions{more}); "
              "they count wrong on all their fields\n")
    return res


def quantile(ms: list[float], q: float) -> float:
    s = sorted(ms)
    return s[min(len(s) - 1, int(len(s) * q))] if s else float("nan")


# --- report -----------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", action="store_true", help="score the old planner parser instead")
    ap.add_argument("--data", action="append", type=Path, default=[], metavar="FILE",
                    help="also score this JSONL file (repeatable)")
    ap.add_argument("--today", type=date.fromisoformat, default=DEFAULT_TODAY,
                    help="today for rows that have neither 'today' nor a known source")
    ap.add_argument("--show-errors", type=int, default=0, metavar="N", help="print up to N mistakes per field and set")
    args = ap.parse_args()

    loaded = load_parser(args.old)
    if loaded is None:
        return 0
    label, parse = loaded

    sets: list[DataSet] = []
    notes: list[str] = []
    if (SLOTS_DIR / SLOTS_FILE).exists():
        sets += file_sets(SLOTS_DIR / SLOTS_FILE, SLOTS_FILE, args.today)
    else:
        notes.append(f"Skipped the shared slots data: {SLOTS_DIR / SLOTS_FILE} is absent.")
    for path, name in ((OWN, "tests/data/requests.jsonl"), (FRESH, "benchmarks/data/requests_fresh.jsonl")):
        if path.exists():
            sets += file_sets(path, name, args.today)
        else:
            notes.append(f"Skipped {name}: not found.")
    for path in args.data:
        if path.exists():
            sets += file_sets(path, str(path), args.today)
        else:
            notes.append(f"Skipped --data {path}: not found.")

    t0 = time.perf_counter()
    for text, lang in (("from boston to denver next friday", "en"), ("下周五从北京去成都", "zh")):
        try:  # warm-up: loads the gazetteer and compiles the rules
            parse(text, DEFAULT_TODAY, lang)
        except Exception as exc:  # noqa: BLE001
            print(f"! warm-up call raised: {type(exc).__name__}: {exc}")
    warm_s = time.perf_counter() - t0

    results = [(ds, score(ds, parse)) for ds in sets]

    print(f"# Request parser benchmark: {label}\n")
    print(f"Warm-up (first calls, gazetteer load) {warm_s:.2f} s. Accuracy = correct / rows labelling the field; "
          f"target ≥ {TARGET:.0%} on every labelled field.\n")
    for note in notes:
        print(note + "\n")
    if not results:
        print("No data to score.")
        return 0
    print("| set | rows | " + " | ".join(FIELDS) + " | p50 ms | p95 ms | all fields ≥ 95 % |")
    print("|---|---:|" + "---:|" * len(FIELDS) + "---:|---:|---|")
    for ds, res in results:
        failing = res.total.failing()
        verdict = "yes" if not failing else "NO (" + ", ".join(failing) + ")"
        print(f"| {ds.name} | {len(ds.rows)} | " + " | ".join(res.total.cell(f) for f in FIELDS)
              + f" | {quantile(res.ms, 0.5):.2f} | {quantile(res.ms, 0.95):.2f} | {verdict} |")
        if ds.by_lang:
            for lang in sorted(res.per_lang):
                n = sum(1 for r in ds.rows if (r.lang or "?") == lang)
                print(f"| ↳ {lang} | {n} | " + " | ".join(res.per_lang[lang].cell(f) for f in FIELDS) + " | | | |")
    print()

    if args.show_errors > 0:
        print(f"## Mistakes (up to {args.show_errors} per field and set)\n")
        for ds, res in results:
            if not res.errors:
                continue
            print(f"### {ds.name}\n")
            for name in FIELDS:
                errs = res.errors.get(name, [])
                if not errs:
                    continue
                print(f"{name} ({len(errs)} wrong):")
                for text, want, got in errs[:args.show_errors]:
                    print(f"  - {text}\n      expected {_show(want)}; got {_show(got)}")
                print()
    print(f"Python {sys.version.split()[0]}.")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # piped into head
        sys.exit(0)
    except Exception:  # noqa: BLE001 - a report: never fail the bench target
        import traceback

        traceback.print_exc()
        print("bench_understand failed (see the traceback above); exiting 0 as it is a report.")
        sys.exit(0)
