"""Turn the Route page's stop table into a RouteRequest, and back.

Rows are dicts with ``place`` (name or ``lat,lon``), optional ``pin`` (1-based
position among the stops) and optional ``group`` (stops that share a group
label are kept together, in table order). Rows whose place is empty are rows
the user has not filled in and are dropped; a row holding only spaces is kept
so the guardrail can name it.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from navigo_core.route.models import RouteRequest


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def request_from_rows(rows: Iterable[dict[str, Any]], **fields: Any) -> RouteRequest:
    """A RouteRequest from table rows plus the other form ``fields``."""
    stops: list[str] = []
    pins: dict[int, int] = {}
    groups: dict[str, list[int]] = {}
    for row in rows:
        place = row.get("place")
        if _blank(place):
            continue
        idx = len(stops)
        stops.append(str(place))
        pin = row.get("pin")
        if not _blank(pin):
            pins[idx] = int(pin)
        group = row.get("group")
        if not _blank(group) and str(group).strip():
            groups.setdefault(str(group).strip(), []).append(idx)
    return RouteRequest(stops=stops, pins=pins, groups=[g for g in groups.values() if len(g) > 1], **fields)


def rows_from_request(req: RouteRequest) -> list[dict[str, Any]]:
    """The table rows that reproduce ``req`` (used to reopen a saved route)."""
    group_of: dict[int, str] = {}
    for gi, group in enumerate(req.groups, start=1):
        for idx in group:
            group_of[idx] = f"G{gi}"
    return [
        {"place": stop, "pin": req.pins.get(i), "group": group_of.get(i)}
        for i, stop in enumerate(req.stops)
    ]
