"""The Route page's stop table ⇄ RouteRequest."""

from __future__ import annotations

import math

from navigo_core.route.form import request_from_rows, rows_from_request


def test_rows_become_a_request_with_pins_and_groups() -> None:
    rows = [
        {"place": "苏州", "pin": 2.0, "group": None},
        {"place": None, "pin": None, "group": None},  # an untouched new row
        {"place": "嘉兴", "pin": math.nan, "group": "A"},
        {"place": "无锡", "pin": None, "group": "A"},
        {"place": "常州", "pin": None, "group": "B"},  # a group of one is no constraint
        {"place": "  ", "pin": None, "group": None},  # kept: the guardrail names it
    ]
    req = request_from_rows(rows, origin="上海", destination="杭州")
    assert req.stops == ["苏州", "嘉兴", "无锡", "常州", "  "]
    assert req.pins == {0: 2}
    assert req.groups == [[1, 2]]
    assert req.origin == "上海"


def test_round_trip_through_rows() -> None:
    req = request_from_rows([{"place": "a", "pin": 1}, {"place": "b", "group": "g"}, {"place": "c", "group": "g"}],
                            origin="o", destination="d")
    again = request_from_rows(rows_from_request(req), origin="o", destination="d")
    assert again == req
