"""The company travel policy: city tiers, grades, hotel caps, allowances, cabin and seat rules.

* :mod:`~navigo_core.business.policy.models` — the validated policy (:class:`TravelPolicy`: tiers, grades,
  rules, the one reader of a grade ``resolve_grade``), :class:`Excess`, :class:`PolicyError`, ``parse_policy``.
* :mod:`~navigo_core.business.policy.loading` — the YAML file: ``data/travel_policy.yaml`` is the shipped default,
  ``Settings.travel_policy_file`` points at another (:func:`load_policy`, :func:`policy_for_settings`; the
  limits a crafted file is held to); :func:`policy_status` never raises, so the app starts with a broken file.
* :mod:`~navigo_core.business.policy.checks` — :func:`check_trip`, :func:`check_expense` (each :class:`Excess`
  cites the rule, en and zh, and the amount over in the caller's currency) and :func:`grade_note`.
"""

from __future__ import annotations

from navigo_core.business.policy.checks import (
    GradeOrigin,
    check_expense,
    check_trip,
    grade_note,
    requested_grade,
    requested_grade_origin,
)
from navigo_core.business.policy.loading import (
    DEFAULT_POLICY_FILE,
    default_policy,
    load_policy,
    policy_for_settings,
    policy_status,
)
from navigo_core.business.policy.models import (
    CABINS,
    SEATS,
    AmountRule,
    ClassRule,
    Excess,
    Grade,
    PolicyError,
    Tier,
    TravelPolicy,
)

__all__ = ["CABINS", "DEFAULT_POLICY_FILE", "SEATS", "AmountRule", "ClassRule", "Excess", "Grade", "GradeOrigin",
           "PolicyError", "Tier", "TravelPolicy", "check_expense", "check_trip", "default_policy", "grade_note",
           "load_policy", "policy_for_settings", "policy_status", "requested_grade", "requested_grade_origin"]
