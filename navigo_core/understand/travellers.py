"""Who travels: adults and children, from counts ("2 adults 1 kid", "两大一小", "12 people", "a group of 5")
and from companions ("with my wife", "我和老婆", "带父母", "一家三口", "two of us").

Companion words live in ``data/companions.yaml``: each adds that many adults or children to the
speaker (counted once). Explicit counts win over companions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from navigo_core.safe_yaml import read_yaml
from navigo_core.understand.numbers import EN_NUM, ZH_NUM, normalize_text, parse_number

__all__ = ["TravellerResult", "parse_travellers"]

_DATA = Path(__file__).parent / "data" / "companions.yaml"
_ADULT_ZH = r"(?:大人|成人|成年人|大)"
_CHILD_ZH = r"(?:小孩子?|孩子|儿童|小朋友|娃|宝宝|小孩儿|小)"
_N = rf"(?<!\d)(\d{{1,3}}|{ZH_NUM})"
_EN_COUNT = EN_NUM.replace("|an?|", "|")  # a count, not the article


@dataclass
class TravellerResult:
    adults: int | None = None
    children: int | None = None
    words: str = ""  # the words of a count no trip has ("1e20 adults", "100000 people")


# a count no party has: scientific notation or 4+ digits before a traveller word (bounded runs, linear time)
_HUGE_COUNT = re.compile(
    r"(?<![\w.,])(\d{1,20}(?:\.\d{1,20})?e[+-]?\d{1,4}|\d{4,40}|\d{1,3}(?:,\d{3}){1,12})\s{0,3}"
    r"(?:adults?|people|persons?|travell?ers|pax|guests|passengers|kids|children|大人|成人|个人|名|位|人(?!民))",
    re.IGNORECASE)


@lru_cache(maxsize=1)
def _companions() -> tuple[re.Pattern[str], re.Pattern[str], dict[str, tuple[int, int]]]:
    data = read_yaml(_DATA)
    table: dict[str, tuple[int, int]] = {}
    for entry in data["companions"]:
        for w in entry["words"]:
            table[w.lower()] = (int(entry.get("adults", 0)), int(entry.get("children", 0)))
    zh = sorted((w for w in table if re.search(r"[\u4e00-\u9fff]", w)), key=len, reverse=True)
    en = sorted((w for w in table if not re.search(r"[\u4e00-\u9fff]", w)), key=len, reverse=True)
    zh_re = re.compile(rf"(?:和|跟|带(?:着|上)?|陪(?:着)?|与|同)\s*(?:我的|我|自己的|家里的)?\s*((?:{'|'.join(zh)})"
                       rf"(?:\s*(?:和|跟|还有|、|以及|及)?\s*(?:我的)?\s*(?:{'|'.join(zh)}))*)")
    en_re = re.compile(rf"(?:\b(?:with|and|taking|bringing)|\bme\s*(?:,|\+|&|and)|\bi\s*(?:,|\+|&))\s+(?:my|our)\s+((?:{'|'.join(map(re.escape, en))})"
                       rf"(?:\s*(?:,|and|&)\s*(?:my\s+|our\s+)?(?:{'|'.join(map(re.escape, en))}))*)\b"
                       rf"|\b(?:my|our)\s+({'|'.join(map(re.escape, en))})\s+and\s+(?:i|me)\b", re.IGNORECASE)
    return zh_re, en_re, table


def _companion_count(text: str, low: str) -> TravellerResult | None:
    zh_re, en_re, table = _companions()
    adults = children = 0
    found = False
    for m in zh_re.finditer(text):
        for w in sorted(table, key=len, reverse=True):
            if w in m.group(1) and re.search(r"[\u4e00-\u9fff]", w):
                a, c = table[w]
                adults, children, found = adults + a, children + c, True
                m_group = m.group(1).replace(w, " ")
                for w2 in sorted(table, key=len, reverse=True):
                    if w2 in m_group and re.search(r"[\u4e00-\u9fff]", w2):
                        a2, c2 = table[w2]
                        adults, children = adults + a2, children + c2
                        m_group = m_group.replace(w2, " ")
                break
    for m in en_re.finditer(low):
        group = m.group(1) or m.group(2) or ""
        for part in re.split(r"\s*(?:,|\band\b|&)\s*", group):
            part = re.sub(r"^(?:my|our)\s+", "", part.strip())
            if part in table:
                a, c = table[part]
                adults, children, found = adults + a, children + c, True
    for m in re.finditer(rf"\b(?:with|and|plus|\+)\s+({_EN_COUNT})\s+(?:other\s+)?(?:friends|colleagues|coworkers|"
                         rf"co-workers|buddies|others|people|family members|relatives|classmates)\b", low):
        if (n := parse_number(m.group(1))) and n <= 40:
            adults, found = adults + n, True
    for m in re.finditer(rf"(?:和|跟|带|与)\s*({ZH_NUM}|\d+)\s*(?:个|位|名)\s*(?:朋友|同事|同学|好友|闺蜜|亲戚)", text):
        if (n := parse_number(m.group(1))) and n <= 40:
            adults, found = adults + n, True
    if not found:
        return None
    kids_n = re.search(rf"(?:\b({EN_NUM})\s+(?:kids?|children|sons?|daughters?)\b)|(?:{_N}\s*(?:个)?(?:孩子|小孩|娃))", low)
    if kids_n:
        n = parse_number(kids_n.group(1) or kids_n.group(2))
        if n:
            children = max(children, n)
    return TravellerResult(adults=1 + adults, children=children)


def parse_travellers(text: str) -> TravellerResult:
    """Adults and children in ``text`` (None where it does not say)."""
    text = normalize_text(text)
    low = text.lower()
    if m := _HUGE_COUNT.search(text):
        try:
            huge = float(m.group(1).replace(",", ""))
        except (ValueError, OverflowError):
            huge = float("inf")
        return TravellerResult(adults=int(min(huge, 10**30)), children=None, words=m.group(0))
    res = TravellerResult()
    ages = len(re.findall(rf"\b(?:a|an|one|\d+|{_EN_COUNT})\s+(?:\d{{1,2}}|one|two|three|four|five|six|seven|eight|nine|"
                          rf"ten|eleven|twelve)[- ]years?[- ]old\b", low))
    # 两大一小, 2大1小
    if m := re.search(rf"{_N}\s*(?:个)?\s*大\s*{_N}\s*(?:个)?\s*小(?![时组])", text):
        return TravellerResult(parse_number(m.group(1)), parse_number(m.group(2)))
    if m := re.search(rf"{_N}\s*(?:个|位|名)?\s*(?:大人|成人|成年人)", text):
        res.adults = parse_number(m.group(1))
    if m := re.search(rf"{_N}\s*(?:个|位|名)?\s*(?:小孩子?|孩子|儿童|小朋友|娃|宝宝|小孩儿)", text):
        res.children = parse_number(m.group(1))
    if m := re.search(rf"\b({EN_NUM})\s+(?:adults?|grown-?ups?)\b", low):
        res.adults = parse_number(m.group(1))
    if m := re.search(rf"\b({EN_NUM})\s+(?:kids?|children|child|toddlers?|teens?|teenagers?|little ones?|infants?|"
                      rf"babies|baby)\b", low):
        res.children = parse_number(m.group(1))
    if ages and res.children is None:
        res.children = ages
    if res.adults is not None or res.children is not None:
        if res.adults is None:
            comp = _companion_count(text, low)
            res.adults = comp.adults if comp else None
        if res.children is None and res.adults is not None:
            res.children = 0 if not re.search(r"kid|child|孩|儿童|娃|宝宝|baby|toddler", low) else None
        return res
    m = re.search(rf"一家\s*({ZH_NUM}|\d+)\s*口", text) or re.search(rf"\bfamily of ({EN_NUM})\b", low)
    if m and (n := parse_number(m.group(1))):
        return TravellerResult(adults=min(2, n), children=max(0, n - 2))
    m = (re.search(rf"(?:我们|一共|总共|共)?\s*{_N}\s*(?:个|位|名)\s*人", text)
         or re.search(rf"(?:我们|一共|总共|共)\s*{_N}\s*(?:个|位|名)\s*(?:朋友|同事|同学|好友|闺蜜)", text)
         or re.search(rf"{_N}\s*人(?:同行|出行|出游|团|行|一起)", text)
         or re.search(rf"\b({EN_NUM})\s+(?:people|persons|person|travell?ers|adults|of us|pax|guests|"
                      rf"passengers|tickets?|seats?)\b", low)
         or re.search(rf"\b(?:we are|we're|us)\s+({_EN_COUNT})\s+(?:friends|colleagues|coworkers)\b", low)
         or re.search(rf"\b(?:party of|group of|team of|family of|crew of)\s+({_EN_COUNT})\b", low)
         or re.search(rf"\b(?:we are|we're|for)\s+({_EN_COUNT})(?:\s+people)?\b"
                      rf"(?!\s*(?:days?|nights?|weeks?|[-:]|am|pm|dollars|usd|euros|yuan|\$|%))", low))
    if m and (n := parse_number(m.group(1))) and n <= 60:
        return TravellerResult(adults=n, children=0 if n == 1 else None)
    if m := re.search(r"\bfor (?:a )?(?:couple|pair|duo|two)\b|\bfor a trio\b|\b(?:a|the) (?:duo|pair|trio)\b|"
                      r"\b(?:a )?(?:couple|pair) of (?:travell?ers|people|friends|adults)\b", low):
        return TravellerResult(adults=3 if "trio" in m.group(0) else 2, children=None)
    if re.search(r"(?:我)?一个人|独自|自己去|独行|单人|一人(?:出行|游|旅行)", text) or re.search(
            r"\b(?:solo|alone|by myself|on my own|just me|only me|single travell?er|single person|one person|"
            r"myself only|one traveller|one traveler|individual traveller)\b", low):
        return TravellerResult(adults=1, children=0)
    comp = _companion_count(text, low)
    if comp is not None:
        return comp
    if re.search(r"情侣|夫妻|两口子|小两口|我们俩|我俩|咱俩|我们两个|二人世界|蜜月", text) or re.search(
            r"\b(?:couple|honeymoon|two of us|both of us|the two of us|me and my (?:wife|husband|partner|girlfriend|"
            r"boyfriend|friend)|my (?:wife|husband|partner|girlfriend|boyfriend) and i)\b", low):
        return TravellerResult(adults=2, children=0)
    return res
