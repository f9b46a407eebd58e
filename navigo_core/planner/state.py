"""The planner's shared, typed state (see ``/work/shared/seeds/navigo-agents.md``).

Agents read the whole :class:`PlannerState` and return a partial update (a dict
of the fields they own). The supervisor merges updates; ``decision_log`` is
append-only: an agent returns ``{"decision_log": [entry]}`` and the supervisor
appends it. Every field name is snake_case, so ``model_dump(mode="json")`` is the
JSON export.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, Field

from navigo_core.planner.request import Question, TravelRequest
from navigo_core.providers.flights.base import FlightOffer
from navigo_core.providers.weather.base import DailyWeather
from navigo_core.security.rules import INJECTION_PREFIX, UNSAFE_PREFIX  # the flags' one source

Status = Literal["running", "needs_input", "refused", "done"]
Tier = Literal["budget", "mid", "luxury"]

BUDGET_EXCEEDED = "BUDGET_EXCEEDED"


class Preferences(BaseModel):
    travel_style: Literal["relaxed", "balanced", "packed"] = "balanced"
    prioritized_interests: list[str] = Field(default_factory=list)  # canonical interest keys (tea, hiking…)
    preferred_pace: Literal["slow", "normal", "fast"] = "normal"
    accommodation_preference: Tier = "mid"
    source: Literal["rules", "llm"] = "rules"


class DestinationCandidate(BaseModel):
    name: str
    name_zh: str = ""
    country: str = ""
    lat: float | None = None
    lon: float | None = None
    iata_code: str | None = None
    rationale: str
    user_choice: bool = False


class Activity(BaseModel):
    id: str  # catalogue id; unique within a plan (arrival/departure ids carry the day's date)
    title: str
    kind: Literal["activity", "arrival", "departure", "transfer"] = "activity"
    interest: str = ""
    indoor: bool = False
    flight_id: str | None = None  # arrival/departure transfers: the flight they refer to
    lat: float | None = Field(default=None, ge=-90, le=90)  # a real place of the catalogue (day maps)
    lon: float | None = Field(default=None, ge=-180, le=180)
    source: str = ""  # where a real place came from when not the catalogue ("OpenStreetMap"); shown with it


class ItineraryDay(BaseModel):
    day: int  # 1-based
    date: date
    city: str
    day_type: Literal["arrival", "full", "departure", "single"]
    weather_risk: Literal["HIGH", "MEDIUM", "LOW"] | None = None
    activities: list[Activity] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class BudgetLine(BaseModel):
    category: Literal["flights", "ground_transport", "accommodation", "food", "local_transport"]
    formula: str
    amount: float
    currency: str
    estimated: bool = True


class BudgetAssessment(BaseModel):
    lines: list[BudgetLine]
    total: float
    currency: str
    budget: float | None = None
    within_budget: bool | None = None
    flags: list[str] = Field(default_factory=list)
    tips: list[str] = Field(default_factory=list)
    tier: Tier = "mid"
    nights: int = 0
    rooms: int = 0
    travellers: int = 1
    estimated: bool = True
    note: str = ""


class PackingItem(BaseModel):
    id: str
    label: str
    reason: str
    category: str = "general"


class FinalPlan(BaseModel):
    refused: bool = False
    summary: str
    destination: str = ""
    flight_id: str | None = None
    return_flight_id: str | None = None
    days: int = 0
    total: float | None = None
    currency: str = ""
    within_budget: bool | None = None
    safety_flags: list[str] = Field(default_factory=list)
    source: Literal["rules", "llm"] = "rules"


class Violation(BaseModel):
    code: str
    message: str
    day: int | None = None


class DecisionLogEntry(BaseModel):
    agent: str
    input_summary: str
    evidence: list[str] = Field(default_factory=list)
    output_summary: str
    risk_flags: list[str] = Field(default_factory=list)
    mode: Literal["rules", "llm", "llm_fallback"] = "rules"
    timestamp: str  # ISO 8601


class PlannerState(BaseModel):
    natural_language: str
    answers: list[str] = Field(default_factory=list)  # follow-up answers given through resume()
    lang: Literal["en", "zh"] = "en"
    scanned_inputs: int = 0  # how many of [natural_language, *answers] the risk guard's rules have scanned
    llm_scan_pending: bool = False  # the LLM's second-opinion scan is due (runs in the background)
    llm_scanned_inputs: int = 0
    parsed_request: TravelRequest | None = None
    user_request: TravelRequest | None = None
    pending_questions: list[Question] = Field(default_factory=list)
    preferences: Preferences | None = None
    destination_candidates: list[DestinationCandidate] | None = None
    flight_options: list[FlightOffer] | None = None  # outbound; None: not searched yet
    return_flight_options: list[FlightOffer] = Field(default_factory=list)
    recommended_flight_id: str | None = None
    recommended_return_flight_id: str | None = None
    flight_note: str = ""
    ground_distance_km: float | None = None
    weather: list[DailyWeather] | None = None  # None: not fetched yet
    itinerary: list[ItineraryDay] | None = None
    budget: BudgetAssessment | None = None
    packing: list[PackingItem] | None = None
    final_plan: FinalPlan | None = None
    output_checked: bool = False
    safety_flags: list[str] = Field(default_factory=list)
    validation: list[Violation] | None = None
    policy_excesses: list[dict] | None = None  # travel-policy excesses of the plan (policy_check agent)
    decision_log: list[DecisionLogEntry] = Field(default_factory=list)
    status: Status = "running"

    # --- helpers (read-only) ---
    def inputs(self) -> list[str]:
        return [self.natural_language, *self.answers]

    @property
    def blocked(self) -> bool:
        return any(f.startswith(INJECTION_PREFIX) for f in self.safety_flags)

    @property
    def unsafe_output(self) -> bool:
        return any(f.startswith(UNSAFE_PREFIX) for f in self.safety_flags)

    def flight_by_id(self, offer_id: str | None) -> FlightOffer | None:
        for f in [*(self.flight_options or []), *self.return_flight_options]:
            if f.id == offer_id:
                return f
        return None

    def merged(self, update: dict[str, Any]) -> PlannerState:
        """A copy with ``update`` applied; ``decision_log`` entries are appended, never replaced."""
        update = dict(update)
        new_entries = update.pop("decision_log", [])
        update["decision_log"] = [*self.decision_log, *new_entries]
        return self.model_copy(update=update)

