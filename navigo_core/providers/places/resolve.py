"""Turn what the user typed into exactly one place, or say precisely why not.

The rules (strict by design: a route through the wrong Suzhou is worse than a question):

1. A :class:`Place` is returned as is (a page passes back the candidate the user picked).
2. Blank text → ``InputError("place.blank")``.
3. A coordinate literal (``31.23,121.47`` or ``Name (31.23,121.47)``) → that point, source ``latlon``;
   out-of-range numbers → ``InputError`` saying which one and how to fix it.
4. Otherwise the provider searches. Results naming the same place twice (same
   label, under 1 km apart) count once. Then:

   * exactly one → it;
   * none → ``PlaceResolutionError("place.unknown")`` whose ``candidates`` are
     near-misses when the provider offers them (``suggest``), e.g. "Pariss" → Paris;
   * several → ``PlaceResolutionError("place.ambiguous")`` listing them (name,
     admin area, country) with an example of a qualified query that would pick one.

   Never a silent guess, not even by population.

:func:`place_to_text` writes a picked candidate back as text that resolves to it.
"""

from __future__ import annotations

import logging

from navigo_core.errors import InputError, PlaceResolutionError, ProviderError
from navigo_core.geo import haversine_m
from navigo_core.providers.places.base import Place, PlaceProvider
from navigo_core.providers.places.gazetteer import has_cjk
from navigo_core.providers.places.latlon import parse_latlon, place_to_text

__all__ = ["resolve_place", "place_to_text", "dedupe_places", "qualified_example", "same_place", "SAME_PLACE_M"]

log = logging.getLogger(__name__)

SAME_PLACE_M = 1000.0  # two results with one label closer than this are one place
MAX_CANDIDATES = 10


def same_place(a: Place, b: Place) -> bool:
    """Whether ``a`` and ``b`` are one place: closer than :data:`SAME_PLACE_M`."""
    return haversine_m(a.lat, a.lon, b.lat, b.lon) < SAME_PLACE_M


def dedupe_places(places: list[Place]) -> list[Place]:
    """``places`` without repeats: a later result with the same label within :data:`SAME_PLACE_M` of an earlier one."""
    kept: list[Place] = []
    for p in places:
        if not any(p.label == k.label and same_place(p, k) for k in kept):
            kept.append(p)
    return kept


def qualified_example(query: str, candidates: list[Place]) -> str:
    """A qualified query that picks the first candidate: "Paris, France", "Suzhou, Jiangsu", "苏州, 江苏"."""
    first = candidates[0]
    zh = has_cjk(query)
    name = query.split(",")[0].split("，")[0].strip()
    if len({c.country for c in candidates}) > 1 or not (first.admin or first.admin_zh):
        qualifier = (first.country_name_zh if zh else "") or first.country_name or first.country
    else:
        qualifier = (first.admin_zh if zh else "") or first.admin
    return f"{name}, {qualifier}" if qualifier else name


_example = qualified_example


def _near_misses(provider: PlaceProvider, text: str) -> list[Place]:
    suggest = getattr(provider, "suggest", None)
    if suggest is None:
        return []
    try:
        return list(suggest(text, limit=5))
    except ProviderError as exc:  # suggestions are a courtesy; the "unknown" error still stands
        log.warning("place suggestions failed for %r: %s", text, exc)
        return []


def resolve_place(query: str | Place, provider: PlaceProvider, *, role: str = "stop") -> Place:
    """The one place ``query`` denotes (see the module docstring for the rules).

    ``role`` ("start", "stop", "end", ...) is carried on every input error
    (``err.params["role"]``; also ``err.role`` on ``PlaceResolutionError``) so a
    page can point at the field that needs fixing. Raises ``InputError``,
    ``PlaceResolutionError``, or the provider's ``ProviderError``.
    """
    if isinstance(query, Place):
        return query
    text = (query or "").strip()
    if not text:
        raise InputError("place.blank", role=role)
    try:
        literal = parse_latlon(text)
    except InputError as exc:
        exc.params.setdefault("role", role)
        raise
    if literal is not None:
        return literal
    candidates = dedupe_places(provider.search(text, limit=MAX_CANDIDATES))
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise PlaceResolutionError("place.unknown", query=text, candidates=_near_misses(provider, text), role=role)
    raise PlaceResolutionError("place.ambiguous", query=text, candidates=candidates, role=role,
                               example=_example(text, candidates))
