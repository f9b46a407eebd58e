"""Chinese numerals and money: our rules vs cn2an vs jionlp.

Run: ``PYTHONPATH=/tmp/libeval .venv/bin/python benchmarks/libs/bench_numbers.py [--fails]``

A. Numeral tokens ("一万五", "1万5", "2万5千") → a number:
   ours ``parsing.parse_number`` (digits / ``zh_number``) and, when present, the newer
   ``navigo_core.understand.parse_number``, ``cn2an.cn2an(tok, mode)``, ``jio.parse_money(tok)``.
B. Budget sentences ("预算一万二", "$1,700", "3k EUR") → amount and ISO currency:
   ours ``parsing.parse_budget`` (bare numerals fall back to ``zh_number``; also ``understand.parse_budget``), ``jio.ner.extract_money``,
   ``jio.parse_money`` on the whole text, and ``cn2an.transform`` then ours.
The currency is scored only where the text states one.
"""

from __future__ import annotations

import argparse
import sys

from _harness import block_network, call, failures_section, old_rules, optional, pct, table, timed_calls

block_network()

parsing = old_rules()  # the rules before navigo_core.understand (git history)

cn2an = optional("cn2an")
jio = optional("jionlp")

# (token, value)
TOKENS: list[tuple[str, float]] = [
    ("一万五", 15000), ("1.5万", 15000), ("1万5", 15000), ("2万5千", 25000), ("三千五", 3500), ("两千", 2000),
    ("十二", 12), ("二十", 20), ("一百零五", 105), ("一万二", 12000), ("三千", 3000), ("两万", 20000),
    ("一千二百", 1200), ("一千二", 1200), ("十万", 100000), ("一万零五百", 10500), ("二十万", 200000),
    ("3千", 3000), ("1.2万", 12000), ("两万五", 25000), ("五千五百", 5500), ("九百", 900), ("一百五", 150),
    ("三十五", 35), ("十", 10), ("一", 1), ("两", 2), ("四万八", 48000), ("一千零一", 1001), ("五万", 50000),
    ("八百八十八", 888), ("1万", 10000), ("2.5千", 2500), ("十五万", 150000), ("二〇二七", 2027), ("5000", 5000),
    ("15k", 15000), ("壹万", 10000),
]

# (text, amount, ISO currency or None when the text states none)
BUDGETS: list[tuple[str, float, str | None]] = [
    ("预算一万五", 15000, None), ("预算1.5万", 15000, None), ("预算1万5", 15000, None), ("预算2万5千", 25000, None),
    ("人均三千", 3000, None), ("预算一万二", 12000, None), ("八千块", 8000, "CNY"), ("5000元", 5000, "CNY"),
    ("预算6000元", 6000, "CNY"), ("预算两千元", 2000, "CNY"), ("人均两千五", 2500, None),
    ("预算三千五百元", 3500, "CNY"), ("每人预算5000", 5000, None), ("花费控制在一万以内", 10000, None),
    ("预算15k", 15000, None), ("15k budget", 15000, None), ("$1,700", 1700, "USD"),
    ("budget of $1,700", 1700, "USD"), ("3k EUR", 3000, "EUR"), ("€800", 800, "EUR"), ("£1,200", 1200, "GBP"),
    ("budget 9000 CNY", 9000, "CNY"), ("2000美元", 2000, "USD"), ("预算3000美金", 3000, "USD"),
    ("5万日元", 50000, "JPY"), ("10000 yen", 10000, "JPY"), ("预算五千港币", 5000, "HKD"),
    ("budget around 2500 dollars", 2500, "USD"), ("1.2万元", 12000, "CNY"),
    ("两个大人，预算两万元，玩五天", 20000, "CNY"), ("我们预算大概一万块钱", 10000, "CNY"), ("预算：8000", 8000, None),
    ("4500 RMB", 4500, "CNY"), ("我想去日本玩一周，预算一万五千元", 15000, "CNY"), ("spend up to 3000 euros", 3000, "EUR"),
    ("about 1,500 USD per person", 1500, "USD"), ("预算1万块", 10000, "CNY"), ("预算5千", 5000, None),
    ("下周去杭州，预算三千五", 3500, None), ("一家三口去三亚，预算两万五", 25000, None),
    ("2 adults and 2 children under 10, budget $3,000", 3000, "USD"),
]


def _num(v: object) -> float | None:
    try:
        return float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


# --- A: token → number ----------------------------------------------------------

def tok_ours(t: str) -> float | None:
    return _num(parsing.parse_number(t))


UND = optional("navigo_core.understand")  # the newer rule package (commit d865cc2), when present


def tok_und(t: str) -> float | None:
    return _num(UND.parse_number(t))


def tok_cn2an(mode: str):
    return lambda t: _num(call(cn2an.cn2an, t, mode))


def tok_jio(t: str) -> float | None:
    r = call(jio.parse_money, t)
    return _num(r["num"]) if isinstance(r, dict) else None


# --- B: sentence → (amount, currency) ---------------------------------------------

def bud_ours(text: str) -> tuple[float | None, str | None]:
    r = parsing.parse_budget(text)
    if r:
        return r.amount, r.currency
    return _num(parsing.zh_number(parsing.normalize_text(text))), None


def bud_und(text: str) -> tuple[float | None, str | None]:
    r = UND.parse_budget(text)
    if r:
        return r.amount, r.currency
    return _num(UND.zh_number(UND.normalize_text(text))), None


def _jio_case(case: str | None) -> str | None:
    return parsing.currency_code(case) if case else None


def bud_jio_extract(text: str) -> tuple[float | None, str | None]:
    ents = call(jio.ner.extract_money, text)
    if not isinstance(ents, list) or not ents:
        return None, None
    d = ents[0]["detail"]
    return _num(d.get("num")), _jio_case(d.get("case"))


def bud_jio_parse(text: str) -> tuple[float | None, str | None]:
    r = call(jio.parse_money, text)
    if not isinstance(r, dict):
        return None, None
    return _num(r.get("num")), _jio_case(r.get("case"))


def bud_cn2an_ours(text: str) -> tuple[float | None, str | None]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        converted = call(cn2an.transform, text, "cn2an")
    return bud_ours(converted if isinstance(converted, str) and not converted.startswith("ERR") else text)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fails", action="store_true", help="list every miss")
    args = ap.parse_args()

    tok_systems = [("old rules (8ecfb3b): parsing.parse_number / zh_number", tok_ours)]
    if UND:
        tok_systems.append(("ours (new): understand.parse_number", tok_und))
    if cn2an:
        tok_systems += [(f"cn2an.cn2an(t, '{m}')", tok_cn2an(m)) for m in ("smart", "normal")]
    if jio:
        tok_systems.append(("jionlp.parse_money(t)", tok_jio))
    bud_systems = [("old rules (8ecfb3b): parsing.parse_budget", bud_ours)]
    if UND:
        bud_systems.append(("ours (new): understand.parse_budget", bud_und))
    if jio:
        bud_systems += [("jionlp.ner.extract_money", bud_jio_extract), ("jionlp.parse_money(whole text)", bud_jio_parse)]
    if cn2an:
        bud_systems.append(("cn2an.transform → ours", bud_cn2an_ours))

    print(f"## A. Numeral tokens ({len(TOKENS)} cases)\n")
    rows, fails = [], {}
    for name, fn in tok_systems:
        miss = [f"{t} → {fn(t)} (want {v:g})" for t, v in TOKENS if fn(t) != v]
        fails[name] = miss
        timing = timed_calls(fn, [t for t, _ in TOKENS])
        rows.append([name, pct(len(TOKENS) - len(miss), len(TOKENS)), timing["p50"], timing["p95"]])
    print(table(["system", "correct", "µs/call p50", "µs/call p95"], rows))

    print(f"\n## B. Budget sentences ({len(BUDGETS)} cases; currency scored on {sum(1 for b in BUDGETS if b[2])})\n")
    rows2 = []
    for name, fn in bud_systems:
        miss, amount_ok, cur_ok, both_ok = [], 0, 0, 0
        for text, amount, cur in BUDGETS:
            got_a, got_c = fn(text)
            a_ok = got_a is not None and abs(got_a - amount) < 0.01
            c_ok = cur is None or got_c == cur
            amount_ok += a_ok
            cur_ok += bool(cur) and got_c == cur
            both_ok += a_ok and c_ok
            if not (a_ok and c_ok):
                miss.append(f"{text} → {got_a} {got_c} (want {amount:g} {cur})")
        fails[name] = miss
        timing = timed_calls(fn, [b[0] for b in BUDGETS])
        rows2.append([name, pct(amount_ok, len(BUDGETS)), pct(cur_ok, sum(1 for b in BUDGETS if b[2])),
                      pct(both_ok, len(BUDGETS)), timing["p50"], timing["p95"]])
    print(table(["system", "amount", "currency", "amount+currency", "µs/call p50", "µs/call p95"], rows2))
    for name in ("cn2an", "jionlp"):
        if not {"cn2an": cn2an, "jionlp": jio}[name]:
            print(f"\n{name}: not installed (skipped)")
    if args.fails:
        for name, miss in fails.items():
            print("\n" + failures_section(name, miss))
    from _harness import NET_ATTEMPTS
    print(f"\nnetwork attempts: {len(NET_ATTEMPTS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
