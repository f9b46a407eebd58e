"""What the planner's agents depend on, injected (tests pass fakes)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from types import ModuleType
from typing import Any

from navigo_core.config import Settings
from navigo_core.providers.flights import FlightProvider
from navigo_core.providers.places import PlaceProvider
from navigo_core.providers.pois import OfflinePoiProvider, PoiProvider
from navigo_core.providers.selection import Providers, make_providers
from navigo_core.providers.weather import WeatherProvider


def system_clock() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class PlannerDeps:
    """``llm``: an LLMClient or None (offline engine). ``prices``: an object with
    ``price_level(country)`` and ``convert(amount, from_ccy, to_ccy)`` (default: the
    :mod:`navigo_core.providers.prices` module). ``clock``: returns the current
    ``datetime`` (tests pin it). ``store``: optional Store (plans are saved by callers).
    ``pois``: named places for a city the activity catalogue lacks (default: offline, none).
    ``settings``: the settings the agents read (the policy check: ``travel_policy_file``, ``employee_grade``);
    None: their defaults (the shipped policy, no grade). Agents never read the global settings.
    ``user``: the signed-in user the plan is for (their id): the policy check reads their kept grade from
    ``store``'s profiles before ``settings.employee_grade`` (``navigo_core.business.policy.requested_grade``).
    """

    places: PlaceProvider
    flights: FlightProvider
    weather: WeatherProvider
    prices: Any
    llm: Any = None
    clock: Callable[[], datetime] = system_clock
    store: Any = None
    max_workers: int = 4
    pois: PoiProvider = field(default_factory=OfflinePoiProvider)
    settings: Settings | None = None
    user: str | None = None

    def now(self) -> datetime:
        return self.clock()

    def today(self) -> date:
        value = self.clock()
        return value.date() if isinstance(value, datetime) else value

    def now_iso(self) -> str:
        value = self.clock()
        if not isinstance(value, datetime):
            value = datetime.combine(value, datetime.min.time())
        return value.isoformat()


def _prices_module() -> ModuleType:
    from navigo_core.providers import prices

    return prices


def make_planner_deps(settings: Settings, *, llm: Any = None, store: Any = None,
                      clock: Callable[[], datetime] | None = None, places: PlaceProvider | None = None,
                      flights: FlightProvider | None = None, weather: WeatherProvider | None = None,
                      prices: Any = None, pois: PoiProvider | None = None,
                      providers: Providers | None = None) -> PlannerDeps:
    """Deps from ``settings`` (required: the composition roots pass theirs; offline providers by default); any
    piece may be injected. The providers not given come from ``providers`` (the composition root's bundle;
    None: ``make_providers(settings)``, see :mod:`navigo_core.providers.selection`), built only when needed.

    ``llm`` is used as given (None: the offline engine; build one with
    :func:`navigo_core.llm.make_llm_client`).
    """
    bundle = providers if providers is not None else make_providers(settings)
    return PlannerDeps(
        places=places or bundle.places,
        flights=flights or bundle.flights,
        weather=weather or bundle.weather,
        prices=prices or _prices_module(),
        llm=llm, clock=clock or system_clock, store=store,
        pois=pois or bundle.pois, settings=settings,
    )
