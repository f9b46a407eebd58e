"""Weather scene: answered by ``context.weather`` (a :class:`WeatherProvider`) when one exists.

Offline (``context.weather`` is None) the reply says, in the user's language,
that no weather service is configured. With a provider and no place in the
message the reply asks for the place and starts the ``weather`` flow, so the
next message ("Paris") is read as the place.
"""

from __future__ import annotations

from datetime import date

from navigo_core.errors import NavigoError
from navigo_core.i18n import t
from navigo_core.scenes.descriptor import (
    ActiveFlow,
    GateContext,
    SceneDescriptor,
    SceneReply,
    SceneRoute,
    WeatherProvider,
    WeatherReport,
)
from navigo_core.understand import ParsedRequest, normalize_text, parse_request, update_request

__all__ = ["SCENE", "WeatherProvider", "WeatherReport", "extract_weather_query"]

FLOW_ID = "weather"
def extract_weather_query(message: str, *, today: date | None = None) -> tuple[str, int]:
    """(place, day offset 0–2) named in a weather question; place "" when none.

    Both come from :mod:`navigo_core.understand`: the place is the request's destination (or
    origin), else a known place name without a cue word ("明天杭州的天气"); the day is the start
    date against ``today`` (today / tomorrow / the day after → 0 / 1 / 2; anything else → 0).
    """
    today = today or date.today()
    text = normalize_text(message)
    req = parse_request(text, today=today)
    place = req.destination_text or req.origin_text or ""
    day = (req.start_date - today).days if req.start_date else 0
    return place, day if 0 <= day <= 2 else 0


def _answer_place(message: str, lang: str) -> str:
    """The place in an answer to "which place?" (a bare name is taken as written)."""
    req = update_request(ParsedRequest(lang=lang), message, today=date.today(), expect="destination")
    return req.destination_text or req.origin_text or normalize_text(message).strip(" ?？!！。.,，")


def _report_text(report: WeatherReport, lang: str) -> str:
    parts = [t("scene.weather.report", lang, place=report.place, day=t(f"scene.weather.day.{min(report.day, 2)}", lang),
               summary=report.summary)]
    if report.temperature_c is not None:
        parts.append(t("scene.weather.temp", lang, temp=f"{report.temperature_c:.0f}"))
    if report.low_c is not None and report.high_c is not None:
        parts.append(t("scene.weather.range", lang, low=f"{report.low_c:.0f}", high=f"{report.high_c:.0f}"))
    return " ".join(parts)


def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    flow = context.active_flow
    if flow is not None and flow.flow_id == FLOW_ID:
        place, day = extract_weather_query(message)
        place = place or _answer_place(message, lang)
        day = day or int(flow.slots.get("day", 0))
    else:
        place, day = extract_weather_query(message)
    payload = {"place": place, "day": day}
    provider = context.weather
    if provider is None:
        key = "scene.weather.offline_place" if place else "scene.weather.offline"
        return SceneReply(scene_id=SCENE.scene_id, text=t(key, lang, place=place), lang=lang,
                          payload=payload | {"provider": None})
    if not place:
        return SceneReply(scene_id=SCENE.scene_id, text=t("scene.weather.ask_place", lang), lang=lang, asks=True,
                          payload=payload, flow=ActiveFlow(flow_id=FLOW_ID, scene_id=SCENE.scene_id, slots={"day": day}))
    try:
        report = provider.forecast(place, day=day, lang=lang)
    except NavigoError as exc:
        return SceneReply(scene_id=SCENE.scene_id, text=exc.message(lang), lang=lang, error=True,
                          payload=payload | {"provider": getattr(provider, "name", "")})
    return SceneReply(scene_id=SCENE.scene_id, text=_report_text(report, lang), lang=lang,
                      payload=payload | {"provider": getattr(provider, "name", ""), "report": report.model_dump()})


SCENE = SceneDescriptor(
    scene_id="weather",
    label="scene.weather.label",
    signal_keywords=("weather", "forecast", "天气", "气温", "下雨"),
    ontology_fields=("place", "day"),
    route=SceneRoute(),
    handler=handle,
    can_resume=True,
    flow_id=FLOW_ID,
    priority=30,
    capability="scene.weather.capability",
    prompt_fragment="scene.weather.prompt",
)
