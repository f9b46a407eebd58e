"""Weather agent: one ``DailyWeather`` per trip day at the destination (risk HIGH/MEDIUM/LOW).

Owns: ``weather``. A provider failure gives an empty list and a risk flag (never invented weather).
"""

from __future__ import annotations

from typing import Any

from navigo_core.errors import NavigoError
from navigo_core.planner.agents._common import entry, required
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.state import PlannerState

NAME = "weather"


def ready(state: PlannerState) -> bool:
    return state.user_request is not None and state.weather is None and not state.blocked


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    if not ready(state):
        return {}
    req = required(state.user_request, "the user request")
    dest = req.destination
    flags: list[str] = []
    days: list[Any] = []
    evidence: list[str] = []
    if dest is not None and req.start_date and req.end_date:
        try:
            days = deps.weather.forecast(dest.lat, dest.lon, req.start_date, req.end_date,
                                         today=deps.today())
        except NavigoError as exc:
            flags.append("WEATHER_UNAVAILABLE")
            evidence.append(f"provider error: {exc.code}")
    high = [d.date.isoformat() for d in days if d.available and d.risk == "HIGH"]
    available = sum(1 for d in days if d.available)
    evidence += [f"provider: {getattr(deps.weather, 'name', '?')}", f"days forecast: {available}/{len(days)}",
                 f"HIGH-risk days: {len(high)}"]
    update: dict[str, Any] = {"weather": days}
    update.update(entry(NAME, deps, input_summary=f"{getattr(dest, 'name', '-')}, {req.start_date}–{req.end_date}",
                        evidence=evidence, risk_flags=flags,
                        output_summary=f"{len(days)} day(s); HIGH risk: {', '.join(high) or 'none'}"))
    return update
