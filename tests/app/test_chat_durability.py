"""Chat durability (issue "Hardening"): no empty thread is stored until its first message, and after a
restart a user message that never got a reply offers Retry.

Before: every visit to Chat inserted an empty thread; a message that survived ``kill -9`` came back after
the restart with no reply and no way to get one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from sqlalchemy import func, select
from streamlit.testing.v1 import AppTest

from navigo_core.store import Store, threads

pytestmark = pytest.mark.usefixtures("no_internet")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    monkeypatch.setenv("DATABASE_URL", url)
    for var in ("LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    st.cache_resource.clear()
    yield url
    st.cache_resource.clear()


def thread_count(url: str) -> int:
    with Store.from_url(url).engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(threads)).scalar_one())


def chat(**query: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / "chat.py"), default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def test_visits_store_no_empty_thread(db: str) -> None:
    for _ in range(3):
        at = chat()
        assert not at.exception, at.exception
    at.button(key="chat_new").click().run()
    assert thread_count(db) == 0
    at.chat_input(key="chat_input").set_value("你好").run()
    assert not at.exception, at.exception
    store = Store.from_url(db)
    assert thread_count(db) == 1
    [only] = store.threads.list(at.session_state["chat.owner"])
    assert [m["role"] for m in store.threads.messages(only["id"])] == ["user", "assistant"]


def test_a_message_left_without_reply_by_a_restart_offers_retry(db: str) -> None:
    store = Store.from_url(db)
    tid = store.threads.new_id()
    store.threads.add_message(tid, "user", "你好", owner="alice")  # saved, then the app was killed
    at = chat(thread=tid)  # the demo mode's first user: alice
    assert not at.exception, at.exception
    assert any("has no reply" in w.value for w in at.warning), [w.value for w in at.warning]
    assert "chat_retry" in [b.key for b in at.button]
    at.button(key="chat_retry").click().run()
    assert not at.exception, at.exception
    roles = [m["role"] for m in Store.from_url(db).threads.messages(tid)]
    assert roles == ["user", "assistant"]  # answered once, the message not saved twice
    assert not any("has no reply" in w.value for w in at.warning)


def test_another_owners_thread_in_the_url_is_not_written_to(db: str) -> None:
    store = Store.from_url(db)
    tid = store.threads.new_id()
    store.threads.add_message(tid, "user", "private", owner="bob")
    at = chat(thread=tid)  # signed in as alice (the demo mode's first user)
    at.chat_input(key="chat_input").set_value("hello").run()
    assert not at.exception, at.exception
    assert [m["content"] for m in Store.from_url(db).threads.messages(tid)] == ["private"]
    assert at.session_state["chat.thread"] != tid


def shown(at: AppTest) -> list[str]:
    return [*(i.value for i in at.info), *(w.value for w in at.warning), *(e.value for e in at.error),
            *(m.value for m in at.markdown)]


def test_a_foreign_thread_id_answers_exactly_like_a_missing_one(db: str) -> None:
    store = Store.from_url(db)
    tid = store.threads.new_id()
    store.threads.add_message(tid, "user", "bob's secret plans", owner="bob")
    foreign = chat(thread=tid)
    missing = chat(thread=store.threads.new_id())
    for at in (foreign, missing):
        assert not at.exception, at.exception
        assert [i.value for i in at.info if "not found" in i.value] == [
            "That conversation was not found. A new one is started."]
    assert not any("secret" in text for text in shown(foreign))
    assert shown(foreign) == shown(missing)  # no hint that the thread exists
    assert foreign.query_params["thread"] != tid
    # bob, the owner, opens it
    at = AppTest.from_file(str(ROOT / "app_pages" / "chat.py"), default_timeout=60)
    at.session_state["auth.demo_user"] = "bob"
    at.query_params["thread"] = tid
    at.run()
    assert not at.exception, at.exception
    assert any("secret" in text for text in shown(at)) or any(
        "secret" in m.markdown[0].value for m in at.chat_message if m.markdown)
