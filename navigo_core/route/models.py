"""Request and result models of route planning."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from navigo_core.providers.places.base import Place
from navigo_core.route.deeplinks import DeepLinks

Strategy = Literal["fastest", "shortest", "balanced"]
OriginMode = Literal["fixed", "current"]


class RouteRequest(BaseModel):
    """What the user asked for. Stops are free text: a place name or ``lat,lon``."""

    origin_mode: OriginMode = "fixed"
    origin: str = ""  # fixed mode: a name or lat,lon
    current_location: tuple[float, float] | None = None  # current mode: (lat, lon)
    destination: str = ""
    stops: list[str] = Field(default_factory=list)
    strategy: Strategy = "fastest"
    balance_weight: float = Field(0.5, ge=0, le=1)  # balanced: share of duration in the cost
    pins: dict[int, int] = Field(default_factory=dict)  # stop index (0-based) → position among stops (1-based)
    groups: list[list[int]] = Field(default_factory=list)  # stop indices kept together, in this order
    alternatives: int = Field(3, ge=0, le=10)  # k best other orders (exact solves only)
    # legs flown instead of driven: pairs of place texts as entered (either direction), e.g. [("Venice", "Dayton")]
    fly_legs: list[tuple[str, str]] = Field(default_factory=list)


LegMode = Literal["drive", "flight"]
NoRoad = Literal["", "sea", "too_far"]


class Leg(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str
    distance_m: float
    duration_s: float
    cum_distance_m: float
    cum_duration_s: float
    mode: LegMode = "drive"  # "flight": a flight estimate (great-circle distance, block time), never a drive
    no_road: NoRoad = ""  # a drive leg no road can make: "sea" (different landmasses) or "too_far"


class PlaceChoice(BaseModel):
    """How one typed name became a place: the context decided (``why``), or the user picked it."""

    text: str  # as typed
    place: Place
    why: str = ""  # i18n key (place.why.*), or "" when the user picked it
    why_params: dict[str, str] = Field(default_factory=dict)
    picked: bool = False  # the user chose it from the candidates
    others: int = 0  # how many other places bear the name


class Alternative(BaseModel):
    order: list[str]
    distance_m: float
    duration_s: float


class RouteResult(BaseModel):
    """The best order, its legs and totals, and how it was obtained."""

    request: RouteRequest
    points: list[Place]  # in visiting order, origin first, destination last
    order: list[str]  # resolved names in visiting order
    typed: list[str] = Field(default_factory=list)  # the texts as entered, in visiting order (parallel to points)
    legs: list[Leg]
    total_distance_m: float
    total_duration_s: float
    entered_distance_m: float  # totals of the order as entered
    entered_duration_s: float
    saved_distance_m: float
    saved_duration_s: float
    saved_pct: float  # saving on the strategy's objective, percent of the entered order's cost
    optimal: bool  # proven optimal for the matrix used
    method: str  # solver method
    round_trip: bool
    lang: str = "en"  # language of the user's input; names are given in it where known
    strategy: Strategy
    provider: str  # matrix provider that produced the figures
    estimated: bool  # figures are estimates, not a routing engine's
    fallback_from: str = ""  # the provider that failed, when the offline estimate stood in
    fallback_reason: str = ""
    upstream_requests: int  # HTTP requests to the matrix provider (matrix + geometry)
    geometry: list[tuple[float, float]] | None = None  # road line (lat, lon), when the provider has one
    deep_links: DeepLinks
    alternatives: list[Alternative] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # i18n keys of remarks to show
    solve_ms: float = 0.0
    choices: list[PlaceChoice] = Field(default_factory=list)  # names with namesakes, and how each was decided

    @property
    def no_road_legs(self) -> list[int]:
        """Indices of the drive legs no road can make (shown with a warning and a "fly this leg" offer)."""
        return [i for i, leg in enumerate(self.legs) if leg.no_road]

    @property
    def flight_legs(self) -> list[int]:
        return [i for i, leg in enumerate(self.legs) if leg.mode == "flight"]

    def cli_dict(self) -> dict[str, object]:
        """The CLI's JSON shape."""
        return {
            "order": self.order,
            "legs": [
                {"from": leg.from_, "to": leg.to, "distance_m": round(leg.distance_m), "duration_s": round(leg.duration_s),
                 **({"mode": leg.mode} if leg.mode != "drive" else {}), **({"no_road": leg.no_road} if leg.no_road else {})}
                for leg in self.legs
            ],
            "total_distance_m": round(self.total_distance_m),
            "total_duration_s": round(self.total_duration_s),
            "optimal": self.optimal,
            "provider": self.provider,
            "estimated": self.estimated,
            "round_trip": self.round_trip,
            "saved_pct": round(self.saved_pct, 2),
            "deep_links": {
                "amap_web": self.deep_links.amap_web,
                "amap_app": self.deep_links.amap_app,
                "google": self.deep_links.google,
                "osm": self.deep_links.osm,
            },
        }
