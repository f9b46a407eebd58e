"""Issue 14 fuzz suite (hypothesis): the request parser, the command line and ``optimize``.

Whatever comes in, each answers within its limits or with its own error (``InputError`` /
exit code 2) — never another exception, never a value past a limit. (The CSV importer and the
policy loader are fuzzed with their own tests.)
"""

from __future__ import annotations

import io
import math
from contextlib import redirect_stderr, redirect_stdout
from datetime import date

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from navigo_core.cli import main
from navigo_core.errors import InputError, NavigoError
from navigo_core.limits import current
from navigo_core.providers.places import GazetteerPlaceProvider
from navigo_core.route.solver import optimize
from navigo_core.understand import parse_request, update_request

pytestmark = pytest.mark.usefixtures("no_internet")

TODAY = date(2026, 3, 10)
P = GazetteerPlaceProvider()
LIM = current()
EARLIEST, LATEST = LIM.date_window(TODAY)

# --- text that looks like requests: dates, counts, budgets, places, noise ------------------------

NUMBER = st.one_of(st.integers(-5, 10**6).map(str), st.sampled_from(["0", "1e20", "1e309", "NaN", "-1", "1,000,000",
                                                                         "一万五", "两", "十二", "9" * 40, "1.5万"]))
DATE = st.one_of(
    st.dates(date(1, 1, 1), date(9999, 12, 31)).map(lambda d: d.isoformat()),
    st.builds(lambda m, d: f"{m}月{d}日", st.integers(0, 14), st.integers(0, 40)),
    st.builds(lambda m, d: f"{m} {d}", st.sampled_from(["May", "Dec", "feb", "April"]), st.integers(0, 40)),
    st.sampled_from(["this weekend", "下周五", "国庆", "Christmas", "next month", "tomorrow", "5号回来"]),
)
PIECE = st.one_of(
    st.builds(lambda a, b: f"{a} to {b}", DATE, DATE),
    st.builds(lambda a, b: f"{a}到{b}", DATE, DATE),
    st.builds(lambda n, w: f"{n} {w}", NUMBER, st.sampled_from(["adults", "kids", "people", "days", "nights", "weeks",
                                                              "大人", "个孩子", "人", "天", "元", "CNY", "USD"])),
    st.builds(lambda n: f"budget {n}", NUMBER), st.builds(lambda n: f"预算{n}元", NUMBER),
    st.sampled_from(["From Shanghai to Hangzhou", "去杭州", "from Paris", "to Springfield", "上海出发", "with my wife",
                     "一家三口", "两大一小", "solo", "喜欢喝茶和徒步"]),
    st.text(max_size=30),
)
REQUEST = st.lists(PIECE, max_size=6).map(", ".join)


def assert_within_limits(req) -> None:  # type: ignore[no-untyped-def]
    assert len(req.text) <= max(LIM.message_chars, 1) * 2 + 1  # update_request joins the turns
    for d in (req.start_date, req.end_date):
        assert d is None or EARLIEST <= d <= LATEST
    if req.start_date and req.end_date:
        assert req.end_date >= req.start_date and (req.end_date - req.start_date).days + 1 <= LIM.trip_days
    assert req.days is None or 1 <= req.days <= LIM.trip_days
    assert (req.travellers or 0) <= LIM.travellers_max
    assert req.adults != 0 or req.children  # never a party of nobody
    assert req.budget is None or (math.isfinite(req.budget.amount) and req.budget.amount > 0)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(REQUEST, st.text(max_size=200)))
def test_parse_request_never_raises_and_keeps_every_limit(text: str) -> None:
    assert_within_limits(parse_request(text, today=TODAY, places=P))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(REQUEST, REQUEST, st.sampled_from([None, "destination", "origin", "dates", "days", "travellers", "budget"]))
def test_update_request_never_raises_and_keeps_every_limit(first: str, second: str, expect: str | None) -> None:
    req = parse_request(first, today=TODAY, places=P)
    assert_within_limits(update_request(req, second, today=TODAY, places=P, expect=expect))


@settings(max_examples=20, deadline=None)
@given(st.sampled_from("1a一 号天日,.-"), st.integers(10_000, 200_000))
def test_long_runs_are_cut_before_any_rule(char: str, n: int) -> None:
    req = parse_request(char * n, today=TODAY, places=P)
    assert len(req.text) <= LIM.message_chars


# --- the command line -----------------------------------------------------------------------------

def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: usage errors exit 2 with one line
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


ARG = st.one_of(st.text(max_size=40), st.sampled_from(["上海", "杭州", "苏州", "31.2,121.4", "999,999", "", " ",
                                                       "Springfield", "x" * 300, "--json", "-"]))


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("LLM_API_KEY", "OPENAI_API_KEY", "OSRM_URL", "AMAP_KEY", "NOMINATIM_URL", "DUFFEL_ACCESS_TOKEN"):
        monkeypatch.delenv(var, raising=False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(ARG, ARG, st.lists(ARG, max_size=4), st.sampled_from(["fastest", "shortest", "balanced", "nope"]),
       st.booleans())
def test_cli_route_answers_or_exits_2_in_one_line(origin: str, dest: str, stops: list[str], strategy: str,
                                                  as_json: bool) -> None:
    argv = ["route", "--origin", origin, "--destination", dest, *[a for s in stops for a in ("--stop", s)],
            "--strategy", strategy, "--provider", "offline", *(["--json"] if as_json else [])]
    code, out, err = run(argv)
    assert code in (0, 2), (code, err)
    if code == 2:
        assert out == "" and err.count("\n") == 1 and len(err) < 800


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(st.one_of(REQUEST, st.text(max_size=60)), st.sampled_from(["intent", "plan"]))
def test_cli_intent_and_plan_answer_or_exit_2(text: str, command: str) -> None:
    argv = [command, "--offline", "--text", text] if command == "intent" else [command, text, "--json"]
    code, out, err = run(argv)
    assert code in (0, 2), (code, err)
    if code == 2:
        assert err.count("\n") == 1 and len(err) < 800
    else:
        assert out.strip()


# --- optimize ---------------------------------------------------------------------------------------

def matrices(max_n: int) -> st.SearchStrategy[np.ndarray]:
    return st.integers(1, max_n).flatmap(lambda n: st.lists(
        st.lists(st.floats(0, 1e6, allow_nan=False), min_size=n, max_size=n), min_size=n, max_size=n)).map(np.array)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matrices(9), st.data())
def test_optimize_returns_a_valid_order_or_an_input_error(m: np.ndarray, data: st.DataObject) -> None:
    n = len(m)
    start = data.draw(st.integers(-1, n))
    end = data.draw(st.integers(-1, n))
    pinned = data.draw(st.one_of(st.none(), st.dictionaries(st.integers(-1, n), st.integers(-1, n + 1), max_size=3)))
    groups = data.draw(st.one_of(st.none(), st.lists(st.lists(st.integers(-1, n), max_size=3), max_size=2)))
    try:
        r = optimize(m, start, end, 0.2, pinned=pinned, keep_together=groups, k_best=data.draw(st.integers(0, 3)))
    except InputError as exc:
        assert exc.message("en") and exc.message("zh")
        return
    visits = r.order[:-1] if start == end else r.order
    assert r.order[0] == start and r.order[-1] == end and sorted(visits) == list(range(n))
    for node, pos in (pinned or {}).items():
        assert r.order[pos] == node
    assert math.isclose(r.cost, sum(m[a][b] for a, b in zip(r.order, r.order[1:]) if a != b), rel_tol=1e-9, abs_tol=1e-6)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(19, 60), st.integers(0, 2**16))
def test_optimize_heuristic_sizes_keep_their_time_limit_contract(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    pts = rng.random((n, 2))
    m = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))
    r = optimize(m, 0, n - 1, 0.05, seed=seed)
    assert r.method == "heuristic" and sorted(r.order) == list(range(n))


BAD = st.one_of(st.none(), st.text(max_size=5), st.just(float("nan")), st.just(float("inf")), st.just(-1.0),
                st.just(True), st.lists(st.integers(), max_size=3), st.just({}), st.just(10**30))


@settings(max_examples=120, deadline=None)
@given(BAD, BAD, BAD, BAD)
def test_optimize_rejects_garbage_with_an_input_error(matrix: object, start: object, end: object, limit: object) -> None:
    assume(not (isinstance(matrix, list) and matrix == []))
    try:
        optimize(matrix if not isinstance(matrix, list) else [matrix], start, end, limit)
    except InputError:
        return
    except NavigoError as exc:  # pragma: no cover - any other error class is a bug
        raise AssertionError(exc) from exc
