"""The point-of-interest type and the protocol every POI provider implements."""

from __future__ import annotations

import re
import unicodedata
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

PoiKind = Literal["museum", "gallery", "attraction", "viewpoint", "historic", "park"]

MAX_NAME_CHARS = 80
"""Longest place name kept from a provider (longer ones are cut, an ellipsis marks the cut)."""

_SPACE = re.compile(r"\s+")


class PointOfInterest(BaseModel):
    """One real, named place near a city, as a provider gave it (never invented).

    ``id`` is stable and unique per place (e.g. ``osm-node-123``); ``source`` is the
    label shown with it ("OpenStreetMap"). ``name`` is untrusted provider text: it is
    cleaned and capped here (:func:`clean_name`), and callers scan it for injection
    before use (``navigo_core.security.provider_text``).
    """

    id: str
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    kind: PoiKind
    lat: float = Field(ge=-90, le=90)
    lon: float = Field(ge=-180, le=180)
    source: str


@runtime_checkable
class PoiProvider(Protocol):
    name: str  # "offline" | "overpass"
    source: str  # the label of its data ("OpenStreetMap"; "" offline)
    online: bool  # False: it never sends a request

    def nearby(self, lat: float, lon: float, *, lang: str = "en") -> list[PointOfInterest]:
        """Named places around ``lat``/``lon``, best first (``[]`` when there are none).

        Raises ``ProviderError`` subclasses on upstream failure.
        """
        ...


def clean_name(raw: object, limit: int = MAX_NAME_CHARS) -> str:
    """A provider's place name made safe to show: control and format characters removed, all
    whitespace (newlines too) collapsed to single spaces, cut to ``limit`` characters ("" when nothing is left)."""
    if not isinstance(raw, str):
        return ""
    text = "".join(" " if ch.isspace() else ch for ch in raw if ch.isspace() or unicodedata.category(ch)[0] != "C")
    text = _SPACE.sub(" ", text).strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text
