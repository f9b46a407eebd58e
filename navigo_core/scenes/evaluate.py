"""Scoring routing by what users get: the scene :func:`~navigo_core.scenes.classify` picks.

A labelled row (:class:`~navigo_core.intent.evaluate.LabelledRow`) names the scene that should
answer (``scene``), or only an intent; then the scenes in :data:`SCENES_FOR_INTENT` count as
right. That table is a labelling convention for intent-only rows (the public sets label intents,
not our scenes); it is not used for routing.

* *accuracy* = rows whose decided scene is right;
* per gate step: how many rows it decided and how many of those were right;
* *out-of-scope captured* = out-of-scope rows (intent ``unknown``) that went to a scene other
  than the off-topic reply or the fallback help.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from navigo_core.intent.evaluate import LabelledRow
from navigo_core.scenes.descriptor import GateDecision

# intent -> the scenes that answer it rightly (for rows labelled with an intent only)
SCENES_FOR_INTENT: dict[str, frozenset[str]] = {
    "travel_application": frozenset({"travel_application"}),
    "travel_cancel": frozenset({"travel_cancel"}),
    "travel_modify": frozenset({"travel_modify"}),
    "approval_query": frozenset({"approval_query"}),
    "travel_order_query": frozenset({"travel_order_query"}),
    "reimbursement": frozenset({"reimbursement"}),
    "policy_query": frozenset({"policy_query"}),
    "booking": frozenset({"booking"}),
    # searching or booking a ticket or a room: search links (booking) or the trip dialogue
    "flight_search": frozenset({"booking", "trip_planning"}),
    "train_search": frozenset({"booking", "trip_planning"}),
    "hotel_search": frozenset({"booking", "trip_planning"}),
    "itinerary_planning": frozenset({"trip_planning", "route_planning"}),
    "attractions_query": frozenset({"trip_planning"}),
    "general_info": frozenset({"weather", "route_planning"}),
    "greeting": frozenset({"greeting"}),
    "unknown": frozenset({"off_topic", "greeting"}),
}
NOT_CAPTURED = frozenset({"off_topic", "greeting"})


def expected_scenes(row: LabelledRow) -> frozenset[str]:
    if row.scene:
        return frozenset({row.scene})
    out = set(SCENES_FOR_INTENT.get(row.intent, frozenset()))
    for alt in row.alt_intents:
        out |= SCENES_FOR_INTENT.get(alt, frozenset())
    return frozenset(out)


@dataclass(frozen=True)
class SceneOutcome:
    row: LabelledRow
    decision: GateDecision
    ms: float

    @property
    def correct(self) -> bool:
        return self.decision.scene_id in expected_scenes(self.row)


@dataclass
class SceneReport:
    outcomes: list[SceneOutcome] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.outcomes)

    @property
    def accuracy(self) -> float:
        return sum(o.correct for o in self.outcomes) / self.n if self.n else 0.0

    def by_step(self) -> dict[str, tuple[int, int]]:
        """step -> (decided, right)."""
        out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for o in self.outcomes:
            out[o.decision.step][0] += 1
            out[o.decision.step][1] += o.correct
        return {k: (v[0], v[1]) for k, v in out.items()}

    def by_expected(self) -> dict[str, tuple[int, int]]:
        """labelled scene (or intent) -> (rows, right)."""
        out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for o in self.outcomes:
            key = o.row.scene or o.row.intent
            out[key][0] += 1
            out[key][1] += o.correct
        return {k: (v[0], v[1]) for k, v in sorted(out.items())}

    @property
    def oos_rate(self) -> float | None:
        oos = [o for o in self.outcomes if not o.row.in_scope]
        if not oos:
            return None
        return sum(o.decision.scene_id not in NOT_CAPTURED for o in oos) / len(oos)

    def confusion(self) -> Counter[tuple[str, str]]:
        return Counter((o.row.scene or o.row.intent, o.decision.scene_id) for o in self.outcomes if not o.correct)

    def latency_p50(self) -> float:
        ms = sorted(o.ms for o in self.outcomes)
        return ms[len(ms) // 2] if ms else 0.0


def score(rows: Sequence[LabelledRow], classify: Callable[[str], GateDecision]) -> SceneReport:
    """Run ``classify`` on every row (one at a time, timed) and collect the outcomes."""
    report = SceneReport()
    for row in rows:
        t0 = time.perf_counter()
        decision = classify(row.text)
        report.outcomes.append(SceneOutcome(row, decision, (time.perf_counter() - t0) * 1000))
    return report
