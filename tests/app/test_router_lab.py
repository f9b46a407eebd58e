"""AppTest for the Router lab page (offline: L3 answers unknown)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def lab_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'lab.db'}")
    for var in ("LLM_API_KEY", "OPENAI_API_KEY", "LLM_EMBEDDING_MODEL"):
        monkeypatch.delenv(var, raising=False)
    st.cache_resource.clear()
    yield tmp_path
    st.cache_resource.clear()


def lab() -> AppTest:
    return AppTest.from_file(str(ROOT / "app_pages" / "router_lab.py"), default_timeout=60).run()


def layers_table(at: AppTest):  # type: ignore[no-untyped-def]
    return next(df.value for df in at.dataframe if "Layer" in df.value.columns)


def test_one_message_shows_every_layer_and_the_scene(lab_env: Path) -> None:
    at = lab()
    assert any("No routing events" in c.value for c in at.caption)
    at.text_input(key="lab_message").input("帮我订一张明天去北京的机票")
    at.button(key="lab_route").click().run()
    assert not at.exception
    table = layers_table(at)
    assert list(table["Layer"]) == ["L1", "L2", "L3"]
    assert table["Hit"].iloc[0] and table["Intent"].iloc[0] == "flight_search"
    assert (table["Latency (ms)"] >= 0).all()
    decision = " ".join(m.value for m in at.markdown)
    assert "flight_search" in decision and "scene" in decision
    assert "Answered by the keyword rules (L1)" in decision  # the layer named in words, not its code
    # the event was stored and the aggregate charts appear
    assert any("Messages routed: 1" in c.value for c in at.caption)  # not "1 messages routed"


def test_out_of_scope_goes_to_l3_offline(lab_env: Path) -> None:
    at = lab()
    at.text_input(key="lab_message").input("who won the chess tournament yesterday")
    at.button(key="lab_route").click().run()
    assert not at.exception
    decision = " ".join(m.value for m in at.markdown)
    assert "unknown" in decision


def test_the_answering_layer_is_named_in_chinese(lab_env: Path) -> None:
    at = AppTest.from_file(str(ROOT / "app_pages" / "router_lab.py"), default_timeout=60)
    at.session_state["lang"] = "zh"
    at.run()
    at.text_input(key="lab_message").input("帮我订一张明天去北京的机票")
    at.button(key="lab_route").click().run()
    assert not at.exception
    decision = " ".join(m.value for m in at.markdown)
    assert "由关键词规则（L1）给出" in decision
