"""The typed result of reading a request: :class:`ParsedRequest` and its parts.

Every field records where its value came from (``sources``: ``"rule"``, ``"llm"``, ``"user"``,
``"default"``) and how firm it is (``vague``: field names whose value is an interpretation of
loose words such as "this weekend" or "a long weekend", which a later explicit value replaces;
``relative``: dates computed from relative words, which a model's reading may correct).
"""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict, Field, model_validator

from navigo_core.providers.places.base import Place

__all__ = ["MAX_DAYS", "MAX_TRAVELLERS", "Ambiguity", "Money", "ParsedRequest"]

MAX_DAYS = 90  # the hard ceiling of the fields; the limits in force are settings (navigo_core/limits.py)
MAX_TRAVELLERS = 60


class Money(BaseModel):
    """An amount in one ISO 4217 currency."""

    model_config = ConfigDict(frozen=True)

    amount: float = Field(gt=0, allow_inf_nan=False)
    currency: str = Field(min_length=3, max_length=3, pattern=r"^[A-Z]{3}$")

    def __str__(self) -> str:
        return f"{self.amount:,.0f} {self.currency}"


class Ambiguity(BaseModel):
    """Something the text does not decide: the caller asks, offering ``candidates`` as quick replies.

    ``field`` is ``"origin"``, ``"destination"``, ``"dates"`` or ``"budget"``; ``text`` the words
    concerned; ``candidates`` each a text that parses back to one value ("Springfield, Illinois",
    "2027-04-02 to 2027-04-05"); ``places`` the candidate places (place ambiguities only);
    ``reason`` an i18n key (``understand.amb.*``).
    """

    field: str
    text: str = ""
    reason: str = ""
    candidates: list[str] = Field(default_factory=list)
    places: list[Place] = Field(default_factory=list)
    params: dict[str, str | int] = Field(default_factory=dict)  # more fields of the ``reason`` message (limits)

    @property
    def is_limit(self) -> bool:
        """A value outside the limits (``understand.limit.*``): it concerns the message that said it only."""
        return self.reason.startswith("understand.limit.")


class ParsedRequest(BaseModel):
    """What a travel request says, field by field (``None`` / empty when the text does not say)."""

    model_config = ConfigDict(validate_assignment=True)

    text: str = ""
    lang: str = "en"
    origin_text: str | None = None
    destination_text: str | None = None
    origin: Place | None = None
    destination: Place | None = None
    start_date: date | None = None
    end_date: date | None = None
    days: int | None = Field(default=None, ge=1, le=MAX_DAYS)
    adults: int | None = Field(default=None, ge=0, le=MAX_TRAVELLERS)
    children: int | None = Field(default=None, ge=0, le=MAX_TRAVELLERS)
    budget: Money | None = None
    budget_per_person: bool = False
    interests: list[str] = Field(default_factory=list)
    ambiguities: list[Ambiguity] = Field(default_factory=list)
    sources: dict[str, str] = Field(default_factory=dict)
    vague: list[str] = Field(default_factory=list)
    relative: list[str] = Field(default_factory=list)  # fields read from relative words ("next Friday")
    notes: list[str] = Field(default_factory=list)  # i18n keys (understand.note.*)

    @model_validator(mode="after")
    def _dates_in_order(self) -> ParsedRequest:
        if self.start_date and self.end_date and self.end_date < self.start_date:
            raise ValueError("end_date is before start_date")
        return self

    @property
    def travellers(self) -> int | None:
        if self.adults is None and self.children is None:
            return None
        return (self.adults or 0) + (self.children or 0)

    def ambiguity(self, field: str) -> Ambiguity | None:
        return next((a for a in self.ambiguities if a.field == field), None)

    def note(self, key: str) -> None:
        if key not in self.notes:
            self.notes.append(key)
