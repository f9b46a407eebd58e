"""Destination agent: the user's own destination, with a rationale; alternatives only on request.

The plan is always for the destination the user named (the form completer asks until it is
resolved; this agent never substitutes another place). Alternatives (up to 3 candidates in
all) are added only when the user asked for ideas ("suggest", "where should we go", "推荐",
"去哪"…, :func:`asks_for_ideas`); they come from ``data/planning.yaml`` (same country first,
sharing interests, nearest to the user's destination). With an LLM, the model may write the
rationales; each is checked (:func:`rationale_problems`: the user's language, no place but its own
candidate) and one that fails keeps its template text, the log saying why. Owns:
``destination_candidates``.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from navigo_core.errors import LLMError, describe_failure
from navigo_core.geo import haversine_m
from navigo_core.planner.agents._common import canonical_interests, data, entry, lang_of, required, t
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.state import DestinationCandidate, PlannerState
from navigo_core.providers.flights import airports_for_city
from navigo_core.security.provider_text import scan_provider_text
from navigo_core.understand.checks import language_ok, new_places

NAME = "destination"
MAX_CANDIDATES = 3
_IDEAS = re.compile(
    r"\b(?:suggest\w*|ideas?|recommend\w*|inspir\w*|alternatives?|where\s+(?:should|could|can|to\s+go|would\s+you)|"
    r"any\s+(?:good\s+)?(?:places?|destinations?|options?)|somewhere)\b|推荐|建议|去哪|哪里好|哪儿好|有什么好玩|什么地方好",
    re.IGNORECASE)


def asks_for_ideas(texts: list[str] | str) -> bool:
    """The user asked for destination ideas ("suggest…", "where should we go", "推荐", "去哪")."""
    return any(_IDEAS.search(x or "") for x in ([texts] if isinstance(texts, str) else texts))


class RationalesOut(BaseModel):
    rationales: list[str] = Field(max_length=MAX_CANDIDATES)


def _llm_rationales(state: PlannerState, deps: PlannerDeps, cands: list[DestinationCandidate], lang: str) -> list[str]:
    names = [c.name for c in cands]
    out = deps.llm.structured([
        {"role": "system", "content": "For each destination, in order, write one short sentence (in "
                                      f"{'Chinese' if lang == 'zh' else 'English'}) on why it suits the traveller. "
                                      "The first is the traveller's own choice. No prices, no dates, no new places."},
        {"role": "user", "content": f"Request: {state.natural_language}\nDestinations: {names}"},
    ], RationalesOut)
    texts = [r.strip() for r in out.rationales]
    if len(texts) != len(cands) or not all(texts):
        raise LLMError("llm.invalid_output", provider="planner", detail="rationales do not match the candidates")
    return texts


def rationale_problems(text: str, cand: DestinationCandidate, lang: str) -> list[str]:
    """Why a model rationale for ``cand`` cannot be shown ([] when it can)."""
    out = [] if language_ok(text, lang) else ["language"]
    own = [cand.name, cand.name_zh, cand.country]
    out += [f"names {p}" for p in new_places(text, own)]
    return out


def ready(state: PlannerState) -> bool:
    return state.user_request is not None and state.destination_candidates is None and not state.blocked


def _interests(state: PlannerState) -> list[str]:
    if state.preferences is not None and state.preferences.prioritized_interests:
        return state.preferences.prioritized_interests
    return canonical_interests(list(required(state.user_request, "the user request").interests or []))


def _tag_names(tags: list[str], lang: str) -> str:
    return ("、" if lang == "zh" else ", ").join(t(f"planner.interest.{k}", lang) for k in tags)


def alternatives(dest: Any, origin: Any, interests: list[str], lang: str, *, limit: int) -> list[DestinationCandidate]:
    """Catalogue cities other than ``dest``/``origin`` (same country first, sharing interests, nearest)."""
    table = data("planning")["destinations"]
    exclude = {x.casefold() for x in [getattr(origin, "name", ""), getattr(dest, "name", "")] if x}
    ref = dest or origin
    country = getattr(ref, "country", "")

    def score(r: dict[str, Any]) -> tuple[int, int, float]:
        shared = sum(1 for k in interests if k in r["tags"])
        km = haversine_m(ref.lat, ref.lon, r["lat"], r["lon"]) / 1000 if ref is not None else 0.0
        return (0 if r["country"] == country else 1, -shared, km)

    out: list[DestinationCandidate] = []
    for r in sorted((r for r in table if r["name"].casefold() not in exclude), key=score):
        if len(out) >= limit:
            break
        shared = [k for k in interests if k in r["tags"]]
        if interests and not shared:
            continue
        name = r["name_zh"] if lang == "zh" else r["name"]
        rationale = t("planner.dest.alternative", lang, city=name,
                      interests=_tag_names(shared or r["tags"][:2], lang))
        out.append(DestinationCandidate(name=r["name"], name_zh=r["name_zh"], country=r["country"], lat=r["lat"],
                                        lon=r["lon"], iata_code=r.get("iata"), rationale=rationale))
    return out


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    if not ready(state):
        return {}
    req = required(state.user_request, "the user request")
    lang = lang_of(state)
    interests = _interests(state)
    table = data("planning")["destinations"]
    out: list[DestinationCandidate] = []
    dest = req.destination
    origin = req.origin
    if dest is not None:
        row = next((r for r in table if r["name"].casefold() == dest.name.casefold()), None)
        shared = [k for k in interests if row and k in row["tags"]]
        codes = airports_for_city(dest) if dest else []
        rationale = t("planner.dest.user_choice", lang, city=dest.display_name(lang)) + (
            ("" if lang == "zh" else " ") + t("planner.dest.matches", lang, interests=_tag_names(shared, lang)) if shared else "")
        out.append(DestinationCandidate(name=dest.name, name_zh=dest.name_zh or (row or {}).get("name_zh", ""),
                                        country=dest.country, lat=dest.lat, lon=dest.lon,
                                        iata_code=codes[0] if codes else None, rationale=rationale, user_choice=True))
    ideas = asks_for_ideas(state.inputs())
    if dest is not None and ideas:  # alternatives beside the user's own choice, never instead of it
        out += alternatives(dest, origin, interests, lang, limit=MAX_CANDIDATES - len(out))
    evidence = [f"catalogue cities: {len(table)}", f"user destination given: {dest is not None}",
                f"ideas asked for: {ideas}"]
    mode = "rules"
    flagged = scan_provider_text(c.name for c in out) if deps.llm is not None else []
    if flagged:  # a provider's place name carries an injection: it never reaches the LLM
        mode = "llm_fallback"
        evidence.append(f"provider text flagged ({', '.join(flagged)}); template rationales used")
    elif deps.llm is not None and out:
        try:
            texts = _llm_rationales(state, deps, out, lang)
            checked = []
            for c, r in zip(out, texts):
                problems = rationale_problems(r, c, lang)
                if problems:
                    evidence.append(f"LLM rationale for {c.name} rejected ({'; '.join(problems)}); template kept")
                    checked.append(c)
                else:
                    checked.append(c.model_copy(update={"rationale": r}))
            used = sum(1 for a, b in zip(out, checked) if a is not b)
            out = checked
            mode = "llm" if used == len(out) else "llm_fallback"
        except LLMError as exc:
            mode = "llm_fallback"
            evidence.append(f"LLM failed ({describe_failure(exc)}); template rationales used")
    update: dict[str, Any] = {"destination_candidates": out}
    update.update(entry(NAME, deps, input_summary=f"destination: {getattr(dest, 'name', '-')}; interests: {interests}",
                        evidence=evidence, mode=mode, risk_flags=flagged,
                        output_summary=", ".join(c.name for c in out) or "no candidate"))
    return update
