"""Sanity checks of the hand-labelled request sets (format and label consistency, not the parser).

``tests/data/requests.jsonl`` (development set) and ``benchmarks/data/requests_fresh.jsonl``
(never used for tuning) are scored by ``benchmarks/bench_understand.py``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import date
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
FILES = {"dev": ROOT / "tests" / "data" / "requests.jsonl", "fresh": ROOT / "benchmarks" / "data" / "requests_fresh.jsonl"}
MIN_ROWS = {"dev": 160, "fresh": 80}
FIELDS = {"origin", "destination", "start_date", "end_date", "days", "adults", "children", "budget",
          "ambiguities", "interests"}
AMBIGUITY_FIELDS = {"origin", "destination", "dates", "budget", "travellers"}


def _interest_ids() -> set[str]:
    for rel in ("navigo_core/understand/data/interests.yaml", "navigo_core/planner/data/interests.yaml"):
        if (ROOT / rel).exists():
            return set(yaml.safe_load((ROOT / rel).read_text(encoding="utf-8")))
    pytest.skip("no interests.yaml")


def _rows(name: str) -> list[dict]:
    lines = FILES[name].read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _iso(value: str | None) -> date | None:
    if value is None:
        return None
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", value), value
    return date.fromisoformat(value)


@pytest.mark.parametrize("name", sorted(FILES))
def test_rows_are_well_formed_and_consistent(name: str) -> None:
    rows = _rows(name)
    interests = _interest_ids()
    assert len(rows) >= MIN_ROWS[name]
    langs = Counter(r["lang"] for r in rows)
    assert set(langs) == {"en", "zh"} and abs(langs["en"] - langs["zh"]) <= len(rows) * 0.1, langs
    assert len({r["text"] for r in rows}) == len(rows), "duplicate texts"
    for r in rows:
        where = r["text"]
        assert set(r) == {"text", "lang", "today", "expect", "tags"}, where
        assert isinstance(r["tags"], list) and all(isinstance(t, str) for t in r["tags"]), where
        _iso(r["today"])
        exp = r["expect"]
        assert exp and set(exp) <= FIELDS, where
        for role in ("origin", "destination"):
            if exp.get(role) is not None:
                assert exp[role] in r["text"], f"{role} not written as in the text: {where}"
        start, end = _iso(exp.get("start_date")), _iso(exp.get("end_date"))
        if start and end:
            assert end >= start, where
            if exp.get("days") is not None:
                assert exp["days"] == (end - start).days + 1, where
        for key in ("days", "adults", "children"):
            if exp.get(key) is not None:
                assert isinstance(exp[key], int) and exp[key] >= 0, where
        if exp.get("budget") is not None:
            assert exp["budget"]["amount"] > 0 and re.fullmatch(r"[A-Z]{3}", exp["budget"]["currency"]), where
        if "ambiguities" in exp:
            assert exp["ambiguities"] and set(exp["ambiguities"]) <= AMBIGUITY_FIELDS, where
            if "dates" in exp["ambiguities"]:
                assert exp.get("start_date", "x") is None and exp.get("end_date", "x") is None, where
        if "interests" in exp:
            assert exp["interests"] and set(exp["interests"]) <= interests, where


def test_fresh_set_uses_other_places_than_the_dev_set() -> None:
    def places(name: str) -> set[str]:
        return {r["expect"][k].casefold() for r in _rows(name) for k in ("origin", "destination") if r["expect"].get(k)}

    assert not places("dev") & places("fresh")
