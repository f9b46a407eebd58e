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

    @property
    def label(self) -> str:
        """Human label used in candidate lists: name, admin area, country."""
        parts = [self.name]
        if self.admin and self.admin != self.name:
            parts.append(self.admin)
        if self.country_name or self.country:
            parts.append(self.country_name or self.country)
        return ", ".join(parts)


@runtime_checkable
class PlaceProvider(Protocol):
    """Searches places by free text. Returns candidates; never guesses between them."""

    name: str

    def search(self, query: str, *, limit: int = 10) -> list[Place]:
        """All plausible matches for ``query`` (best first), at most ``limit``.

        Raises ``ProviderError`` subclasses on upstream failure.
        """
        ...
