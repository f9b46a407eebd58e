"""The one place that selects providers, of every kind.

* :func:`choices` / :func:`choice` — for each kind (``places``, ``matrix``, ``flights``, ``weather``, ``pois``) a
  :class:`ProviderChoice`: the names known, those available under the given settings (a key or URL configured,
  or the online flag on for a keyless online service) and the one selected by default (the settings'
  ``effective_*`` logic: an explicit ``*_PROVIDER``, else auto). The Route page's provider selectbox and the
  command line's ``--provider`` read their options from here.
* :func:`make_providers` — a :class:`Providers` bundle: each kind built once, on first use, by the kind's own
  factory (``make_place_provider``, ``make_matrix_provider``, …) with the name selected here. The composition
  roots (``ui/context.py``, :mod:`navigo_core.cli`, :mod:`navigo_core.scenes.defaults`) build one bundle and pass it to
  ``make_route_deps``, ``make_planner_deps``, ``make_gate_context``, ``ChatService`` and ``ClarifyAgent``; those
  never choose a provider from the settings themselves.

The per-kind factories stay in their packages (the constructors of one named provider); no provider package
imports this module (``.importlinter``: it is the top layer of ``navigo_core.providers``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast

import httpx

from navigo_core.config import Settings
from navigo_core.errors import InputError
from navigo_core.providers.flights import (
    FLIGHT_PROVIDERS,
    FlightProvider,
    effective_flights_provider,
    make_flight_provider,
)
from navigo_core.providers.matrix import MATRIX_PROVIDERS, MatrixProvider, make_matrix_provider
from navigo_core.providers.places import PLACE_PROVIDERS, PlaceProvider, make_place_provider
from navigo_core.providers.pois import POI_PROVIDERS, PoiProvider, effective_poi_provider, make_poi_provider
from navigo_core.providers.weather import (
    WEATHER_PROVIDERS,
    WeatherProvider,
    effective_weather_provider,
    make_weather_provider,
)

__all__ = ["KINDS", "Kind", "ProviderChoice", "Providers", "choice", "choices", "make_providers", "names_known"]

Kind = Literal["places", "matrix", "flights", "weather", "pois"]
KINDS: tuple[Kind, ...] = ("places", "matrix", "flights", "weather", "pois")

_KNOWN: Mapping[Kind, tuple[str, ...]] = {
    "places": PLACE_PROVIDERS, "matrix": MATRIX_PROVIDERS, "flights": FLIGHT_PROVIDERS,
    "weather": WEATHER_PROVIDERS, "pois": POI_PROVIDERS,
}

# The default of each kind: the existing effective_* logic (explicit *_PROVIDER, else auto).
_SELECTED: Mapping[Kind, Callable[[Settings], str]] = {
    "places": lambda s: s.effective_places_provider,
    "matrix": lambda s: s.effective_matrix_provider,
    "flights": effective_flights_provider,
    "weather": effective_weather_provider,
    "pois": effective_poi_provider,
}

# What makes a provider available: (the setting to set, the test). Names not listed need nothing (offline).
# A keyless online service is available when its online flag is on or the settings name it explicitly.
_NEEDS: Mapping[tuple[Kind, str], tuple[str, Callable[[Settings], bool]]] = {
    ("places", "amap"): ("AMAP_KEY", lambda s: bool(s.amap_key)),
    ("places", "nominatim"): ("NOMINATIM_URL", lambda s: bool(s.nominatim_url)),
    ("matrix", "osrm"): ("OSRM_URL", lambda s: bool(s.osrm_url)),
    ("matrix", "amap"): ("AMAP_KEY", lambda s: bool(s.amap_key)),
    ("flights", "duffel"): ("DUFFEL_ACCESS_TOKEN", lambda s: bool(s.duffel_access_token)),
    ("weather", "open_meteo"): ("WEATHER_ONLINE=true", lambda s: bool(s.open_meteo_url.strip()) and (
        s.weather_online or s.weather_provider == "open_meteo")),
    ("pois", "overpass"): ("POI_ONLINE=true", lambda s: bool(s.overpass_url.strip()) and (
        s.poi_online or s.poi_provider == "overpass")),
}

# The message of an unknown name, per kind (the same keys the factories use).
_UNKNOWN: Mapping[Kind, str] = {
    "places": "place.unknown_provider", "matrix": "matrix.unknown_provider", "flights": "flights.unknown_provider",
    "weather": "weather.unknown_provider", "pois": "pois.unknown_provider",
}


def names_known(kind: Kind) -> tuple[str, ...]:
    """Every provider name of ``kind`` (no settings needed: the command line's ``--provider`` choices)."""
    return _KNOWN[kind]


@dataclass(frozen=True)
class ProviderChoice:
    """The providers of one kind under some settings.

    ``names_known``: every name; ``available``: those the settings allow (offline first); ``selected``: the one
    the settings select by default (may be unavailable when a ``*_PROVIDER`` names a provider without its key:
    building it then raises ``ProviderNotConfigured``); ``needs``: for each name that needs one, the setting
    that makes it available.
    """

    kind: Kind
    names_known: tuple[str, ...]
    available: tuple[str, ...]
    selected: str
    needs: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def default(self) -> str:
        """What a picker shows first: ``selected`` when available, else the first available one (offline)."""
        return self.selected if self.selected in self.available else self.available[0]

    def require(self, name: str | None) -> str:
        """The name to build for a user's choice: ``selected`` for None / "" / "auto", else ``name`` when known and
        available. Raises ``InputError`` for an unknown name, or one not configured (naming the setting to set)."""
        if name in (None, "", "auto"):
            return self.selected
        assert name is not None
        if name not in self.names_known:
            raise InputError(_UNKNOWN[self.kind], provider=self.kind, name=name)
        if name not in self.available:
            raise InputError("provider.unavailable", name=name, setting=self.needs.get(name, "?"),
                             available=", ".join(self.available))
        return name


def choice(settings: Settings, kind: Kind) -> ProviderChoice:
    """The :class:`ProviderChoice` of ``kind`` under ``settings``."""
    known = _KNOWN[kind]
    needs = {name: _NEEDS[(kind, name)][0] for name in known if (kind, name) in _NEEDS}
    available = tuple(name for name in known if (kind, name) not in _NEEDS or _NEEDS[(kind, name)][1](settings))
    return ProviderChoice(kind=kind, names_known=known, available=available, selected=_SELECTED[kind](settings),
                          needs=needs)


def choices(settings: Settings) -> dict[Kind, ProviderChoice]:
    """The :class:`ProviderChoice` of every kind under ``settings``."""
    return {kind: choice(settings, kind) for kind in KINDS}


T = TypeVar("T")


class _Built:
    """Providers built so far, by (kind, name), shared by a bundle and those :meth:`Providers.with_matrix` derives."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: dict[tuple[str, str], Any] = {}


class Providers:
    """The providers of every kind, as :func:`choices` selects them; each built once, on first use (a kind whose
    selected provider lacks its key raises ``ProviderNotConfigured`` when it is first asked for, so a page that
    needs no flights works while flights are misconfigured). Thread-safe; the app shares one per process.

    ``names``: the provider name of each kind (``matrix``: the override given, else the selected one).
    ``offline_matrix``: the labelled estimate the route service falls back to (the same object as ``matrix``
    when the matrix provider is the offline one).
    """

    def __init__(self, settings: Settings, *, matrix: str | None = None, client: httpx.Client | None = None,
                 _built: _Built | None = None) -> None:
        self.settings = settings
        self.client = client
        selected = {kind: _SELECTED[kind](settings) for kind in KINDS}
        if matrix not in (None, "", "auto"):
            selected["matrix"] = cast(str, matrix)
        self.names: Mapping[Kind, str] = selected
        self._built = _built or _Built()

    def __repr__(self) -> str:
        return f"Providers({', '.join(f'{k}={v}' for k, v in self.names.items())})"

    def _get(self, kind: Kind, name: str, build: Callable[..., T]) -> T:
        key = (kind, name)
        with self._built.lock:
            if key not in self._built.items:
                self._built.items[key] = build(self.settings, name=name, client=self.client)
            return cast(T, self._built.items[key])

    @property
    def places(self) -> PlaceProvider:
        return self._get("places", self.names["places"], make_place_provider)

    @property
    def matrix(self) -> MatrixProvider:
        return self._get("matrix", self.names["matrix"], make_matrix_provider)

    @property
    def offline_matrix(self) -> MatrixProvider:
        return self._get("matrix", "offline", make_matrix_provider)

    @property
    def flights(self) -> FlightProvider:
        return self._get("flights", self.names["flights"], make_flight_provider)

    @property
    def weather(self) -> WeatherProvider:
        return self._get("weather", self.names["weather"], make_weather_provider)

    @property
    def pois(self) -> PoiProvider:
        return self._get("pois", self.names["pois"], make_poi_provider)

    def with_matrix(self, name: str | None) -> Providers:
        """This bundle with the matrix provider ``name`` (None / "" / "auto": this bundle); the other kinds are
        shared, not built again. An unknown or unconfigured name raises ``ProviderNotConfigured`` on first use of
        ``matrix``, as the factory does (check a user's choice first with ``choice(settings, "matrix").require``)."""
        if name in (None, "", "auto") or name == self.names["matrix"]:
            return self
        return Providers(self.settings, matrix=name, client=self.client, _built=self._built)


def make_providers(settings: Settings, *, matrix: str | None = None,
                   client: httpx.Client | None = None) -> Providers:
    """The providers ``settings`` select (``matrix`` overrides the matrix provider by name); ``client`` is passed to
    the HTTP providers (tests inject one). Nothing is built until first used."""
    return Providers(settings, matrix=matrix, client=client)
