"""The clarification's state, turns and summary (plain pydantic models, JSON-ready)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from navigo_core.i18n.markdown import end_lists

TurnStatus = Literal["asking", "done", "error"]
Mode = Literal["llm", "offline"]


MAX_ITEMS = 12  # constraints or assumptions in a summary (the schema's maxItems; a longer list is cut)


class Summary(BaseModel):
    """What the clarification hands on: one objective, the hard constraints and the assumptions made."""

    objective: str = Field(min_length=1, description="one sentence: what the user wants to achieve")
    constraints: list[str] = Field(default_factory=list, max_length=MAX_ITEMS,
                                   description="hard constraints: budget, dates, scope …")
    assumptions: list[str] = Field(default_factory=list, max_length=MAX_ITEMS,
                                   description="assumptions made for what is not stated")

    @field_validator("constraints", "assumptions", mode="before")
    @classmethod
    def _listify(cls, v: Any) -> Any:
        if v is None:
            return []
        if isinstance(v, str):
            return [v] if v.strip() else []
        if isinstance(v, list):
            return [str(x) for x in v if str(x).strip()][:MAX_ITEMS]
        return v


class HistoryTurn(BaseModel):
    role: Literal["user", "assistant"]
    content: str


class Turn(BaseModel):
    """One answer of the clarification agent."""

    status: TurnStatus
    content: str = ""  # the reply text shown to the user (marker and JSON removed)
    summary: Summary | None = None  # when done
    quick_replies: list[str] = Field(default_factory=list)
    error: str | None = None  # a readable message when status is error
    checks: list[str] = Field(default_factory=list)  # LLM mode: what was checked and why model text was replaced

    @field_validator("content")
    @classmethod
    def _lists_end(cls, content: str) -> str:
        """A sentence after a list (the model's or ours) is its own paragraph, never glued to the last bullet."""
        return end_lists(content)

    def frame(self) -> dict[str, Any]:
        """The CLI's JSON status frame, exactly ``{"status", "content", "summary"?}``: the summary
        only when done; on an error the content is the readable error message."""
        out: dict[str, Any] = {"status": self.status, "content": self.content or (self.error or "")}
        if self.status == "done" and self.summary is not None:
            out["summary"] = self.summary.model_dump()
        return out


class ClarifyState(BaseModel):
    """The state of one clarification (kept per chat thread, as JSON)."""

    thread_id: str = ""
    rounds: int = 0  # user turns answered so far
    lang: str = "en"
    mode: Mode = "offline"
    slots: dict[str, Any] = Field(default_factory=dict)  # a TravelRequest dumped as JSON (rule-based slots)
    asked: list[str] = Field(default_factory=list)  # the fields asked in the last turn
    history: list[HistoryTurn] = Field(default_factory=list)
    status: TurnStatus | Literal["new"] = "new"
    summary: Summary | None = None

    @property
    def active(self) -> bool:
        """The clarification still runs (a new message continues it)."""
        return self.status in ("new", "asking", "error")
