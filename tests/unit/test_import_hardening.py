"""Robust import and safe export of CSV files (issue "Hardening").

Before: ``import_csv`` raised ``csv.Error`` on 41 of 400 random CSVs (the Router lab on 25), read a GBK file
as "����", crashed on ``nan`` / ``inf`` / ``1e309`` amounts (a ValidationError or an OverflowError in the
policy check), a 200 KB field and CR-only line endings; the claim export wrote ``=HYPERLINK(…)``,
``=cmd|…``, ``+``, ``-`` and ``@`` cells as they were (formula injection).
"""

from __future__ import annotations

import csv
import io
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from navigo_core.business.expenses import MAX_AMOUNT, ExpenseImportError, ExpenseItem, check_items, import_csv, to_csv
from navigo_core.business.policy import load_policy
from navigo_core.errors import InputError
from navigo_core.lab import parse_messages
from navigo_core.tabular import decode, neutralise, sniff_delimiter

pytestmark = pytest.mark.usefixtures("no_internet")

HEADER = "date,city,category,amount,currency,note,receipt"
ROWS = ["2026-05-01,杭州,hotel,650,CNY,第一晚,yes", "2026-05-02,上海,出租车,85,CNY,机场,no"]


def _items(data: bytes | str) -> list[tuple[str, str, float]]:
    return [(i.city, i.category, i.amount) for i in import_csv(data)]


EXPECTED = [("杭州", "hotel", 650.0), ("上海", "transport", 85.0)]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "gbk", "gb18030", "utf-16"])
def test_encodings_are_detected(encoding: str) -> None:
    data = "\n".join([HEADER, *ROWS]).encode(encoding)
    assert _items(data) == EXPECTED  # never "����"


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_line_endings_and_delimiters_are_detected(newline: str, delimiter: str) -> None:
    text = newline.join(line.replace(",", delimiter) for line in [HEADER, *ROWS]) + newline
    assert _items(text) == EXPECTED
    assert sniff_delimiter(text, ["date", "city"]) == delimiter


def test_chinese_headers_and_a_semicolon_with_decimal_commas_stay_apart() -> None:
    text = "日期;城市;类别;金额\n2026-05-01;杭州;酒店;\"1,700\"\n"
    assert _items(text.encode("gbk")) == [("杭州", "hotel", 1700.0)]


@pytest.mark.parametrize("amount", ["nan", "NaN", "inf", "-inf", "Infinity", "1e309", "1E5", "¥1e309", "1 e 3"])
def test_nan_inf_and_exponents_are_rejected_per_row(amount: str) -> None:
    with pytest.raises(ExpenseImportError) as exc:
        import_csv(f"{HEADER}\n{ROWS[0]}\n2026-05-03,杭州,meal,{amount},CNY,,yes\n")
    assert [(e["row"], e["column"], e["code"]) for e in exc.value.errors] == [
        (3, "amount", "expense.error.amount_not_number")]
    assert "row 3" in exc.value.message("en") and "1e309" in exc.value.message("en")


@pytest.mark.parametrize("amount", ["99999999999999999999999", "100000001", "1,000,000,000,000"])
def test_huge_amounts_are_rejected_per_row(amount: str) -> None:
    with pytest.raises(ExpenseImportError) as exc:
        import_csv(f"{HEADER}\n2026-05-03,杭州,meal,\"{amount}\",CNY,,yes\n")
    assert [(e["row"], e["code"]) for e in exc.value.errors] == [(2, "expense.error.amount_too_large")]


def test_an_overlong_field_is_rejected_with_its_row_and_not_echoed() -> None:
    big = "x" * 200_000
    with pytest.raises(ExpenseImportError) as exc:
        import_csv(f"{HEADER}\n{ROWS[0]}\n2026-05-03,{big},meal,10,CNY,,yes\n2026-05-04,杭州,meal,10,CNY,{big},no\n")
    errors = [(e["row"], e["column"]) for e in exc.value.errors]
    assert errors == [(3, "-"), (4, "-")] or errors == [(3, "city"), (4, "note")]
    message = exc.value.message("en")
    assert "row 3" in message and "row 4" in message and len(message) < 1000


def test_a_field_over_the_csv_limit_and_an_unclosed_quote_are_row_errors() -> None:
    big = "y" * 150_000  # beyond the csv module's own field limit: it raised csv.Error before
    with pytest.raises(ExpenseImportError) as exc:
        import_csv(f"{HEADER}\n2026-05-03,杭州,meal,10,CNY,{big},no\n")
    assert [(e["row"], e["code"]) for e in exc.value.errors] == [(2, "upload.field_too_big")]
    # an unclosed quote runs to the end of the file, as in a spreadsheet: read, never a csv.Error
    [item] = import_csv(f'{HEADER}\n2026-05-03,杭州,meal,10,CNY,"never closed,no\n')
    assert item.note.startswith("never closed")


def test_the_model_refuses_what_the_import_refuses() -> None:
    for bad in (float("nan"), float("inf"), MAX_AMOUNT * 2, 0.0):
        with pytest.raises(ValueError):
            ExpenseItem(date=date(2026, 5, 1), city="杭州", category="hotel", amount=bad)


def test_an_imported_item_always_survives_the_policy_check() -> None:
    """The old crash: an ``inf`` amount got through and the check's formatting raised OverflowError."""
    items = import_csv(f"{HEADER}\n2026-05-01,杭州,hotel,99999999,CNY,,yes\n")
    [checked] = check_items(items, load_policy(), "")
    assert checked.excesses and checked.excesses[0].amount_over > 0


# --- the export --------------------------------------------------------------------------------

PAYLOADS = ['=HYPERLINK("http://127.0.0.1:9999/x","click")', "=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1:A2)",
            "\t=1+1", "\r=1+1"]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_the_claim_export_neutralises_formula_cells(payload: str) -> None:
    item = ExpenseItem(date=date(2026, 5, 1), city=payload, category="meal", amount=10, currency="CNY", note=payload)
    checked = check_items([item], load_policy(), "")
    rows = list(csv.reader(io.StringIO(to_csv(checked).decode("utf-8-sig"), newline="")))
    header, row = rows[0], rows[1]
    for column in ("city", "note"):
        cell = row[header.index(column)]
        assert cell == "'" + payload  # a spreadsheet shows it as text
    assert not any(c.startswith(("=", "+", "-", "@", "\t", "\r")) for c in row)


def test_neutralise_leaves_ordinary_cells_alone() -> None:
    assert [neutralise(c) for c in ("杭州", "650.00", "a=b", "", 5)] == ["杭州", "650.00", "a=b", "", 5]


# --- the Router lab upload ---------------------------------------------------------------------

@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "gbk", "utf-16"])
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_lab_upload_encodings_and_line_endings(encoding: str, newline: str) -> None:
    data = newline.join(["text,intent", "你好,greeting", "去杭州的路线,route_planning"]).encode(encoding)
    assert parse_messages("m.csv", data) == [{"text": "你好", "intent": "greeting"},
                                             {"text": "去杭州的路线", "intent": "route_planning"}]


def test_lab_upload_errors_name_the_row() -> None:
    with pytest.raises(InputError) as exc:
        parse_messages("m.csv", ("text\nhello\n" + "z" * 150_000 + "\n").encode())
    assert "Row 3 of “m.csv”" in exc.value.message("en")
    with pytest.raises(InputError) as exc:
        parse_messages("m.jsonl", b'{"text": "hi"}\n' + b"[" * 100_000 + b"\n")
    assert "Line 2" in exc.value.message("en")
    with pytest.raises(InputError):
        parse_messages("m.jsonl", b'{"text": {"nested": 1}}\n')


def test_lab_upload_rows_follow_the_one_upload_limit() -> None:
    """The Router lab cut files at its own 2,000 rows, a second limit beside the settings' upload rows;
    now every row up to the upload limit is read and a longer file is refused before it is parsed."""
    from navigo_core.limits import current

    rows = current().upload_rows
    assert len(parse_messages("m.csv", "text\n" + "hello\n" * 2500)) == 2500
    with pytest.raises(InputError) as exc:
        parse_messages("m.csv", "text\n" + "hello\n" * (rows + 1))
    assert exc.value.code == "limits.upload_too_many_rows"


def test_decode_refuses_what_is_no_text() -> None:
    with pytest.raises(InputError):
        decode(b"\xff\xfe\xff\xff\x80", "x.csv")
    assert decode(b"a\x00b") == "ab"


# --- fuzz ----------------------------------------------------------------------------------------

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
cells = st.one_of(
    st.sampled_from(["2026-05-01", "5月3日", "杭州", "Hangzhou", "hotel", "出租车", "meal", "650", "1,700", "¥3500",
                     "nan", "inf", "1e309", "-5", "0", "99999999999999999999", "CNY", "usd", "元", "yes", "no", "是",
                     "=1+1", "@x", '"', '""', "\r", "\n", "\r\n", ",", ";", "\t", "\x00", "\ufeff", "a" * 300]),
    st.text(max_size=12),
)
records = st.lists(st.lists(cells, min_size=0, max_size=9), max_size=8)


def _render(rows: list[list[str]], header: bool, newline: str, delimiter: str) -> str:
    lines = [delimiter.join(r) for r in rows]
    if header:
        lines.insert(0, delimiter.join(["date", "city", "category", "amount", "currency", "note", "receipt"]))
    return newline.join(lines)


@FUZZ
@given(rows=records, header=st.booleans(), newline=st.sampled_from(["\n", "\r\n", "\r"]),
       delimiter=st.sampled_from([",", ";", "\t", "|"]), encoding=st.sampled_from(["utf-8", "utf-8-sig", "gb18030", None]))
def test_fuzz_import_csv_returns_items_or_one_error(rows: list[list[str]], header: bool, newline: str, delimiter: str,
                                                     encoding: str | None) -> None:
    text = _render(rows, header, newline, delimiter)
    data: bytes | str = text if encoding is None else text.encode(encoding, errors="replace")
    try:
        items = import_csv(data)
    except ExpenseImportError as exc:
        assert exc.errors and all(isinstance(e["row"], int) and e["row"] >= 1 for e in exc.errors)
        assert exc.message("en") and exc.message("zh")
        return
    assert items and all(0 < i.amount <= MAX_AMOUNT for i in items)
    check_items(items, load_policy(), "")  # whatever was imported can be checked and exported
    to_csv(items)


@FUZZ
@given(data=st.binary(max_size=400))
def test_fuzz_import_csv_on_any_bytes(data: bytes) -> None:
    try:
        import_csv(data)
    except ExpenseImportError:
        pass


@FUZZ
@given(rows=records, newline=st.sampled_from(["\n", "\r\n", "\r"]), name=st.sampled_from(["m.csv", "m.jsonl"]),
       raw=st.binary(max_size=200), use_raw=st.booleans())
def test_fuzz_lab_upload_returns_messages_or_one_error(rows: list[list[str]], newline: str, name: str, raw: bytes,
                                                       use_raw: bool) -> None:
    data = raw if use_raw else _render(rows, False, newline, ",").encode()
    try:
        messages = parse_messages(name, data)
    except InputError as exc:
        assert exc.message("en")
        return
    assert messages and all(m["text"].strip() for m in messages)
