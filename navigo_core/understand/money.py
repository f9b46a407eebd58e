"""Budgets: "预算6000元", "总预算一万五", "1万5", "$1,700", "3k EUR", "15k", "人均3000", "budget of 5000 yuan".

Currencies by ISO code, symbol or word (``data/currencies.yaml``). The amount is what the text
says; "per person" is flagged so the caller multiplies by the party size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from navigo_core.safe_yaml import read_yaml
from navigo_core.understand.numbers import normalize_text, parse_amount

__all__ = ["BudgetResult", "currency_code", "iso_currencies", "parse_budget"]

_DATA = Path(__file__).parent / "data" / "currencies.yaml"


@lru_cache(maxsize=1)
def _words() -> dict[str, str]:
    table: dict[str, list[str]] = read_yaml(_DATA)
    return {w.lower(): code for code, words in table.items() for w in [code, *words]}


def iso_currencies() -> frozenset[str]:
    return frozenset(_words().values())


def currency_code(word: str) -> str | None:
    """ISO 4217 code for a currency word or symbol (元 → CNY, $ → USD, € → EUR …); None if unknown."""
    return _words().get((word or "").strip().lower())


@lru_cache(maxsize=1)
def _regexes() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    words = sorted(_words(), key=len, reverse=True)
    symbols = [w for w in words if not re.search(r"[a-z\u4e00-\u9fff]", w)]
    latin = [w for w in words if re.search(r"[a-z]", w)]
    cjk = [w for w in words if re.search(r"[\u4e00-\u9fff]", w) and not re.search(r"[a-z]", w)]
    before = "|".join([re.escape(w) for w in symbols] + [rf"\b{re.escape(w)}" for w in latin if len(w) == 3])
    after = "|".join([re.escape(w) for w in cjk] + [rf"{re.escape(w)}\b" for w in latin] +
                     [re.escape(w) for w in symbols])
    # bounded repeats and a digit look-behind: a run of 30,000 digits costs microseconds, not seconds
    amount = (r"(?<![\d.,])(\d{1,3}(?:,\d{3}){1,4}(?:\.\d{1,2})?|\d{1,10}(?:\.\d{1,2})?)(?:\s*(k|thousand|grand|"
              r"million)\b|(?:\s*[万千w](?:\d|[一二两三四五六七八九])?千?))?")
    zh_amount = (r"(?<![\d.零〇一二两俩三四五六七八九十百千万])([零〇一二两俩三四五六七八九十百千万\d.]{0,6}[十百千万]"
                 r"[零〇一二两俩三四五六七八九十百千万\d.]{0,6})")
    pre = re.compile(rf"(?P<cur>{before})\s*(?P<amt>{amount})", re.IGNORECASE)
    post = re.compile(rf"(?P<amt>{amount}|{zh_amount})\s*(?P<cur>{after})", re.IGNORECASE)
    cue = re.compile(
        rf"(?:总预算|预算|经费|费用|花费|想花|打算花|能花|花个|人均|每人|每个人|一个人|budget(?:\s+(?:of|is|around|about|under|up to|"
        rf"at most|max(?:imum)?|would be|will be|limit of|cap of|capped at|set at|:))*|spend(?:ing)?(?:\s+(?:about|"
        rf"around|up to|at most|no more than))?)"
        rf"\s*[:：]?\s*(?:是|为|大概|大约|约|在|控制在|不超过|以内|左右)?\s*(?P<amt>{amount}|{zh_amount})", re.IGNORECASE)
    return pre, post, cue


_PER_PERSON = re.compile(r"人均|每人|每个人|一人|/人|per person|per head|a head|each person|a person|/person|"
                         r"\bpp\b|\beach\b|apiece", re.IGNORECASE)


@dataclass
class BudgetResult:
    amount: float
    currency: str | None  # ISO code; None when the text gave none
    per_person: bool = False
    span: tuple[int, int] = (0, 0)


def _amount(text: str) -> float | None:
    return parse_amount(text.replace(" ", ""))


def parse_budget(text: str) -> BudgetResult | None:
    """The budget in ``text`` (the first amount with a currency or a budget word), or None."""
    text = normalize_text(text)
    pre, post, cue = _regexes()
    found: list[BudgetResult] = []
    for m in pre.finditer(text):
        if (a := _amount(m.group("amt"))) is not None and a > 0:
            found.append(BudgetResult(a, currency_code(m.group("cur")), span=m.span()))
    for m in post.finditer(text):
        if any(f.span[0] <= m.start() < f.span[1] for f in found):
            continue
        if (a := _amount(m.group("amt"))) is not None and a > 0:
            found.append(BudgetResult(a, currency_code(m.group("cur")), span=m.span()))
    for m in cue.finditer(text):
        if any(f.span[0] <= m.start("amt") < f.span[1] or m.start("amt") <= f.span[0] < m.end() for f in found):
            continue
        amt = m.group("amt")
        if re.fullmatch(r"[\d.]+", amt) and re.match(r"\s*(?:天|日|晚|个|人|位|days?|nights?|people|persons?)",
                                                     text[m.end():], re.IGNORECASE):
            continue
        if (a := _amount(amt)) is not None and a >= 10:
            found.append(BudgetResult(a, None, span=(m.start("amt"), m.end())))
    if not found:
        return None
    with_currency = [f for f in found if f.currency]
    result = min(with_currency or found, key=lambda f: f.span[0])
    # the cue word may precede the amount: "budget of $3,000", "人均3000"
    window = text[max(0, result.span[0] - 10):result.span[1] + 14]
    result.per_person = bool(_PER_PERSON.search(window))
    return result
