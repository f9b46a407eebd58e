"""Catastrophic-backtracking checks of every routing and parsing regex (issue 14).

Used by ``tests/unit/test_redos.py`` (in the normal test run) and ``benchmarks/bench_redos.py``.

1. :func:`collect` records every pattern NaviGo compiles while it routes and parses a corpus of
   messages (``re._compile`` is wrapped before ``navigo_core`` is imported, so module-level,
   rule-file and f-string patterns built inside functions are all caught), with the module that
   compiled it. Only patterns compiled by ``navigo_core`` count.
2. :func:`static_findings` parses each pattern (``re._parser``) and reports the shapes that
   backtrack exponentially: an unbounded repeat whose body is, apart from nullable parts, another
   repeat (``(a+)+``, ``(\\w+\\s?)*``), and an unbounded repeat of alternatives that can start with
   the same character and are otherwise single characters (``(a|a)*``, ``(\\d|[0-9])+``).
3. :func:`adversarial_inputs` builds, per pattern, inputs that pump it: a run of one character of
   each class or literal the pattern repeats, pairs of them alternating, and its literal words
   repeated, each normalised the way every entry point normalises a message (whitespace runs
   collapsed).
4. :func:`measure` times ``finditer`` over an input (best of ``reps``), and :func:`scan` runs every
   (pattern, input) at ``small`` and ``large`` sizes: time that grows much faster than the size is
   backtracking (a linear pattern's ratio is about ``large/small``; a quadratic one's its square).
   The test uses the growth ratio, the pattern's own linear baseline measured in the same run, never
   an absolute time.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_PKG = str(ROOT / "navigo_core")
_RE_FILES = {os.path.dirname(re.__file__)}


@dataclass(frozen=True)
class Pattern:
    pattern: str
    flags: int
    origin: str  # module path (relative to the repository) that compiled it first


def corpus(limit_per_file: int = 2) -> list[str]:
    """Messages to route and parse: the labelled sets and rule examples of the repository."""
    texts: list[str] = []
    data = ROOT / "tests" / "data"
    for path in sorted(data.glob("*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if n >= limit_per_file:
                break
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and isinstance(row.get("text"), str):
                texts.append(row["text"])
    try:
        import yaml

        examples = yaml.safe_load((data / "rule_examples.yaml").read_text(encoding="utf-8")) or {}
        for entry in (examples.get("rules") or {}).values():  # one sentence each way per rule
            if isinstance(entry, dict):
                for key in ("match", "miss"):
                    texts += [t for t in (entry.get(key) or [])[:1] if isinstance(t, str)]
    except Exception:  # the examples only widen coverage
        pass
    texts += ["hello", "你好", "1" * 50, "5月1日到5日，两个大人，预算6000元", "From Shanghai to Hangzhou, May 1 to May 5",
              "报销昨天的出租车费 85 元", "申请5月10日到12日去北京出差", "改到12月21日", "取消我的杭州出差",
              "plan a route from Shanghai to Hangzhou via Suzhou and Jiaxing", "what's the weather in Tokyo tomorrow"]
    return texts


def collect(texts: Iterable[str] | None = None) -> list[Pattern]:
    """Every pattern navigo_core compiles while routing, guarding and parsing ``texts``.

    Must run before ``navigo_core`` is imported (a fresh process: ``python scripts/redos.py collect``)."""
    seen: dict[tuple[str, int], str] = {}
    original = re._compile  # type: ignore[attr-defined]

    def recording(pattern, flags):  # type: ignore[no-untyped-def]
        if isinstance(pattern, str):
            key = (pattern, int(flags))
            if key not in seen:
                frame = sys._getframe(1)
                while frame is not None and os.path.dirname(frame.f_code.co_filename) in _RE_FILES:
                    frame = frame.f_back
                seen[key] = frame.f_code.co_filename if frame is not None else ""
        return original(pattern, flags)

    re._compile = recording  # type: ignore[attr-defined]
    try:
        from datetime import date

        from navigo_core.intent.rules import default_rules
        from navigo_core.scenes import classify
        from navigo_core.security import scan_input
        from navigo_core.understand import parse_request, parse_route, update_request

        rules = default_rules()
        today = date(2026, 3, 10)

        def steps(text: str) -> Iterator[object]:
            yield lambda: rules.check(text)
            yield lambda: classify(text)
            yield lambda: scan_input(text)  # the risk guard reads every message too
            yield lambda: update_request(parse_request(text, today=today), text, today=today, expect="travellers")
            yield lambda: parse_route(text)

        for text in list(texts if texts is not None else corpus()):
            for step in steps(text):
                try:
                    step()  # type: ignore[operator]
                except Exception:  # a part under repair elsewhere must not hide the others' patterns
                    continue
    finally:
        re._compile = original  # type: ignore[attr-defined]
    out = []
    for (pattern, flags), origin in seen.items():
        if origin.startswith(_PKG):
            out.append(Pattern(pattern, flags, os.path.relpath(origin, ROOT)))
    return out


# --- static analysis ---------------------------------------------------------------------

def _parse(p: Pattern):  # type: ignore[no-untyped-def]
    import re._parser as parser  # type: ignore[import-not-found]

    return parser.parse(p.pattern, p.flags & ~re.DEBUG)


def _nullable(items) -> bool:  # type: ignore[no-untyped-def]
    """Whether a parsed sequence can match the empty string."""
    from re._constants import (  # type: ignore[import-not-found]
        ASSERT, ASSERT_NOT, AT, BRANCH, GROUPREF_EXISTS, MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT, SUBPATTERN,
    )

    for op, av in items:
        if op in (AT, ASSERT, ASSERT_NOT):
            continue
        if op in (MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT):
            if av[0] == 0 or _nullable(av[2]):
                continue
            return False
        if op is SUBPATTERN:
            if not _nullable(av[3]):
                return False
            continue
        if op is BRANCH:
            if not any(_nullable(b) for b in av[1]):
                return False
            continue
        if op is GROUPREF_EXISTS:
            continue
        return False
    return True


def _first_chars(items, limit: int = 64) -> set[str] | None:  # type: ignore[no-untyped-def]
    """Characters a sequence can start with (None: too many / any)."""
    from re._constants import (  # type: ignore[import-not-found]
        ANY, ASSERT, ASSERT_NOT, AT, BRANCH, CATEGORY, IN, LITERAL, MAX_REPEAT, MIN_REPEAT, NEGATE,
        NOT_LITERAL, POSSESSIVE_REPEAT, RANGE, SUBPATTERN,
    )

    out: set[str] = set()
    for op, av in items:
        if op in (AT, ASSERT, ASSERT_NOT):
            continue
        if op is LITERAL:
            out.add(chr(av))
            return out
        if op in (ANY, NOT_LITERAL, CATEGORY):
            return None
        if op is IN:
            for sop, sav in av:
                if sop is LITERAL:
                    out.add(chr(sav))
                elif sop is RANGE:
                    if sav[1] - sav[0] > limit:
                        return None
                    out.update(chr(c) for c in range(sav[0], sav[1] + 1))
                elif sop in (NEGATE, CATEGORY):
                    return None
            return out
        if op is SUBPATTERN:
            sub = _first_chars(av[3], limit)
            if sub is None:
                return None
            out |= sub
            if not _nullable(av[3]):
                return out
            continue
        if op is BRANCH:
            for b in av[1]:
                sub = _first_chars(b, limit)
                if sub is None:
                    return None
                out |= sub
            if not any(_nullable(b) for b in av[1]):
                return out
            continue
        if op in (MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT):
            sub = _first_chars(av[2], limit)
            if sub is None:
                return None
            out |= sub
            if av[0] > 0 and not _nullable(av[2]):
                return out
            continue
        return None
    return out


def static_findings(p: Pattern) -> list[str]:
    """Exponential-backtracking shapes in ``p`` (empty when none)."""
    from re._constants import (  # type: ignore[import-not-found]
        BRANCH, IN, LITERAL, MAXREPEAT, MAX_REPEAT, MIN_REPEAT, SUBPATTERN, ANY, CATEGORY, NOT_LITERAL,
    )

    findings: list[str] = []

    def unwrap(items):  # type: ignore[no-untyped-def]
        while len(items) == 1 and items[0][0] is SUBPATTERN:
            items = items[0][1][3]
        return items

    def walk(items, depth: int = 0) -> None:  # type: ignore[no-untyped-def]
        for op, av in items:
            if op in (MAX_REPEAT, MIN_REPEAT):
                lo, hi, body = av
                body = unwrap(body)
                big = hi is MAXREPEAT or hi > 50
                if big:
                    inner = [(o, a) for o, a in body if o in (MAX_REPEAT, MIN_REPEAT) and a[1] != a[0]
                             and (a[1] is MAXREPEAT or a[1] > 1) and not _nullable(a[2])]  # variable width
                    rest_nullable = [(o, a) for o, a in body if (o, a) not in inner]
                    if inner and _nullable(rest_nullable):
                        findings.append(f"nested quantifier: a repeat whose body is another repeat ({p.pattern[:80]!r})")
                    if len(body) == 1 and body[0][0] is BRANCH:
                        singles = []
                        for b in body[0][1][1]:
                            b = unwrap(b)
                            if len(b) == 1 and b[0][0] in (LITERAL, IN, ANY, CATEGORY, NOT_LITERAL):
                                singles.append(_first_chars(b) or {"<any>"})
                        for i in range(len(singles)):
                            for j in range(i + 1, len(singles)):
                                if singles[i] & singles[j] or "<any>" in singles[i] | singles[j]:
                                    findings.append(f"repeated alternatives that match the same character ({p.pattern[:80]!r})")
                walk(body, depth + 1)
            elif op is SUBPATTERN:
                walk(av[3], depth)
            elif op is BRANCH:
                for b in av[1]:
                    walk(b, depth)
            elif op in (re._constants.ASSERT, re._constants.ASSERT_NOT):  # type: ignore[attr-defined]
                walk(av[1], depth)

    walk(list(_parse(p)))
    return sorted(set(findings))


# --- adversarial inputs --------------------------------------------------------------------

def _pump_chars(p: Pattern, limit: int = 8) -> list[str]:
    """A representative character of each class or literal in the pattern, repeated ones first."""
    from re._constants import (  # type: ignore[import-not-found]
        BRANCH, CATEGORY, IN, LITERAL, MAX_REPEAT, MIN_REPEAT, RANGE, SUBPATTERN, ASSERT, ASSERT_NOT,
        CATEGORY_DIGIT, CATEGORY_SPACE, CATEGORY_WORD, NEGATE, NOT_LITERAL, ANY,
    )
    cat = {CATEGORY_DIGIT: "1", CATEGORY_SPACE: " ", CATEGORY_WORD: "a"}
    repeated: list[str] = []
    plain: list[str] = []

    def reps(sop, sav) -> list[str]:  # type: ignore[no-untyped-def]
        if sop is LITERAL:
            return [chr(sav)]
        if sop is RANGE:
            return [chr(sav[0]), chr(sav[1])]
        if sop is CATEGORY:
            return [cat.get(sav, "a")]
        return []

    def walk(items, inside: bool) -> None:  # type: ignore[no-untyped-def]
        target = repeated if inside else plain
        for op, av in items:
            if op is LITERAL:
                target.append(chr(av))
            elif op is NOT_LITERAL:
                target.append("a" if chr(av) != "a" else "b")
            elif op is ANY:
                target.append("a")
            elif op is IN:
                negated = any(s is NEGATE for s, _ in av)
                if negated:
                    target.append("a")
                for sop, sav in av:
                    if not negated:
                        target += reps(sop, sav)
            elif op is CATEGORY:
                target.append(cat.get(av, "a"))
            elif op in (MAX_REPEAT, MIN_REPEAT):
                walk(av[2], inside or av[1] > 1)
            elif op is SUBPATTERN:
                walk(av[3], inside)
            elif op is BRANCH:
                for b in av[1]:
                    walk(b, inside)
            elif op in (ASSERT, ASSERT_NOT):
                walk(av[1], inside)

    walk(list(_parse(p)), False)
    out: list[str] = []
    for c in repeated + plain:
        if c not in out and c not in "\n\r\t\x0b\x0c":
            out.append(c)
    return out[:limit]


def _words(p: Pattern, limit: int = 4) -> list[str]:
    """Literal runs of the pattern ("budget", "预算"), longest first."""
    words = re.findall(r"[A-Za-z\u4e00-\u9fff]{2,}", re.sub(r"\\[A-Za-z]", " ", p.pattern))
    return sorted(set(words), key=lambda w: (-len(w), w))[:limit]


def normalise(text: str) -> str:
    """What every entry point does before a pattern runs (rules.normalize, understand.normalize_text)."""
    return re.sub(r"\s+", " ", text)


def adversarial_inputs(p: Pattern, n: int) -> list[tuple[str, str]]:
    """(label, text of about ``n`` characters) inputs that pump ``p``."""
    chars = _pump_chars(p)
    out: list[tuple[str, str]] = [("1*n", "1" * n), ("a*n", "a" * n), ("一*n", "一" * n)]
    for c in chars:
        out.append((f"{c!r}*n", c * n))
    for i, a in enumerate(chars[:5]):
        for b in chars[i + 1:5]:
            out.append((f"({a!r}{b!r})*n", (a + b) * (n // 2)))
    for w in _words(p):
        out.append((f"{w!r}+' '", (w + " ") * (n // (len(w) + 1))))
        out.append((f"{w!r}+1", (w + "1") * (n // (len(w) + 1))))
        out.append((f"{w!r}*n", w * (n // len(w))))
    seen: set[str] = set()
    unique = []
    for label, text in out:
        text = normalise(text)
        if text not in seen:
            seen.add(text)
            unique.append((label, text))
    return unique


def measure(compiled: re.Pattern[str], text: str, reps: int = 2) -> float:
    """Best CPU time (s) of this thread running ``compiled`` over the whole of ``text`` (finditer, as the
    rules do). CPU time, not wall time: other processes on a busy machine do not count against it."""
    best = float("inf")
    for _ in range(reps):
        start = time.thread_time()
        for _m in compiled.finditer(text):
            pass
        best = min(best, time.thread_time() - start)
    return best


@dataclass
class Timing:
    pattern: Pattern
    label: str
    small_s: float
    large_s: float

    @property
    def growth(self) -> float:
        return self.large_s / max(self.small_s, 1e-7)


def scan(patterns: Iterable[Pattern], small: int = 10_000, large: int = 100_000,
         give_up_s: float = 2.0) -> Iterator[Timing]:
    """Time every (pattern, adversarial input) at ``small`` and ``large`` characters. A run at ``small``
    that already takes ``give_up_s`` is reported without running ``large`` (its large time is then
    extrapolated as quadratic)."""
    for p in patterns:
        compiled = re.compile(p.pattern, p.flags)
        small_inputs = dict(adversarial_inputs(p, small))
        for label, big in adversarial_inputs(p, large):
            little = small_inputs.get(label, big[:small])
            t_small = measure(compiled, little)
            if t_small > give_up_s:
                yield Timing(p, label, t_small, t_small * (large / small) ** 2)
                continue
            yield Timing(p, label, t_small, measure(compiled, big))


# A linear pattern's time grows like the input; a quadratic one's like its square. Each suspect is timed at
# two sizes in the same run and judged by that growth (its own linear baseline), never by a fixed time.
# The larger input is FACTOR times the smaller: linear ≈ 4, quadratic ≈ 16, so only a noise of 2× on the
# best of the interleaved runs could move a verdict across SUPERLINEAR_GROWTH (at 2× the sizes the margin
# was 1.3×-1.5×, and a busy CI machine once measured a quadratic pattern's growth below 3).
FACTOR = 4
SUPERLINEAR_GROWTH = 8.0   # time ratio for FACTOR times the input: linear ≈ 4, quadratic ≈ 16, cubic ≈ 64
NOTICEABLE_S = 0.02        # below this at the larger size the growth is noise
REPS = 3


def growth_of(compiled: re.Pattern[str], one: str, big: str, reps: int = REPS) -> tuple[float, float]:
    """Best CPU time at each size, the two sizes measured alternately so that a slow spell of the machine
    falls on both rather than on one."""
    t1 = t2 = float("inf")
    for _ in range(reps):
        t1 = min(t1, measure(compiled, one, reps=1))
        t2 = min(t2, measure(compiled, big, reps=1))
    return t1, t2


def report(patterns: list[Pattern], small: int = 5_000, probe: int = 2_000, top: int = 40,
           skip: Callable[[Pattern], bool] | None = None) -> dict[str, object]:
    """Two phases. (1) Every (pattern, adversarial input) once at ``probe`` characters. (2) For the
    ``top`` slowest patterns (each with its slowest input; ``skip`` leaves out patterns already known),
    the time at ``small`` and at ``FACTOR * small`` characters, best of three interleaved runs: a pattern
    whose time grows more than ``SUPERLINEAR_GROWTH`` times for FACTOR times the input is super-linear."""
    slowest: dict[Pattern, tuple[float, str]] = {}
    inputs = 0
    for p in patterns:
        compiled = re.compile(p.pattern, p.flags)
        for label, text in adversarial_inputs(p, probe):
            inputs += 1
            t = measure(compiled, text, reps=1)
            if t > slowest.get(p, (-1.0, ""))[0]:
                slowest[p] = (t, label)
    ranked = sorted(slowest.items(), key=lambda kv: -kv[1][0])
    rows = []
    for p, (_, label) in [kv for kv in ranked if not (skip and skip(kv[0]))][:top]:
        compiled = re.compile(p.pattern, p.flags)
        one, big = dict(adversarial_inputs(p, small))[label], dict(adversarial_inputs(p, FACTOR * small))[label]
        t1, t2 = growth_of(compiled, one, big)
        superlinear = t2 > NOTICEABLE_S and t2 / max(t1, 1e-7) > SUPERLINEAR_GROWTH
        rows.append({"pattern": p.pattern, "flags": p.flags, "origin": p.origin, "input": label,
                     "small_s": t1, "large_s": t2, "factor": FACTOR, "growth": t2 / max(t1, 1e-7),
                     "superlinear": superlinear})
    return {"patterns": len(patterns), "inputs": inputs, "small": small,
            "static": [{"pattern": p.pattern, "origin": p.origin, "finding": f}
                       for p in patterns for f in static_findings(p)],
            "timings": rows}


# Patterns known to be super-linear, in files this checker's owner may not change; each names its fix.
# tests/unit/test_redos.py fails on any other; remove an entry once its pattern is fixed.
KNOWN: list[tuple[str, str, str]] = []  # every pattern found super-linear has been bounded


def known(p: Pattern) -> str | None:
    """The proposed fix when ``p`` is a known super-linear pattern, else None."""
    for origin, needle, fix in KNOWN:
        if p.origin == origin and needle in p.pattern:
            return fix
    return None


def _main(argv: list[str]) -> int:
    """``python scripts/redos.py collect`` prints the patterns as JSON lines; ``report`` prints the
    two-phase report as one JSON object; ``scan SMALL LARGE`` times every (pattern, input) at both sizes."""
    sys.path.insert(0, str(ROOT))
    patterns = collect()
    if argv[:1] == ["collect"]:
        for p in patterns:
            print(json.dumps({"pattern": p.pattern, "flags": p.flags, "origin": p.origin}, ensure_ascii=False))
        return 0
    if argv[:1] == ["report"]:
        print(json.dumps(report(patterns, skip=lambda p: known(p) is not None), ensure_ascii=False))
        return 0
    small, large = (int(argv[1]), int(argv[2])) if len(argv) >= 3 else (10_000, 100_000)
    for timing in scan(patterns, small, large):
        print(json.dumps({"pattern": timing.pattern.pattern, "flags": timing.pattern.flags,
                          "origin": timing.pattern.origin, "input": timing.label, "small_s": timing.small_s,
                          "large_s": timing.large_s}, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
