"""Coordinate literals typed as place input: ``lat,lon``.

Accepted forms (spaces optional everywhere)::

    31.23,121.47          31.23, 121.47        +31.23 , -121.47
    31.23，121.47         (full-width comma, as typed with a Chinese IME)
    31.23°N, 121.47°E     31.23N,121.47W       (hemisphere letters set the sign)
    Home (31.23,121.47)   a name before coordinates in brackets: the place keeps that name

Latitude always comes first. A latitude outside −90…90 or a longitude outside
−180…180 raises :class:`InputError` naming the bad value; when swapping the two
numbers would make a valid point, the message says so (people often paste
``lon,lat`` from GeoJSON).

:func:`format_latlon` and :func:`place_to_text` write the same forms back, so a
place picked on a page turns into input text that resolves to exactly it.
"""

from __future__ import annotations

import re

from navigo_core.errors import InputError
from navigo_core.providers.places.base import Place

_NUM = r"[+\-−]?\d+(?:\.\d+)?"
_COORD = rf"({_NUM})\s*°?\s*([NSEWnsew])?"
_PAIR = rf"{_COORD}\s*[,，]\s*{_COORD}"
_PLAIN = re.compile(rf"^\s*{_PAIR}\s*$")
_NAMED = re.compile(rf"^\s*(?P<name>.*?)\s*[(（]\s*{_PAIR}\s*[)）]\s*$")

DECIMALS = 6  # ~0.1 m: more than any provider's precision


def _num(text: str) -> float:
    return float(text.replace("−", "-"))


def _signed(value: float, hemi: str | None, *, axis: str) -> float:
    if not hemi:
        return value
    h = hemi.upper()
    if axis == "lat" and h not in "NS" or axis == "lon" and h not in "EW":
        raise ValueError(hemi)
    return -abs(value) if h in "SW" else abs(value)


def _fmt(x: float) -> str:
    s = f"{x:.{DECIMALS}f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def format_latlon(lat: float, lon: float) -> str:
    """The canonical ``lat,lon`` literal, e.g. ``31.23,121.47`` (at most 6 decimals)."""
    return f"{_fmt(lat)},{_fmt(lon)}"


def place_to_text(place: Place) -> str:
    """Input text that resolves back to exactly ``place``: ``Name (lat,lon)``.

    Use it to put a candidate the user picked back into a text field.
    """
    return f"{place.name} ({format_latlon(place.lat, place.lon)})"


def parse_latlon(text: str) -> Place | None:
    """The place a coordinate literal denotes, or None when ``text`` is not one.

    Raises ``InputError`` (``place.lat_range`` / ``place.latlon_swapped`` /
    ``place.lon_range``) when it is a literal but out of range.
    """
    if not text or not any(ch.isdigit() for ch in text):
        return None
    m = _PLAIN.match(text)
    name = ""
    if m is None:
        m = _NAMED.match(text)
        if m is None:
            return None
        name = m.group("name").strip()
        groups = m.groups()[1:]
    else:
        groups = m.groups()
    lat_s, lat_h, lon_s, lon_h = groups
    try:
        lat = _signed(_num(lat_s), lat_h, axis="lat")
        lon = _signed(_num(lon_s), lon_h, axis="lon")
    except ValueError:
        return None  # e.g. "12E, 3N": not a literal we understand; let the name search try
    literal = f"{lat_s}{lat_h or ''},{lon_s}{lon_h or ''}"
    if not -90 <= lat <= 90:
        if -90 <= lon <= 90 and -180 <= lat <= 180 and not (lat_h or lon_h):
            raise InputError("place.latlon_swapped", value=lat_s, text=literal, swapped=format_latlon(lon, lat))
        raise InputError("place.lat_range", value=lat_s)
    if not -180 <= lon <= 180:
        raise InputError("place.lon_range", value=lon_s)
    return Place(name=name or format_latlon(lat, lon), lat=lat, lon=lon, source="latlon",
                 ref=format_latlon(lat, lon))
