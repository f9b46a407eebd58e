"""Booking scene: NaviGo has no booking backend, so it says so and offers search links.

The reply never claims that anything was booked, reserved or confirmed. It lists deep links
(also in ``payload["links"]``): a Google Flights search (origin, destination, date when named),
the 12306 / Trip.com train search for Chinese routes, and the hotel area on OpenStreetMap.
Reached by its rule ("book a flight", "帮我订酒店") and the ``booking`` intent.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any
from urllib.parse import quote

from navigo_core.i18n import t
from navigo_core.scenes.descriptor import GateContext, SceneDescriptor, SceneReply, SceneRoute
from navigo_core.understand import normalize_text, parse_request

GOOGLE_FLIGHTS = "https://www.google.com/travel/flights?q={q}"
TRAIN_12306 = "https://www.12306.cn/index/"
TRIP_TRAINS = "https://www.trip.com/trains/"
OSM_SEARCH = "https://www.openstreetmap.org/search?query={q}"

_CN_HINT = re.compile(r"[\u4e00-\u9fff]|\b(?:Beijing|Shanghai|Guangzhou|Shenzhen|Hangzhou|Nanjing|Chengdu|Wuhan|Xi'?an)\b", re.I)

_TRAIN = re.compile(r"\btrains?\b|\brail\b|\bsleeper (?:berth|car|cabin|ticket)s?\b|火车|高铁|动车|车票|卧铺|硬座|软座|二等座|一等座|商务座|车次", re.I)
_HOTEL = re.compile(r"\bhotels?\b|\broom\b|\baccommodation\b|酒店|宾馆|住宿|房间", re.I)
_FLIGHT = re.compile(r"\bflights?\b|\bplane\b|\bfly\b|\bair(?:line)? tickets?\b|机票|航班|飞机", re.I)
_CAR = re.compile(r"\b(?:car|cab|taxi|driver|chauffeur|pick-?up|shuttle|limo)s?\b|接机|送机|接站|送站|接送|用车|派车|"
                  r"租车|叫车|约车|专车|网约车|出租车|商务车", re.I)


def kinds_named(text: str) -> list[str]:
    """What the text names among flight / train / hotel / car (in that order)."""
    return [k for k, rx in (("flight", _FLIGHT), ("train", _TRAIN), ("hotel", _HOTEL), ("car", _CAR)) if rx.search(text)]


def extract_booking(message: str, *, today: date | None = None) -> dict[str, Any]:
    """What to book (``kinds``: flight / train / hotel / car) and, from :mod:`navigo_core.understand`, the
    ``origin`` / ``destination`` (as written) and the ``date`` (ISO) when the message names them."""
    today = today or date.today()
    text = normalize_text(message)
    slots: dict[str, Any] = {"kinds": kinds_named(text)}
    req = parse_request(text, today=today)
    if req.start_date:
        slots["date"] = req.start_date.isoformat()
    if req.origin_text:
        slots["origin"] = req.origin_text
    destination = req.destination_text or ""
    if destination:
        slots["destination"] = destination
    return slots


def links(slots: dict[str, Any], lang: str) -> list[dict[str, str]]:
    origin, dest, date = slots.get("origin", ""), slots.get("destination", ""), slots.get("date", "")
    kinds = slots.get("kinds") or ["flight", "train", "hotel"]
    route = f"{origin} → {dest}".strip(" →") if (origin or dest) else ""
    if date:  # the search pages (12306 has no query string) cannot all carry it: the label shows the day asked for
        route = f"{route} · {date}".strip(" ·")
    out: list[dict[str, str]] = []
    if "flight" in kinds or not kinds:
        q = "Flights" + (f" from {origin}" if origin else "") + (f" to {dest}" if dest else "") + (f" on {date}" if date else "")
        out.append({"kind": "flight", "label": t("booking.link.flights", lang, route=route).strip(),
                    "url": GOOGLE_FLIGHTS.format(q=quote(q))})
    if "train" in kinds or (not kinds) or ("flight" in kinds and _CN_HINT.search(f"{origin} {dest}")):
        chinese = bool(_CN_HINT.search(f"{origin} {dest}")) or lang == "zh"
        out.append({"kind": "train", "label": t("booking.link.trains", lang, route=route).strip(),
                    "url": TRAIN_12306 if chinese else TRIP_TRAINS})
    if "car" in kinds and (dest or origin):  # a pickup or a car with a driver: where cars are hired there
        place = dest or origin
        out.append({"kind": "car", "label": t("booking.link.cars", lang, place=place),
                    "url": OSM_SEARCH.format(q=quote(f"car rental {place}" if lang != "zh" else f"{place} 租车"))})
    if "hotel" in kinds or (dest and kinds != ["car"]):
        place = dest or origin
        if place:
            out.append({"kind": "hotel", "label": t("booking.link.hotels", lang, place=place),
                        "url": OSM_SEARCH.format(q=quote(f"hotels {place}" if lang != "zh" else f"{place} 酒店"))})
    return out


def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    slots = extract_booking(message)
    if not slots["kinds"]:
        slots["kinds"] = ["flight", "train", "hotel"]
    found = links(slots, lang)
    lines = "\n".join(t("booking.link.line", lang, label=x["label"], url=x["url"]) for x in found)
    text = t("booking.reply", lang, links=lines)
    if "car" in slots["kinds"]:
        text += "\n" + t("booking.car_note", lang)
    from navigo_core.business.policy import policy_status  # our own module: a failing import is a bug, never hidden

    try:
        policy, _ = policy_status(getattr(context.settings, "travel_policy_file", "") or None)
        if policy is not None:
            text += "\n" + t("booking.policy_hint", lang, days=policy.advance_days)
    except Exception:  # noqa: BLE001 - the hint is optional
        pass
    return SceneReply(scene_id=SCENE.scene_id, text=text, lang=lang,
                      payload={"booked": False, "links": found, "slots": slots})


SCENE = SceneDescriptor(
    scene_id="booking",
    label="booking.label",
    signal_keywords=("book a flight", "book a hotel", "订机票", "订酒店", "订火车票"),
    ontology_fields=("origin", "destination", "date"),
    route=SceneRoute(intents=("booking", "flight_search", "train_search", "hotel_search")),
    handler=handle,
    priority=26,
    capability="booking.capability",
    prompt_fragment="booking.prompt",
)
