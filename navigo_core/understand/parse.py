"""``parse_request`` (one message) and ``update_request`` (the next message of the same conversation).

Rules first; with an LLM configured, :mod:`.llm` reconciles (a rule value is not final).

Conversation state (:func:`update_request`)
    * a later value replaces an earlier one, except that a vague later value ("this weekend")
      never replaces an explicit earlier one; an explicit value replaces a vague one ("long
      weekend" → "2027-04-02 to 2027-04-05");
    * corrections work because later wins: "actually 3 people", "不对，5号回来" (a day of the
      month alone is read against the known start);
    * an answer may fill several fields ("Hangzhou, 12 people, 2027-04-20 to 2027-04-22");
    * a bare answer fills the field that was asked (``expect``): a place, a number of
      travellers, an amount, a trip length.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import TYPE_CHECKING

from navigo_core.i18n import detect_lang
from navigo_core.limits import Limits, clip
from navigo_core.limits import current as current_limits
from navigo_core.providers.places import Place, PlaceProvider
from navigo_core.providers.places.resolve import same_place
from navigo_core.understand import dates as _dates
from navigo_core.understand.interests import parse_interests
from navigo_core.understand.models import Ambiguity, Money, ParsedRequest
from navigo_core.understand.llm import reconcile
from navigo_core.understand.money import BudgetResult, parse_budget
from navigo_core.understand.numbers import normalize_text, parse_amount, parse_number
from navigo_core.understand.places import _GAZ, Mention, find_places, resolve_mentions
from navigo_core.understand.travellers import parse_travellers

if TYPE_CHECKING:
    from navigo_core.llm import LLMClient

__all__ = ["DEFAULT_CURRENCY", "MAX_TEXT", "parse_request", "update_request"]

DEFAULT_CURRENCY = {"zh": "CNY", "en": "USD"}
MAX_TEXT = 2000  # characters read by default; the limit in force is the MAX_MESSAGE_CHARS setting


def _rules(text: str, *, today: date, lang: str, places: PlaceProvider, anchor: date | None = None,
           fixed: dict[str, Place] | None = None, expect: str | None = None,
           travellers_known: int | None = None, limits: Limits | None = None) -> ParsedRequest:
    lim = limits or current_limits()
    text = normalize_text((text or "")[: 2 * lim.message_chars])[: lim.message_chars]  # cut before any rule runs
    req = ParsedRequest(text=text, lang=lang)

    # dates
    d = _dates.parse_dates(text, today, anchor=anchor)
    for key in d.notes:
        req.note(key)
    if d.start:
        req.start_date, req.sources["start_date"] = d.start, "rule"
    if d.end and (d.start is None or d.end >= d.start):
        if d.start is None and anchor is not None and d.end < anchor:
            req.note("request.note.end_before_start")
        else:
            req.end_date, req.sources["end_date"] = d.end, "rule"
    words = _span_words(text, d.spans)
    _limit_window(req, today, lim, words)
    if _limit_length(req, lim, words):
        d.duration_days = None
    if req.start_date and req.start_date < today:
        req.note("request.note.date_in_past")
    if d.vague:
        req.vague += [f for f in ("start_date", "end_date") if getattr(req, f) is not None]
    if d.relative:
        req.relative += [f for f in ("start_date", "end_date") if getattr(req, f) is not None]
    if d.duration_days and d.duration_days <= lim.trip_days:
        req.days, req.sources["days"] = d.duration_days, "rule"
    elif d.duration_days:
        _too_long(req, d.duration_days, lim, words)
    elif req.start_date and req.end_date:
        req.days, req.sources["days"] = (req.end_date - req.start_date).days + 1, "rule"
    if d.period and req.start_date is None:
        req.ambiguities.append(Ambiguity(field="dates", text=d.period_text, reason="understand.amb.period",
                                         candidates=_dates.period_options(d.period, req.days, lang)))
    if expect == "days" and req.days is None and (n := _bare_int(text)):
        if n <= lim.trip_days:
            req.days, req.sources["days"] = n, "rule"
        else:
            _too_long(req, n, lim, text)

    # travellers
    tr = parse_travellers(text)
    if tr.adults is None and tr.children is None and expect == "travellers" and (n := _bare_int(text)) is not None:
        tr.adults = n
    total = (tr.adults or 0) + (tr.children or 0)
    if total > lim.travellers_max or (tr.adults == 0 and not tr.children):  # "0 adults", "1e20 adults", "70 people"
        _travellers_out_of_range(req, tr.words or str(total), lim)
    else:
        if tr.adults is not None and (tr.adults > 0 or tr.children):
            req.adults, req.sources["adults"] = tr.adults, "rule"
        if tr.children is not None:
            req.children, req.sources["children"] = tr.children, "rule"

    # budget
    b = parse_budget(text)
    if b is None and expect == "budget" and (a := parse_amount(re.sub(r"^(?:about|around|大概|大约|约)\s*", "", text))):
        b = BudgetResult(a, None)
    if b is not None and 0 < b.amount < 1e9:
        currency = b.currency or DEFAULT_CURRENCY.get(lang, "USD")
        if b.currency is None:
            req.note("request.note.currency_assumed")
        amount = b.amount
        party = req.travellers or travellers_known
        if b.per_person:
            req.budget_per_person = True
            amount *= party or 1
            req.note("request.note.per_person" if party else "request.note.per_person_unknown")
        req.budget, req.sources["budget"] = Money(amount=amount, currency=currency), "rule"

    # places
    mentions = find_places(text)
    said_else = bool(req.start_date or req.end_date or req.days or req.adults or req.children or req.budget
                     or req.ambiguities)
    if expect in ("origin", "destination") and not mentions and not said_else:
        bare = text.strip(" .!?。！？")
        if 1 <= len(bare) <= 40 and not re.search(r"\d", bare) and not _NOT_AN_ANSWER.search(bare):
            mentions = [Mention(bare, 0, len(bare), expect, bool(_GAZ.name_kinds(bare)))]
    if expect == "origin" and len(mentions) == 1 and mentions[0].role == "destination" and not _has_dest_cue(text):
        mentions[0].role = "origin"
    reading = resolve_mentions(mentions, places, lang=lang, fixed=fixed)
    for role in ("origin", "destination"):
        if getattr(reading, f"{role}_text"):
            setattr(req, f"{role}_text", getattr(reading, f"{role}_text"))
            setattr(req, role, getattr(reading, role))
            req.sources[role] = "rule"
    req.ambiguities += reading.ambiguities

    # interests
    if interests := parse_interests(text):
        req.interests, req.sources["interests"] = interests, "rule"
    return req


_NOT_AN_ANSWER = re.compile(
    r"\b(?:don'?t know|do not know|not sure|no idea|unsure|anywhere|whatever|any ?where|you (?:choose|pick|decide)|"
    r"suggest|recommend|ideas?|surprise me|not yet|undecided|no preference|doesn'?t matter|skip)\b"
    r"|不知道|没想好|还没定|随便|都行|无所谓|你定|你推荐|推荐一下|不确定|没主意|哪里都行|跳过", re.IGNORECASE)


def _span_words(text: str, spans: list[tuple[int, int]]) -> str:
    """The date words of the message (for a question about them)."""
    if not spans:
        return ""
    return clip(text[min(a for a, _ in spans):max(b for _, b in spans)].strip(), 60)


def _limit_window(req: ParsedRequest, today: date, lim: Limits, words: str = "") -> bool:
    """Dates outside the window (e.g. before today - 1 year, after today + 2 years) are not taken; the
    question says the window. True when dates were dropped."""
    earliest, latest = lim.date_window(today)
    if not any(d is not None and not earliest <= d <= latest for d in (req.start_date, req.end_date)):
        return False
    words = words or " – ".join(d.isoformat() for d in (req.start_date, req.end_date) if d is not None)
    req.end_date = None
    req.start_date = None
    req.days = None
    for f in ("start_date", "end_date", "days"):
        req.sources.pop(f, None)
    req.vague = [v for v in req.vague if v not in ("start_date", "end_date")]
    req.relative = [v for v in req.relative if v not in ("start_date", "end_date")]
    req.ambiguities = [a for a in req.ambiguities if a.field != "dates"] + [Ambiguity(
        field="dates", text=words, reason="understand.limit.dates",
        params={"earliest": earliest.isoformat(), "latest": latest.isoformat()})]
    return True


def _too_long(req: ParsedRequest, days: int, lim: Limits, words: str = "") -> None:
    req.note("request.note.trip_too_long")
    req.ambiguities = [a for a in req.ambiguities if not (a.field == "dates" and a.is_limit)] + [Ambiguity(
        field="dates", text=clip(words, 60), reason="understand.limit.trip_days",
        params={"days": int(min(days, 10**6)), "max": lim.trip_days})]


def _limit_length(req: ParsedRequest, lim: Limits, words: str = "") -> bool:
    """A trip longer than the limit keeps its start and asks for the length again ("May 1 to Sep 30")."""
    if not (req.start_date and req.end_date):
        return False
    days = (req.end_date - req.start_date).days + 1
    if days <= lim.trip_days:
        return False
    req.end_date = None
    req.days = None
    req.sources.pop("end_date", None)
    req.sources.pop("days", None)
    _too_long(req, days, lim, words)
    return True


def _travellers_out_of_range(req: ParsedRequest, words: str, lim: Limits) -> None:
    req.note("request.note.travellers_out_of_range")  # a party this size is not a trip we plan
    req.ambiguities = [a for a in req.ambiguities if a.field != "travellers"] + [Ambiguity(
        field="travellers", text=clip(words, 40), reason="understand.limit.travellers",
        params={"min": lim.travellers_min, "max": lim.travellers_max})]


def _limit(req: ParsedRequest, today: date, lim: Limits) -> ParsedRequest:
    """The limits on a finished reading (after an LLM's reconciliation or a merge): the same checks as
    the rules apply, for values that did not come from them."""
    _limit_window(req, today, lim)
    _limit_length(req, lim)
    if req.days is not None and req.days > lim.trip_days:
        days, req.days = req.days, None
        req.sources.pop("days", None)
        _too_long(req, days, lim)
    if (req.travellers or 0) > lim.travellers_max:
        total = req.travellers or 0
        req.adults = None
        req.children = None
        req.sources.pop("adults", None)
        req.sources.pop("children", None)
        _travellers_out_of_range(req, str(total), lim)
    return req


def _has_dest_cue(text: str) -> bool:
    return bool(re.search(r"\b(?:to|visit|heading)\b|去|到|前往", text, re.IGNORECASE))


def _bare_int(text: str) -> int | None:
    m = re.fullmatch(r"\s*(\d{1,3}|[一二两俩三四五六七八九十]+)\s*(?:people|persons?|adults?|days?|天|个人|人|位|个|日)?\s*[.。!]?\s*",
                     text, re.IGNORECASE)
    return parse_number(m.group(1)) if m else None


def parse_request(text: str, *, today: date, lang: str | None = None, places: PlaceProvider | None = None,
                  llm: LLMClient | None = None) -> ParsedRequest:
    """Every request field in ``text``; the offline gazetteer resolves places unless ``places`` is given.

    With ``llm``, the model reads the text and the rules' reading and returns the full field set;
    where both have a value and they differ, the one backed by words in the message wins, and a
    remaining conflict becomes a question (:mod:`navigo_core.understand.llm`).
    """
    lim = current_limits()
    text = (text or "")[: 2 * lim.message_chars]
    lang = lang or detect_lang(text)
    provider = places or _GAZ
    req = _rules(text, today=today, lang=lang, places=provider, limits=lim)
    if llm is not None:
        req = _limit(reconcile(req, req.text, today=today, places=provider, llm=llm), today, lim)
    return req


def _take_picked_candidate(previous: ParsedRequest, text: str, new: ParsedRequest) -> None:
    """A quick reply of an earlier place question is that candidate's place, as offered."""
    key = normalize_text(text).casefold()
    for amb in previous.ambiguities:
        if amb.field in ("origin", "destination") and amb.places:
            for cand, place in zip(amb.candidates, amb.places):
                if normalize_text(cand).casefold() == key:
                    setattr(new, f"{amb.field}_text", cand)
                    setattr(new, amb.field, place)
                    new.sources[amb.field] = "rule"
                    new.ambiguities = [a for a in new.ambiguities if a.field != amb.field]
                    return


#: Words that make a newly named destination a change of plan, not a side remark ("my sister lives in Osaka").
_CHANGE_WORDS = re.compile(r"\b(?:actually|instead|rather|change|switch|make it|swap)\b|\bnot\b.{1,40}\bbut\b|"
                           r"不对|改成|改为|改去|改到|换成|换到|换去|其实|还是去|不去[^，。,.]{0,8}了|算了|而是")


def _destination_switch(previous: ParsedRequest, new: ParsedRequest, text: str, expect: str | None) -> Ambiguity | None:
    """A question when a later message names another destination than the one known, without saying it is a change
    and without being the answer to a destination question: "Should the trip go to Osaka instead of Kyoto?" (a
    name the user typed is never silently replaced by another one). None when the message settles it."""
    before, after = previous.destination, new.destination
    if before is None or after is None or expect == "destination" or same_place(before, after):
        return None
    if _CHANGE_WORDS.search(text):
        return None
    from navigo_core.understand.places import _option_text

    lang = previous.lang if previous.lang in ("en", "zh") else "en"
    a, b = _option_text(after, lang), _option_text(before, lang)
    return Ambiguity(field="destination", text=new.destination_text or a, reason="understand.amb.destination_switch",
                     candidates=[a, b], places=[after, before],  # the question names them short
                     params={"a": after.display_name(lang), "b": before.display_name(lang)})


def update_request(previous: ParsedRequest, text: str, *, today: date, places: PlaceProvider | None = None,
                   expect: str | None = None, llm: LLMClient | None = None) -> ParsedRequest:
    """``previous`` updated with the next message ``text`` (see the module docstring).

    ``expect`` names the field the last question asked for ("destination", "dates", "days",
    "travellers", "budget", "origin"), so a bare answer ("Hangzhou", "3", "6000") fills it.
    """
    lim = current_limits()
    text = (text or "")[: 2 * lim.message_chars]
    provider = places or _GAZ
    fixed = {r: p for r in ("origin", "destination") if (p := getattr(previous, r)) is not None}
    new = _rules(text, today=today, lang=previous.lang, places=provider, anchor=previous.start_date, fixed=fixed,
                 expect=expect, travellers_known=previous.travellers, limits=lim)
    if llm is not None:
        new = _limit(reconcile(new, new.text, today=today, places=provider, llm=llm), today, lim)
    _take_picked_candidate(previous, text, new)
    out = previous.model_copy(deep=True)
    out.text = f"{previous.text}\n{new.text}".strip()

    def replace(name: str) -> bool:
        value = getattr(new, name)
        if value is None or value == [] or value is False:
            return False
        if name in new.vague and getattr(out, name) is not None and name not in out.vague:
            return False  # a vague later value never replaces an explicit one
        return True

    if new.start_date is not None and replace("start_date"):
        start: date = new.start_date
        end = new.end_date
        if end is None and new.days:
            end = start + timedelta(days=new.days - 1)
        elif end is None and out.days and "days" not in out.vague:
            end = start + timedelta(days=out.days - 1)
        if end is not None and (end - start).days + 1 > lim.trip_days:
            _too_long(new, (end - start).days + 1, lim, new.text)
            end = None
        out.end_date = None
        out.start_date = start
        out.end_date = end
        out.vague = [v for v in out.vague if v not in ("start_date", "end_date")] + [
            v for v in new.vague if v in ("start_date", "end_date")]
        for f in ("start_date", "end_date"):
            out.sources[f] = "user" if previous.text else new.sources.get(f, "rule")
        out.days = (end - start).days + 1 if end else (new.days or out.days)
    elif new.end_date is not None and replace("end_date"):
        if out.start_date is not None and (new.end_date - out.start_date).days + 1 > lim.trip_days:
            _too_long(new, (new.end_date - out.start_date).days + 1, lim, new.text)
        elif out.start_date is None or new.end_date >= out.start_date:
            out.end_date = new.end_date
            out.sources["end_date"] = "user"
            if out.start_date:
                out.days = (out.end_date - out.start_date).days + 1
    elif new.days and out.start_date is not None and (
            out.end_date is None or "end_date" in out.vague or expect in ("days", "dates") or
            re.search(r"actually|instead|change|make it|不对|改成|改为|其实|还是", text, re.IGNORECASE)):
        out.days = new.days
        out.end_date = out.start_date + timedelta(days=new.days - 1)
        out.sources["end_date"] = "user"
    elif new.days:
        out.days = new.days
    for name in ("adults", "children", "interests"):
        if replace(name):
            setattr(out, name, getattr(new, name))
            out.sources[name] = "user"
    if new.adults is not None and new.children is None and previous.children is not None and "孩" not in text \
            and not re.search(r"kid|child", text, re.IGNORECASE):
        out.children = previous.children if new.adults != (previous.adults or 0) + (previous.children or 0) else 0
    if new.budget is not None:  # a per-person amount was already multiplied by the known party in _rules
        out.budget = new.budget
        out.budget_per_person = new.budget_per_person
        out.sources["budget"] = "user"
    elif previous.budget_per_person and previous.budget and new.travellers and new.travellers != previous.travellers:
        per = previous.budget.amount / max(previous.travellers or 1, 1)
        out.budget = Money(amount=per * new.travellers, currency=previous.budget.currency)
    switch = _destination_switch(previous, new, text, expect)
    for role in ("origin", "destination"):
        if getattr(new, f"{role}_text") and not (role == "destination" and switch is not None):
            setattr(out, f"{role}_text", getattr(new, f"{role}_text"))
            setattr(out, role, getattr(new, role))
            out.sources[role] = "user"
    # ambiguities: the new message's own, plus the earlier ones it did not settle
    settled = {a.field for a in new.ambiguities}
    if new.start_date is not None:
        settled.add("dates")
    for role in ("origin", "destination"):
        if getattr(new, f"{role}_text"):
            settled.add(role)
    # a limit question concerns the message that went over the limit only
    out.ambiguities = [a for a in previous.ambiguities if a.field not in settled and not a.is_limit] + list(
        new.ambiguities)
    if switch is not None:  # the destination stays until the user says which
        out.ambiguities = [a for a in out.ambiguities if a.field != "destination"] + [switch]
    for key in new.notes:
        out.note(key)
    return _limit(out, today, lim)
