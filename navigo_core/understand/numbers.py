"""Numbers as people write them: digits, Chinese numerals, mixtures ("1万5", "2万5千"), English words.

* :func:`zh_number` — a Chinese (or mixed digit/Chinese) numeral: 三 → 3, 十二 → 12, 一百零五 → 105,
  一万五 → 15000 (a digit after the last unit is one unit lower, as people say it), 1万5 → 15000,
  2万5千 → 25000, 1.5万 → 15000; None when ``text`` is not a numeral.
* :func:`parse_number` — digits, a Chinese numeral, or an English number word ("a"/"an" = 1).
* :func:`parse_amount` — an amount with an optional scale: "15k", "3.5K", "1,700", "1.5万", "两千", "2 thousand".
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["EN_NUM", "ZH_NUM", "NUM", "normalize_text", "parse_amount", "parse_number", "zh_number"]

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "壹": 1, "二": 2, "贰": 2, "两": 2, "俩": 2, "三": 3, "叁": 3, "四": 4,
              "肆": 4, "五": 5, "伍": 5, "六": 6, "陆": 6, "七": 7, "柒": 7, "八": 8, "捌": 8, "九": 9, "玖": 9}
_ZH_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000, "万": 10_000, "萬": 10_000,
             "亿": 100_000_000}
_EN_NUMBERS = {"one": 1, "a": 1, "an": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
               "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
               "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
               "twenty": 20, "thirty": 30, "couple": 2, "pair": 2, "duo": 2, "trio": 3, "dozen": 12}
ZH_NUM = r"[零〇一二两俩三四五六七八九十百千万壹贰叁肆伍陆柒捌玖拾佰仟萬亿]{1,12}"
EN_NUM = (r"(?:\d{1,4}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
          r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|an?|single|couple|pair|duo|trio|dozen)")
# digits and/or Chinese numerals, e.g. "1万5", "2万5千", "1.5万", "三千五"
NUM = r"(?:\d+(?:\.\d+)?[十百千万亿]?(?:[\d零一二两三四五六七八九]+[千百十]?)*|[零〇一二两俩三四五六七八九十百千万亿]+)"
_TOKEN = re.compile(r"\d+(?:\.\d+)?|.")


def normalize_text(text: str) -> str:
    """NFKC (full-width digits and punctuation folded), whitespace collapsed."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text or "")).strip()


def zh_number(text: str) -> float | int | None:
    """A Chinese or mixed numeral as a number (see the module docstring); None if not one."""
    s = (text or "").strip()
    if not s or not re.fullmatch(r"[\d.零〇一二两俩三四五六七八九十百千万壹贰叁肆伍陆柒捌玖拾佰仟萬亿]+", s):
        return None
    tokens = _TOKEN.findall(s)
    if any(t not in _ZH_DIGITS and t not in _ZH_UNITS and not re.fullmatch(r"\d+(?:\.\d+)?", t) for t in tokens):
        return None
    total = 0.0      # sum of completed 万/亿 groups
    section = 0.0    # value below the current 万
    digit: float | None = None
    last_unit = 1
    zero = False  # a 零 was seen since the last unit: the next digit is a plain digit (一百零五)
    for tok in tokens:
        if tok in ("零", "〇") and section + total > 0:
            zero = True
            continue
        if tok in _ZH_UNITS:
            unit = _ZH_UNITS[tok]
            if unit >= 10_000:
                total = (total + section + (digit or 0)) * unit if unit > 10_000 else total + (section + (digit or 0)) * unit
                section, digit = 0.0, None
            else:
                section += (1 if digit is None else digit) * unit
                digit = None
            last_unit = unit
        else:
            if digit is not None:  # two numbers in a row ("三五"): not a numeral we read
                return None
            digit = float(tok) if tok[0].isdigit() else float(_ZH_DIGITS[tok])
    if digit is not None:
        prev = tokens[-2] if len(tokens) >= 2 else ""
        if prev in _ZH_UNITS and last_unit >= 100 and not zero:
            section += digit * (last_unit // 10 if last_unit < 10_000 else 1000)  # 一万五, 三千五, 1万5
        else:
            section += digit
    value = total + section
    return int(value) if value == int(value) else value


def parse_number(token: str) -> int | None:
    """An int from digits, a Chinese numeral or an English number word; None otherwise."""
    token = (token or "").strip().lower()
    if token.isdigit():
        return int(token)
    if token in _EN_NUMBERS:
        return _EN_NUMBERS[token]
    value = zh_number(token)
    return int(value) if value is not None and value == int(value) else None


_SCALES = {"k": 1000, "千": 1000, "thousand": 1000, "grand": 1000, "万": 10_000, "w": 10_000, "m": 1_000_000,
           "million": 1_000_000}
_AMOUNT_RE = re.compile(r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*(k|thousand|grand|million|m|w)?\b",
                        re.IGNORECASE)


def parse_amount(text: str) -> float | None:
    """An amount: "1,700", "15k", "3.5K", "2 thousand", "1.5万", "1万5", "两千", "八千"; None otherwise."""
    s = normalize_text(text).replace(" ", "") if re.search(r"[\u4e00-\u9fff]", text or "") else normalize_text(text)
    if not s:
        return None
    value = zh_number(s.replace(",", ""))
    if value is not None:
        return float(value)
    m = _AMOUNT_RE.fullmatch(s)
    if not m:
        return None
    amount = float(m.group(1).replace(",", ""))
    return amount * _SCALES[m.group(2).lower()] if m.group(2) else amount
