"""The applications' state machine: the statuses and which action each status allows.

draft → submitted (submit) → approved (approve) or rejected (reject, with a comment); a draft, submitted or
approved application can be cancelled (cancel) or modified (modify: a submitted or approved one goes back to
draft). :func:`can` is the one test of a transition; ``ApplicationService`` refuses any other with
``application.error.bad_status``.
"""

from __future__ import annotations

from typing import Literal

Status = Literal["draft", "submitted", "approved", "rejected", "cancelled"]
STATUSES: tuple[str, ...] = ("draft", "submitted", "approved", "rejected", "cancelled")
ACTIVE_STATUSES: tuple[str, ...] = ("draft", "submitted", "approved")
#: what an approver sees: applications sent for approval (a draft is the traveller's until it is submitted)
ROUTED_STATUSES: tuple[str, ...] = ("submitted", "approved", "rejected", "cancelled")
EDITABLE = ("draft", "submitted", "approved")  # modifying an approved/submitted one sends it back to draft

# action → the statuses it may start from
ALLOWED_FROM: dict[str, tuple[str, ...]] = {
    "submit": ("draft",),
    "modify": EDITABLE,
    "cancel": ACTIVE_STATUSES,
    "approve": ("submitted",),
    "reject": ("submitted",),
}


def can(status: str, action: str) -> bool:
    """An application in ``status`` may take ``action`` (one of :data:`ALLOWED_FROM`)."""
    return status in ALLOWED_FROM[action]
