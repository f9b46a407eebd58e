"""Weather scene: answered by ``context.weather``, the one :class:`~navigo_core.providers.weather.WeatherProvider`
protocol the planner uses too (Open-Meteo with ``WEATHER_ONLINE=true``, else the offline provider).

The place named in the message is resolved by the request parser against ``context.places`` (the
gazetteer by default); an ambiguous name becomes a question with the candidates, an unknown one says
so; a name is never replaced by another place. Offline (no provider, or the offline one) the reply says,
in the user's language, that no weather service is configured. With a provider and no place in the
message the reply asks for the place and starts the ``weather`` flow, so the next message ("Paris") is
read as the place.
"""

from __future__ import annotations

from datetime import date, timedelta

from navigo_core.errors import NavigoError
from navigo_core.i18n import t
from navigo_core.providers.places import Place
from navigo_core.providers.weather import DailyWeather, WeatherProvider
from navigo_core.scenes.descriptor import ActiveFlow, GateContext, SceneDescriptor, SceneReply, SceneRoute
from navigo_core.understand import Ambiguity, ParsedRequest, normalize_text, parse_request, update_request

__all__ = ["SCENE", "WeatherProvider", "extract_weather_query"]

FLOW_ID = "weather"


def _day(req: ParsedRequest, today: date) -> int:
    day = (req.start_date - today).days if req.start_date else 0
    return day if 0 <= day <= 2 else 0


def _read(message: str, context: GateContext | None, today: date) -> ParsedRequest:
    return parse_request(normalize_text(message), today=today, places=context.places if context else None)


def extract_weather_query(message: str, *, today: date | None = None) -> tuple[str, int]:
    """(place, day offset 0–2) named in a weather question; place "" when none.

    Both come from :mod:`navigo_core.understand`: the place is the request's destination (or
    origin), else a known place name without a cue word ("明天杭州的天气"); the day is the start
    date against ``today`` (today / tomorrow / the day after → 0 / 1 / 2; anything else → 0).
    """
    today = today or date.today()
    req = _read(message, None, today)
    return req.destination_text or req.origin_text or "", _day(req, today)


def _resolved(req: ParsedRequest) -> tuple[Place | None, Ambiguity | None]:
    """The place the request names (destination first), or the question its name leaves open."""
    for field in ("destination", "origin"):
        place, amb = getattr(req, field), req.ambiguity(field)
        if place is not None or amb is not None:
            return place, amb
    return None, None


def _offline(provider: WeatherProvider | None) -> bool:
    return provider is None or getattr(provider, "name", "") == "offline"


def _report_text(place: str, day: int, weather: DailyWeather, lang: str) -> str:
    when = t(f"scene.weather.day.{min(day, 2)}", lang)
    if not weather.available:
        return t("scene.weather.no_forecast", lang, place=place, day=when)
    parts = [t("scene.weather.report", lang, place=place, day=when, summary=t(weather.summary, lang))]
    if weather.temp_min_c is not None and weather.temp_max_c is not None:
        parts.append(t("scene.weather.range", lang, low=f"{weather.temp_min_c:.0f}", high=f"{weather.temp_max_c:.0f}"))
    if weather.precipitation_probability is not None:
        parts.append(t("scene.weather.rain_chance", lang, percent=weather.precipitation_probability))
    return " ".join(parts)


def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    today = date.today()
    flow = context.active_flow
    req = _read(message, context, today)
    place_text = req.destination_text or req.origin_text or ""
    day = _day(req, today)
    if flow is not None and flow.flow_id == FLOW_ID:
        if not place_text:  # an answer to "which place?": a bare name is taken as written
            req = update_request(ParsedRequest(lang=lang), message, today=today, places=context.places,
                                 expect="destination")
            place_text = req.destination_text or req.origin_text or normalize_text(message).strip(" ?？!！。.,，")
        day = day or int(flow.slots.get("day", 0))
    payload: dict[str, object] = {"place": place_text, "day": day}
    provider = context.weather
    if _offline(provider):
        key = "scene.weather.offline_place" if place_text else "scene.weather.offline"
        return SceneReply(scene_id=SCENE.scene_id, text=t(key, lang, place=place_text), lang=lang,
                          payload=payload | {"provider": None})
    assert provider is not None
    if not place_text:
        return SceneReply(scene_id=SCENE.scene_id, text=t("scene.weather.ask_place", lang), lang=lang, asks=True,
                          payload=payload, flow=ActiveFlow(flow_id=FLOW_ID, scene_id=SCENE.scene_id, slots={"day": day}))
    place, ambiguity = _resolved(req)
    if place is None:
        if ambiguity is not None and ambiguity.candidates:
            text = t("scene.weather.which_place", lang, place=place_text, options="; ".join(ambiguity.candidates[:5]))
        else:
            text = t("scene.weather.unknown_place", lang, place=place_text)
        return SceneReply(scene_id=SCENE.scene_id, text=text, lang=lang, asks=True,
                          payload=payload | {"provider": provider.name,
                                             "candidates": ambiguity.candidates[:5] if ambiguity else []},
                          flow=ActiveFlow(flow_id=FLOW_ID, scene_id=SCENE.scene_id, slots={"day": day}))
    when = today + timedelta(days=day)
    try:
        forecast = provider.forecast(place.lat, place.lon, when, when, today=today)
    except NavigoError as exc:
        return SceneReply(scene_id=SCENE.scene_id, text=exc.message(lang), lang=lang, error=True,
                          payload=payload | {"provider": provider.name})
    weather = forecast[0] if forecast else DailyWeather(date=when, summary="weather.no_forecast", available=False,
                                                        provider=provider.name)
    return SceneReply(scene_id=SCENE.scene_id, text=_report_text(place_text, day, weather, lang), lang=lang,
                      payload=payload | {"provider": provider.name, "lat": place.lat, "lon": place.lon,
                                         "report": weather.model_dump(mode="json")})


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
