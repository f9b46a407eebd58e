"""The place type and the protocol every place provider implements."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field


class Place(BaseModel):
    """A resolved point. Coordinates are always WGS-84, whatever the provider spoke."""

    name: str
    lat: float = Field(ge=-90, le=90)
    lon: float = Field(ge=-180, le=180)
    admin: str = ""  # first-level admin area (province, state), when known
    country: str = ""  # ISO 3166-1 alpha-2 code, when known
    country_name: str = ""
    source: str = ""  # gazetteer | iata | latlon | amap | nominatim | map
    ref: str = ""  # the provider's own id (geonameid, IATA code, POI id)
    population: int | None = None
    # Chinese display names, when the provider knows them (empty: show the English one).
    name_zh: str = ""
    admin_zh: str = ""
    country_name_zh: str = ""

    @property
    def label(self) -> str:
        """Human label used in candidate lists: name, admin area, country."""
        return self.label_in("en")

    def display_name(self, lang: str = "en") -> str:
        """The short name in ``lang`` (the Chinese name when known and ``lang == "zh"``)."""
        return (self.name_zh if lang == "zh" else "") or self.name

    def label_in(self, lang: str = "en") -> str:
        """The label in ``lang``: Chinese names where known when ``lang == "zh"``, else English."""
        zh = lang == "zh"
        name = self.display_name(lang)
        admin = (self.admin_zh if zh else "") or self.admin
        country = (self.country_name_zh if zh else "") or self.country_name or self.country
        parts = [name]
        if admin and admin not in (self.name, self.name_zh, name):
            parts.append(admin)
        if country:
            parts.append(country)
        return ("，" if zh else ", ").join(parts)


@runtime_checkable
class PlaceProvider(Protocol):
    """Searches places by free text. Returns candidates; never guesses between them.

    A provider may also offer ``suggest(query, *, limit) -> list[Place]`` (near-misses
    for a query ``search`` found nothing for); ``resolve_place`` uses it when present.
    """

    name: str

    def search(self, query: str, *, limit: int = 10) -> list[Place]:
        """All plausible matches for ``query`` (best first), at most ``limit``.

        Raises ``ProviderError`` subclasses on upstream failure.
        """
        ...
