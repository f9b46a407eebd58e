"""Router lab logic: parsing uploads (with specific errors) and explaining messages."""

from __future__ import annotations

import pytest

from navigo_core.config import get_settings
from navigo_core.errors import InputError
from navigo_core.intent import make_router
from navigo_core.lab import batch_rows, explain_message, parse_messages
from navigo_core.scenes import make_gate_context
from navigo_core.store import Store


def test_csv_with_text_and_intent_columns() -> None:
    data = "Text,intent\n帮我订机票,flight_search\nhi,greeting\n,\n".encode()
    assert parse_messages("m.csv", data) == [
        {"text": "帮我订机票", "intent": "flight_search"}, {"text": "hi", "intent": "greeting"}]


def test_csv_without_text_column_uses_the_first() -> None:
    assert parse_messages("m.csv", b"message\nhello\n") == [{"text": "hello", "intent": ""}]


def test_jsonl_and_its_errors() -> None:
    assert parse_messages("m.jsonl", b'{"text": "hi"}\n\n{"text": "yo", "intent": "greeting"}\n')[1]["intent"] == "greeting"
    with pytest.raises(InputError) as e:
        parse_messages("m.jsonl", b'{"text": "hi"}\n{oops\n')
    assert "Line 2 of “m.jsonl” is not valid JSON" in e.value.message("en")
    with pytest.raises(InputError) as e:
        parse_messages("m.jsonl", b'{"intent": "greeting"}\n')
    assert "has no text" in e.value.message("en")
    assert parse_messages("m.csv", "text\nhi\n".encode("utf-16"))[0]["text"] == "hi"  # a BOM tells the encoding
    with pytest.raises(InputError) as e:
        parse_messages("m.csv", b"text\n\xff\xfe\xff hi\n")  # neither UTF-8 nor GB18030
    assert "is not text in UTF-8, UTF-16 or GB18030/GBK" in e.value.message("en")
    with pytest.raises(InputError) as e:
        parse_messages("m.csv", b"text\n")
    assert "holds no messages" in e.value.message("en")


def test_explain_runs_every_layer_and_records_one_event(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = Store.from_url(f"sqlite:///{tmp_path / 'lab.db'}")
    settings = get_settings(llm_api_key="")
    router = make_router(settings, store=store, offline=True)
    ctx = make_gate_context(settings, router=router, llm=None)
    info = explain_message(router, ctx, "帮我订一张明天去北京的机票")
    assert [t.layer for t in info["layers"]] == ["L1", "L2", "L3"]
    assert info["intent"] == "flight_search" and info["source"] == "rule"
    assert info["scene"] == "booking"
    assert store.events.count() == 1
    rows = batch_rows(router, ctx, [{"text": "hi", "intent": "greeting"}, {"text": "你好", "intent": "flight_search"}])
    assert [r["correct"] for r in rows] == [True, False]
    assert rows[0]["scene"] == "greeting" and "L2 score" in rows[0]
    assert store.events.count() == 3
