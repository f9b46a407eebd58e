"""Weather scene: answered by ``context.weather`` (a :class:`WeatherProvider`) when one exists.

Offline (``context.weather`` is None) the reply says, in the user's language,
that no weather service is configured. With a provider and no place in the
message the reply asks for the place and starts the ``weather`` flow, so the
next message ("Paris") is read as the place.
"""

from __future__ import annotations

import re
import unicodedata

from navigo_core.errors import NavigoError
from navigo_core.i18n import t
from navigo_core.scenes.descriptor import (
    GATE_FLAGS,
    ActiveFlow,
    GateContext,
    GateRule,
    SceneDescriptor,
    SceneReply,
    SceneRoute,
    WeatherProvider,
    WeatherReport,
)

__all__ = ["SCENE", "WeatherProvider", "WeatherReport", "extract_weather_query"]

FLOW_ID = "weather"
_WEATHER_WORDS = (
    r"\bweather\b|\bforecast\b|\btemperature\b|\b(?:rain|raining|rainy|snow|snowing|sunny|windy|storm|typhoon|humid)\b"
    r"|天气|气温|温度|下雨|下雪|降雨|刮风|台风|晴天|预报|冷不冷|热不热|冷吗|热吗|潮湿|湿度"
)
_DAY = (
    (2, re.compile(r"\bday after tomorrow\b|后天", GATE_FLAGS)),
    (1, re.compile(r"\btomorrow\b|明天|明日", GATE_FLAGS)),
)
_EN_PLACE = (
    re.compile(r"\b(?:weather|forecast|temperature)\s+(?:like\s+|be\s+like\s+)?(?:in|at|for|of|around)\s+(?P<p>.+)", GATE_FLAGS),
    re.compile(r"\b(?:rain|snow|be\s+\w+)\s+(?:in|at)\s+(?P<p>.+)", GATE_FLAGS),
    re.compile(r"^(?i:what'?s\s+|how'?s\s+)?(?i:the\s+)?(?P<p>[A-Z][\w .'-]*?)(?:'s)?\s+(?:weather|forecast)\b"),
)
_ZH_PLACE = re.compile(
    r"(?P<p>[^\s,，。?？!！]{1,12}?)(?:的)?(?:天气|气温|温度|会下雨|下雨|会下雪|下雪|冷不冷|热不热|(?<=[今明后天在近末])(?:冷|热)(?:吗|不))")
_EN_TRIM = re.compile(
    r"\s+(?:today|tomorrow|tonight|this (?:week|weekend|morning|afternoon|evening)|next week|now|right now|"
    r"the day after tomorrow|on \w+day)\b.*$|[?.!,].*$", GATE_FLAGS)
_NOT_PLACE = re.compile(r"^(?:what|how|the|is|will|it|here|there|today|tomorrow|outside)\b", re.IGNORECASE)
_ZH_TRIM_LEAD = re.compile(r"^(?:请问|帮我|帮忙|给我|我想知道|想知道|查询|查一下|查查|查|看看|看一下|告诉我|今天|明天|后天|现在|这周|本周|周末|下周)+")
_ZH_TRIM_TAIL = re.compile(r"(?:今天|明天|后天|现在|这周|本周|周末|下周|明日|的)+$")


def _day(text: str) -> int:
    return next((d for d, rx in _DAY if rx.search(text)), 0)


def extract_weather_query(message: str) -> tuple[str, int]:
    """(place, day offset) named in a weather question; place "" when none."""
    text = unicodedata.normalize("NFKC", message or "").strip()
    day = _day(text)
    for rx in _EN_PLACE:
        m = rx.search(text)
        if m:
            place = _EN_TRIM.sub("", m.group("p")).strip(" '\"")
            if place and len(place.split()) <= 5 and not _NOT_PLACE.match(place):
                return place, day
    m = _ZH_PLACE.search(text)
    if m:
        place = _ZH_TRIM_TAIL.sub("", _ZH_TRIM_LEAD.sub("", m.group("p")))
        if place and not re.fullmatch(r"[?？什么怎样如何多少]+", place):
            return place, day
    return "", day


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
        place = place or unicodedata.normalize("NFKC", message).strip(" ?？!！。.,，")
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
    gate=GateRule(
        patterns=(
            r"\bweather\b",
            r"\bforecast\b",
            r"\b(?:will|is) it (?:going to )?(?:rain|snow|be (?:sunny|cold|hot|windy))\b",
            r"\btemperature (?:in|at|for)\b",
            r"天气|气温|天气预报|会下雨吗|下雨吗|会下雪吗|下雪吗|冷不冷|热不热|(?:今天|明天|后天|现在|最近|这几天|周末)(?:冷|热)(?:吗|不)",
        ),
        negatives=(r"\bweather-?proof\b", r"\bweather (?:app|api|station) (?:code|source)\b"),
    ),
    route=SceneRoute(intents=("general_info",), intent_keywords=(_WEATHER_WORDS,)),
    handler=handle,
    can_resume=True,
    flow_id=FLOW_ID,
    priority=30,
    capability="scene.weather.capability",
    prompt_fragment="scene.weather.prompt",
)
