"""The travel policy's typed model, built from the administrator's YAML and validated.

:func:`parse_policy` turns the raw YAML mapping into a :class:`TravelPolicy`; every problem
raises :class:`PolicyError` naming the file, the YAML path (``hotel.caps.cn_t1.G3``) and the fix.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

from pydantic import BaseModel, Field

from navigo_core.errors import InputError
from navigo_core.understand.models import Money

CABINS = ("economy", "premium_economy", "business")
SEATS = ("second_class", "first_class", "business")


class PolicyError(InputError):
    """The travel policy file is missing or invalid; the message names file, YAML path and fix."""

    default_code = "policy.error.bad_value"
    about_input = False  # the administrator's file, not a user's request


class Tier(BaseModel):
    id: str
    label_en: str
    label_zh: str
    cities: list[str] = Field(default_factory=list)
    countries: list[str] = Field(default_factory=list)
    default: bool = False

    def label(self, lang: str = "en") -> str:
        return self.label_zh if lang == "zh" else self.label_en


class Grade(BaseModel):
    id: str
    label_en: str
    label_zh: str
    aliases: list[str] = Field(default_factory=list)

    def label(self, lang: str = "en") -> str:
        return self.label_zh if lang == "zh" else self.label_en


class ClassRule(BaseModel):
    """One flight-cabin or train-seat rule: applies to ``grades`` when the duration is above ``over_hours``."""

    id: str
    grades: list[str]
    over_hours: float = 0.0
    value: str  # cabin or seat
    text_en: str = ""
    text_zh: str = ""

    def applies(self, grade: str, hours: float) -> bool:
        return grade in self.grades and (self.over_hours <= 0 or hours > self.over_hours)

    def text(self, lang: str = "en") -> str:
        return (self.text_zh if lang == "zh" else self.text_en) or self.text_en or self.id


class AmountRule(BaseModel):
    """A tier × grade table of amounts (hotel caps, meal and transport allowances)."""

    id: str
    text_en: str = ""
    text_zh: str = ""
    table: dict[str, dict[str, float]]  # tier -> grade -> amount

    def text(self, lang: str = "en") -> str:
        return (self.text_zh if lang == "zh" else self.text_en) or self.text_en or self.id


class Excess(BaseModel):
    """One way a trip or expense breaks the policy."""

    rule_id: str
    rule: str  # the rule, in English
    rule_zh: str
    amount_over: float | None = None  # in ``currency``; None for non-monetary rules (cabin, advance booking)
    currency: str = "CNY"
    message: str  # English, with the numbers
    message_zh: str = ""
    category: str = ""  # hotel | meal | transport | flight | train | advance


def norm(text: str) -> str:
    """Casefolded, NFKC, without spaces, apostrophes, hyphens or a trailing 市 / city."""
    s = unicodedata.normalize("NFKC", str(text or "")).casefold().strip()
    s = re.sub(r"[\s'’\-_.]+", "", s)
    s = re.sub(r"(?:市|city)$", "", s)
    return s


# How a traveller states their own grade; the grade names themselves are the policy file's (ids, labels, aliases).
_STATEMENT = re.compile(
    r"(?:我(?:的)?(?:职级|级别)(?:是|为)|我(?:是|属于)|本人(?:是|属于))"
    r"|(?<![A-Za-z])(?:i[’']?m|i am|my (?:employee |job )?(?:grade|level) is|my (?:employee )?grade[:：]|as an?)(?![A-Za-z])",
    re.IGNORECASE)
_STATEMENT_FILLER = re.compile(r"^\s*(?:(?:an?|the)\s+|一名|一位|一个)?\s*(?:(?:grade|level)\s+)?", re.IGNORECASE)


class TravelPolicy(BaseModel):
    name_en: str = "Travel policy"
    name_zh: str = "差旅政策"
    currency: str = "CNY"
    source: str = ""  # the file it was loaded from
    grade_defs: list[Grade]
    tiers: list[Tier]
    hotel: AmountRule
    meals: AmountRule
    local_transport: AmountRule
    flight_rules: list[ClassRule]
    train_rules: list[ClassRule]
    advance_days: int
    advance_rule_id: str = "ADVANCE-1"
    advance_text_en: str = ""
    advance_text_zh: str = ""

    # --- grades ---
    @property
    def grades(self) -> list[str]:
        return [g.id for g in self.grade_defs]

    @property
    def lowest_grade(self) -> str:
        return self.grades[0]

    def grade(self, grade_id: str) -> Grade:
        return next(g for g in self.grade_defs if g.id == grade_id)

    def parse_grade(self, text: str) -> str | None:
        """The grade id ``text`` names ("G3", "g3", "经理", "manager"), or None."""
        key = norm(text)
        if not key:
            return None
        for g in self.grade_defs:
            if key == norm(g.id) or key in {norm(a) for a in [g.label_en, g.label_zh, *g.aliases]}:
                return g.id
        return None

    def find_grade(self, text: str) -> str | None:
        """A grade named anywhere in ``text`` ("I'm a G3", "我是经理"), longest alias first, or None."""
        s = unicodedata.normalize("NFKC", text or "")
        m = re.search(r"(?<![A-Za-z0-9])([Gg]\d{1,2})(?![A-Za-z0-9])", s)
        if m and (gid := self.parse_grade(m.group(1))):
            return gid
        names = sorted(((a, g.id) for g in self.grade_defs for a in [g.label_en, g.label_zh, *g.aliases] if a),
                       key=lambda x: -len(x[0]))
        low = s.casefold()
        for alias, gid in names:
            a = alias.casefold()
            if a.isascii():
                if re.search(rf"(?<![a-z]){re.escape(a)}(?![a-z])", low):
                    return gid
            elif a in low:
                return gid
        return None

    @property
    def default_grade(self) -> str:
        """The grade checked against when none is known: the lowest (the first in the file)."""
        return self.lowest_grade

    def resolve_grade(self, raw: str | None) -> tuple[str, bool]:
        """The one way a grade is read (settings, the chat, an application, a claim): ``(grade id, assumed)``.

        ``raw`` is an id, a label or one of the aliases of the policy file ("G3", "g3", "Manager", "经理",
        "manager"); empty or unknown: ``(default_grade, True)``. Callers say when it is assumed
        (:func:`navigo_core.business.policy.grade_note`)."""
        gid = self.parse_grade(str(raw or "").strip()) if raw else None
        return (gid, False) if gid is not None else (self.default_grade, True)

    def stated_grade(self, text: str) -> str | None:
        """The grade a traveller states about themself ("我是经理级", "I'm a director", "my grade is G2"), or None.

        Only right after such a statement, and only a grade's id, label or alias that starts there: "我是来拜访
        客户经理的" or "I'm meeting the director" name someone else's title, not the traveller's grade."""
        s = unicodedata.normalize("NFKC", text or "")
        for m in _STATEMENT.finditer(s):
            rest = _STATEMENT_FILLER.sub("", s[m.end():m.end() + 40], count=1)
            gid = self._grade_at_start(rest)
            if gid is not None:
                return gid
        return None

    def _grade_at_start(self, text: str) -> str | None:
        m = re.match(r"([Gg]\d{1,2})(?![A-Za-z0-9])", text)
        if m and (gid := self.parse_grade(m.group(1))):
            return gid
        low = text.casefold()
        names = sorted(((a, g.id) for g in self.grade_defs for a in [g.label_en, g.label_zh, *g.aliases] if a),
                       key=lambda x: -len(x[0]))
        for alias, gid in names:
            a = alias.casefold()
            if low.startswith(a) and (not a.isascii() or not low[len(a):len(a) + 1].isalpha()):
                return gid
        return None

    def _check_grade(self, grade: str) -> str:
        gid = grade if grade in self.grades else self.parse_grade(grade)
        if gid is None:
            raise PolicyError("policy.error.unknown_grade_arg", grade=grade, known=", ".join(self.grades))
        return gid

    # --- tiers ---
    def tier(self, tier_id: str) -> Tier:
        for t in self.tiers:
            if t.id == tier_id:
                return t
        raise PolicyError("policy.error.unknown_tier_arg", tier=tier_id, known=", ".join(t.id for t in self.tiers))

    @property
    def default_tier(self) -> Tier:
        return next(t for t in self.tiers if t.default)

    def match_city(self, name: str) -> Tier | None:
        """The tier that lists ``name`` (English or Chinese) explicitly, or None."""
        key = norm(name)
        if not key:
            return None
        for t in self.tiers:
            if any(norm(c) == key for c in t.cities):
                return t
        return None

    def tier_for_country(self, country: str) -> Tier | None:
        cc = (country or "").upper()
        return next((t for t in self.tiers if cc and cc in t.countries), None)

    def tier_of(self, city: Any) -> Tier:
        """The tier of a city: a gazetteer ``Place`` or a name in English or Chinese.

        Explicit city lists win, then the country (a bare name is looked up in the offline
        gazetteer for it), then the default tier.
        """
        if city is None:
            return self.default_tier
        if isinstance(city, str):
            found = self.match_city(city)
            if found:
                return found
            place = _gazetteer_place(city)
            if place is None:
                return self.default_tier
            city = place
        for name in (getattr(city, "name", ""), getattr(city, "name_zh", "")):
            found = self.match_city(name) if name else None
            if found:
                return found
        return self.tier_for_country(getattr(city, "country", "")) or self.default_tier

    def city_names(self) -> list[tuple[str, str]]:
        """(name, tier id) for every city named in the tiers, longest name first."""
        return sorted(((c, t.id) for t in self.tiers for c in t.cities), key=lambda x: -len(x[0]))

    # --- amounts ---
    def _amount(self, rule: AmountRule, tier_id: str, grade: str) -> Money:
        gid = self._check_grade(grade)
        self.tier(tier_id)
        return Money(amount=rule.table[tier_id][gid], currency=self.currency)

    def hotel_cap(self, tier_id: str, grade: str) -> Money:
        return self._amount(self.hotel, tier_id, grade)

    def meal_allowance(self, tier_id: str, grade: str) -> Money:
        return self._amount(self.meals, tier_id, grade)

    def transport_allowance(self, tier_id: str, grade: str) -> Money:
        return self._amount(self.local_transport, tier_id, grade)

    # --- classes ---
    def cabin_rule(self, grade: str, duration_hours: float | None) -> ClassRule:
        gid = self._check_grade(grade)
        hours = float(duration_hours or 0)
        for rule in self.flight_rules:
            if rule.applies(gid, hours):
                return rule
        return ClassRule(id="FLIGHT-DEFAULT", grades=[gid], value="economy", text_en="Economy class (no rule matched)",
                         text_zh="经济舱（无适用规则）")

    def cabin(self, grade: str, duration_hours: float | None) -> str:
        return self.cabin_rule(grade, duration_hours).value

    def train_rule(self, grade: str, duration_hours: float | None) -> ClassRule:
        gid = self._check_grade(grade)
        hours = float(duration_hours or 0)
        for rule in self.train_rules:
            if rule.applies(gid, hours):
                return rule
        return ClassRule(id="TRAIN-DEFAULT", grades=[gid], value="second_class",
                         text_en="Second-class seat (no rule matched)", text_zh="二等座（无适用规则）")

    def train_seat(self, grade: str, duration_hours: float | None) -> str:
        return self.train_rule(grade, duration_hours).value

    def rules_for(self, kind: str, grade: str) -> list[ClassRule]:
        """The flight (``kind="flight"``) or train rules naming ``grade``, in order."""
        gid = self._check_grade(grade)
        rules = self.flight_rules if kind == "flight" else self.train_rules
        return [r for r in rules if gid in r.grades]

    def advance_text(self, lang: str = "en") -> str:
        return (self.advance_text_zh if lang == "zh" else self.advance_text_en) or self.advance_text_en


def _gazetteer_place(name: str) -> Any:
    from navigo_core.providers.places.gazetteer import GazetteerPlaceProvider  # our own module: never hidden

    try:
        found = GazetteerPlaceProvider().search(name, limit=1)
    except Exception:  # noqa: BLE001 - the gazetteer is a best-effort hint here
        return None
    return found[0] if found else None


# --- parsing and validation -------------------------------------------------------------

def _err(code: str, file: str, where: str, **params: Any) -> PolicyError:
    return PolicyError(code, file=file, where=where, **params)


def _mapping(value: Any, file: str, where: str) -> dict[str, Any]:
    if value is None:
        raise _err("policy.error.missing", file, where)
    if not isinstance(value, dict):
        raise _err("policy.error.bad_value", file, where, value=repr(value)[:60], expected="a mapping (key: value)")
    return value


MAX_AMOUNT = 1_000_000.0  # the largest cap or allowance a policy may state (per night / per day)
MAX_HOURS = 1000.0
MAX_ADVANCE_DAYS = 366


def _number(value: Any, file: str, where: str, *, limit: float = MAX_AMOUNT) -> float:
    """A positive, finite amount up to ``limit``: ``.nan`` / ``.inf`` (which would disable a cap), a negative
    or an absurd number is refused with the YAML path."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _err("policy.error.bad_value", file, where, value=repr(value)[:60], expected="a number")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond float range
        raise _err("policy.error.too_big", file, where, value=str(value)[:20] + "…", max=f"{limit:,.0f}") from None
    if not math.isfinite(number):
        raise _err("policy.error.not_finite", file, where, value=repr(value)[:20])
    if number <= 0:
        raise _err("policy.error.negative", file, where, value=value)
    if number > limit:
        raise _err("policy.error.too_big", file, where, value=f"{number:,.0f}", max=f"{limit:,.0f}")
    return number


def _texts(spec: dict[str, Any]) -> tuple[str, str]:
    return str(spec.get("en", "") or ""), str(spec.get("zh", "") or "")


def _amount_rule(raw: dict[str, Any], section: str, table_key: str, file: str, tiers: list[str],
                 grades: list[str], per_grade_required: bool) -> AmountRule:
    spec = _mapping(raw.get(section), file, section)
    table = _mapping(spec.get(table_key), file, f"{section}.{table_key}")
    for tier_id in table:
        if tier_id not in tiers:
            raise _err("policy.error.unknown_tier", file, f"{section}.{table_key}.{tier_id}", tier=tier_id,
                       known=", ".join(tiers))
    out: dict[str, dict[str, float]] = {}
    for tier_id in tiers:
        where = f"{section}.{table_key}.{tier_id}"
        if tier_id not in table:
            raise _err("policy.error.missing_tier", file, f"{section}.{table_key}", tier=tier_id)
        value = table[tier_id]
        if isinstance(value, dict):
            for g in value:
                if g not in grades:
                    raise _err("policy.error.unknown_grade", file, f"{where}.{g}", grade=g, known=", ".join(grades))
            row = {}
            for g in grades:
                if g not in value:
                    raise _err("policy.error.missing_grade", file, where, grade=g)
                row[g] = _number(value[g], file, f"{where}.{g}")
            out[tier_id] = row
        elif per_grade_required:
            raise _err("policy.error.bad_value", file, where, value=repr(value)[:60],
                       expected="a mapping of grade to amount (G1: 500, …)")
        else:
            amount = _number(value, file, where)
            out[tier_id] = {g: amount for g in grades}
    en, zh = _texts(spec)
    return AmountRule(id=str(spec.get("id") or section.upper()), text_en=en, text_zh=zh, table=out)


def _class_rules(raw: dict[str, Any], section: str, value_key: str, allowed: tuple[str, ...], file: str,
                 grades: list[str]) -> list[ClassRule]:
    rules = raw.get(section)
    if rules is None:
        raise _err("policy.error.missing", file, section)
    if not isinstance(rules, list) or not rules:
        raise _err("policy.error.bad_value", file, section, value=repr(rules)[:60], expected="a non-empty list of rules")
    out = []
    for i, spec in enumerate(rules):
        where = f"{section}[{i}]"
        spec = _mapping(spec, file, where)
        gl = spec.get("grades")
        if not isinstance(gl, list) or not gl:
            raise _err("policy.error.bad_value", file, f"{where}.grades", value=repr(gl)[:60],
                       expected="a non-empty list of grades")
        for g in gl:
            if g not in grades:
                raise _err("policy.error.unknown_grade", file, f"{where}.grades", grade=g, known=", ".join(grades))
        value = spec.get(value_key)
        if value not in allowed:
            raise _err("policy.error.bad_value", file, f"{where}.{value_key}", value=repr(value)[:60],
                       expected=" | ".join(allowed))
        over = spec.get("over_hours", 0) or 0
        if isinstance(over, bool) or not isinstance(over, (int, float)) or over < 0:
            raise _err("policy.error.negative", file, f"{where}.over_hours", value=repr(over)[:20])
        if over:
            over = _number(over, file, f"{where}.over_hours", limit=MAX_HOURS)
        en, zh = _texts(spec)
        out.append(ClassRule(id=str(spec.get("id") or f"{section}-{i + 1}"), grades=[str(g) for g in gl],
                             over_hours=float(over), value=str(value), text_en=en, text_zh=zh))
    return out


def parse_policy(raw: Any, file: str) -> TravelPolicy:
    """Validate the YAML mapping ``raw`` (read from ``file``) into a :class:`TravelPolicy`."""
    raw = _mapping(raw, file, "(top level)")
    currency = str(raw.get("currency") or "CNY").upper()
    if not re.fullmatch(r"[A-Z]{3}", currency):
        raise _err("policy.error.bad_value", file, "currency", value=currency, expected="an ISO 4217 code such as CNY")
    # grades
    graw = _mapping(raw.get("grades"), file, "grades")
    if not graw:
        raise _err("policy.error.missing", file, "grades")
    grade_defs = []
    for gid, spec in graw.items():
        spec = spec if isinstance(spec, dict) else {"en": str(spec or gid)}
        aliases = spec.get("aliases") or []
        if not isinstance(aliases, list):
            raise _err("policy.error.bad_value", file, f"grades.{gid}.aliases", value=repr(aliases)[:60],
                       expected="a list of names")
        grade_defs.append(Grade(id=str(gid), label_en=str(spec.get("en") or gid), label_zh=str(spec.get("zh") or spec.get("en") or gid),
                                aliases=[str(a) for a in aliases]))
    grades = [g.id for g in grade_defs]
    # tiers
    traw = _mapping(raw.get("tiers"), file, "tiers")
    if not traw:
        raise _err("policy.error.missing", file, "tiers")
    tiers = []
    for tid, spec in traw.items():
        where = f"tiers.{tid}"
        spec = _mapping(spec, file, where)
        for key in ("cities", "countries"):
            if not isinstance(spec.get(key) or [], list):
                raise _err("policy.error.bad_value", file, f"{where}.{key}", value=repr(spec.get(key))[:60],
                           expected="a list")
        tiers.append(Tier(id=str(tid), label_en=str(spec.get("en") or tid), label_zh=str(spec.get("zh") or spec.get("en") or tid),
                          cities=[str(c) for c in spec.get("cities") or []],
                          countries=[str(c).upper() for c in spec.get("countries") or []], default=bool(spec.get("default"))))
    defaults = [t.id for t in tiers if t.default]
    if len(defaults) != 1:
        raise _err("policy.error.no_default", file, "tiers", found=", ".join(defaults) or "-")
    tier_ids = [t.id for t in tiers]
    hotel = _amount_rule(raw, "hotel", "caps", file, tier_ids, grades, per_grade_required=True)
    meals = _amount_rule(raw, "meals", "allowance", file, tier_ids, grades, per_grade_required=False)
    transport = _amount_rule(raw, "local_transport", "allowance", file, tier_ids, grades, per_grade_required=False)
    flight_rules = _class_rules(raw, "flight_cabin", "cabin", CABINS, file, grades)
    train_rules = _class_rules(raw, "train_seat", "seat", SEATS, file, grades)
    adv = _mapping(raw.get("advance_booking"), file, "advance_booking")
    days = adv.get("days")
    if isinstance(days, bool) or not isinstance(days, int):
        raise _err("policy.error.bad_value", file, "advance_booking.days", value=repr(days)[:60],
                   expected="a whole number of days")
    if days < 0:
        raise _err("policy.error.negative", file, "advance_booking.days", value=str(days)[:20])
    if days > MAX_ADVANCE_DAYS:
        raise _err("policy.error.too_big", file, "advance_booking.days", value=str(days)[:20],
                   max=str(MAX_ADVANCE_DAYS))
    name = raw.get("name") if isinstance(raw.get("name"), dict) else {}
    aen, azh = _texts(adv)
    return TravelPolicy(name_en=str(name.get("en") or "Travel policy"), name_zh=str(name.get("zh") or name.get("en") or "差旅政策"),
                        currency=currency, source=file, grade_defs=grade_defs, tiers=tiers, hotel=hotel, meals=meals,
                        local_transport=transport, flight_rules=flight_rules, train_rules=train_rules, advance_days=days,
                        advance_rule_id=str(adv.get("id") or "ADVANCE-1"), advance_text_en=aen, advance_text_zh=azh)
