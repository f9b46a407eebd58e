"""Every LLM call is bounded: token caps, one deadline (first token, gap, total), the server's slots.

Against the fake OpenAI-compatible server, which can stream for ever (``forever=True``) or trickle
(``interval_s``). Deadlines are small (0.3–0.5 s); no test asserts a tight wall-clock figure, only
that the call ended with the bound's error well within 10× its deadline and that the fake's
stream was cut.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from navigo_core.config import Settings
from navigo_core.errors import LLMDeadline, LLMError, LLMHTTPError, LLMTimeout, LLMTokenLimit
from navigo_core.llm import LLMClient
from navigo_core.llm.bounds import describe_failure
from tests.fakes.openai import FakeOpenAI, Reply

pytestmark = pytest.mark.usefixtures("no_internet")

USER = [{"role": "user", "content": "Plan a trip from Paris to Lyon"}]


class Verdict(BaseModel):
    ok: bool


@pytest.fixture
def make_client(fake_llm_settings: Callable[..., Settings]) -> Iterator[Callable[..., LLMClient]]:
    made: list[LLMClient] = []

    def make(**overrides: Any) -> LLMClient:
        made.append(LLMClient(fake_llm_settings(**overrides)))
        return made[-1]

    yield make
    for client in made:
        client.close()


def wait_until(predicate: Callable[[], bool], seconds: float = 60.0) -> bool:
    """True once ``predicate`` holds; the cap is generous (a busy machine), it only ends a broken test."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


# --- token caps -------------------------------------------------------------------------

def test_each_call_kind_sends_its_token_cap(fake_openai: FakeOpenAI, make_client: Callable[..., LLMClient]) -> None:
    client = make_client(llm_max_tokens_text=111, llm_max_tokens_structured=222, llm_max_tokens_stream=333)
    client.complete(USER)
    fake_openai.enqueue_json({"ok": True})
    client.structured(USER, Verdict)
    fake_openai.enqueue_stream(["a", "b"])
    list(client.stream(USER))
    assert [b["max_tokens"] for b in fake_openai.chat_requests] == [111, 222, 333]
    client.complete(USER, max_tokens=7)  # a caller's own cap wins
    assert fake_openai.chat_requests[-1]["max_tokens"] == 7


@pytest.mark.parametrize("method", ["complete", "structured", "stream"])
def test_a_reply_cut_at_its_cap_is_not_used(fake_openai: FakeOpenAI, make_client: Callable[..., LLMClient],
                                            method: str) -> None:
    client = make_client()
    fake_openai.enqueue_reply(Reply(content='{"ok": true, "items": ["x", "x", "x"', finish_reason="length"))
    with pytest.raises(LLMTokenLimit) as exc:
        if method == "complete":
            client.complete(USER)
        elif method == "structured":
            client.structured(USER, Verdict)
        else:
            list(client.stream(USER))
    assert exc.value.params["max_tokens"] == 512
    assert len(fake_openai.chat_requests) == 1  # no repair turn on a truncated answer
    assert "512" in exc.value.message("en") and "512" in exc.value.message("zh")


def test_a_stream_that_never_stops_is_cut_at_the_cap(fake_openai: FakeOpenAI,
                                                     make_client: Callable[..., LLMClient]) -> None:
    client = make_client(llm_max_tokens_stream=50)
    fake_openai.enqueue_stream(["the same item, ", "again "], forever=True)  # a server that ignores max_tokens
    received: list[str] = []
    with pytest.raises(LLMTokenLimit):
        for delta in client.stream(USER):
            received.append(delta)
    assert 0 < len(received) <= 51 and len("".join(received)) <= 50 * 8 + 15  # ≤ cap pieces, ≤ 8 chars a token
    assert wait_until(lambda: bool(fake_openai.streams) and fake_openai.streams[0].cut)
    assert not fake_openai.streams[0].finished
    assert client.calls[-1]["outcome"] == "llm.token_limit" and client.calls[-1]["bound"] == "max_tokens"


# --- deadlines --------------------------------------------------------------------------

def test_a_trickling_endless_stream_ends_at_the_total_deadline(fake_openai: FakeOpenAI,
                                                              make_client: Callable[..., LLMClient]) -> None:
    client = make_client(llm_deadline_s=0.5, llm_max_tokens_stream=32768)
    fake_openai.enqueue_stream(["la "], forever=True, interval_s=0.02)  # each piece in time, never the end
    received: list[str] = []
    with pytest.raises(LLMDeadline) as exc:
        for delta in client.stream(USER):
            received.append(delta)
    # it did not run for ever: the total bound fired and the server saw the stream cut
    assert exc.value.params["bound"] == "total" and received
    assert wait_until(lambda: bool(fake_openai.streams) and fake_openai.streams[0].cut)
    assert "0.5" in exc.value.message("en") and isinstance(exc.value, LLMTimeout)


def test_the_first_piece_has_its_own_bound(fake_openai: FakeOpenAI, make_client: Callable[..., LLMClient]) -> None:
    client = make_client(llm_timeout_s=0.3, llm_deadline_s=30)
    fake_openai.enqueue_stream(["late"], interval_s=3.0)
    with pytest.raises(LLMDeadline) as exc:
        list(client.stream(USER))
    assert exc.value.params["bound"] == "first_token" and exc.value.params["seconds"] == 0.3


def test_the_gap_between_pieces_has_its_own_bound(fake_openai: FakeOpenAI,
                                                  make_client: Callable[..., LLMClient]) -> None:
    client = make_client(llm_timeout_s=5.0, llm_stream_gap_s=0.3, llm_deadline_s=30)
    fake_openai.enqueue_stream(["Take ", "the ", "TGV"], break_after=1, break_mode="hang")
    received: list[str] = []
    with pytest.raises(LLMDeadline) as exc:
        for delta in client.stream(USER):
            received.append(delta)
    assert received == ["Take "] and exc.value.params["bound"] == "gap"


@pytest.mark.parametrize("method", ["complete", "structured", "embed"])
def test_a_slow_plain_answer_ends_at_the_total_deadline(fake_openai: FakeOpenAI,
                                                        make_client: Callable[..., LLMClient], method: str) -> None:
    client = make_client(llm_timeout_s=5.0, llm_deadline_s=0.4)
    fake_openai.set_fault(latency_s=4.0)
    with pytest.raises(LLMDeadline) as exc:
        if method == "complete":
            client.complete(USER)
        elif method == "structured":
            client.structured(USER, Verdict)
        else:
            client.embed(["Paris"])
    assert exc.value.params["bound"] == "total"  # the answer would have come after 4 s: the deadline ended it


def test_the_repair_turn_shares_the_deadline(fake_openai: FakeOpenAI, make_client: Callable[..., LLMClient]) -> None:
    client = make_client(llm_timeout_s=5.0, llm_deadline_s=0.5)
    fake_openai.enqueue_json({"ok": "not a boolean"})
    fake_openai.enqueue_reply(Reply(content='{"ok": true}', interval_s=3.0))  # the repair answer is slow
    with pytest.raises(LLMDeadline):
        client.structured(USER, Verdict)
    assert len(fake_openai.chat_requests) == 2


def test_retries_stay_inside_the_deadline(fake_openai: FakeOpenAI, make_client: Callable[..., LLMClient]) -> None:
    client = make_client(llm_max_retries=5, llm_deadline_s=0.6)
    fake_openai.retry_after_s = 0.25
    fake_openai.set_fault(status=503)
    with pytest.raises(LLMError) as exc:
        client.complete(USER)
    assert isinstance(exc.value, (LLMHTTPError, LLMDeadline))
    assert 1 <= len(fake_openai.requests) <= 4  # six without the deadline (five retries)


def test_a_timeout_is_not_retried(fake_openai: FakeOpenAI, make_client: Callable[..., LLMClient]) -> None:
    client = make_client(llm_max_retries=2, llm_timeout_s=0.3)
    fake_openai.set_fault(hang=True)
    with pytest.raises(LLMTimeout):
        client.complete(USER)
    assert len(fake_openai.requests) == 1


# --- the server's parallel slots ------------------------------------------------------------

def _concurrently(calls: list[Callable[[], Any]]) -> list[Any]:
    out: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            out[i] = calls[i]()
        except Exception as exc:  # noqa: BLE001 - returned for the assertions
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=30)
    return out


def test_no_more_calls_at_once_than_the_server_has_slots(fake_openai: FakeOpenAI,
                                                         make_client: Callable[..., LLMClient]) -> None:
    client = make_client(llm_parallel=1, llm_deadline_s=20)
    fake_openai.compute_s = 0.1
    fake_openai.default_reply = "ok"
    results = _concurrently([lambda: client.complete(USER) for _ in range(4)])
    assert results == ["ok"] * 4 and fake_openai.max_in_flight == 1
    two = make_client(llm_parallel=2, llm_deadline_s=20)  # another client of the same server, 2 slots
    fake_openai.reset()
    fake_openai.compute_s = 0.1
    assert _concurrently([lambda: two.complete(USER) for _ in range(4)]) == ["ok"] * 4
    assert fake_openai.max_in_flight <= 2


def test_waiting_for_a_slot_counts_against_the_deadline(fake_openai: FakeOpenAI,
                                                        make_client: Callable[..., LLMClient]) -> None:
    slow = make_client(llm_parallel=1, llm_deadline_s=20, llm_timeout_s=5)
    quick = make_client(llm_parallel=1, llm_deadline_s=0.3)  # same server, same single slot
    fake_openai.compute_s = 1.5
    busy = threading.Thread(target=lambda: slow.complete(USER))
    busy.start()
    assert wait_until(lambda: fake_openai.max_in_flight == 1)
    with pytest.raises(LLMDeadline) as exc:
        quick.complete(USER)
    assert exc.value.params["bound"] == "total"
    busy.join(timeout=10)
    assert len(fake_openai.chat_requests) == 1  # the waiting call never reached the server


def test_a_stream_holds_its_slot_until_it_ends(fake_openai: FakeOpenAI, make_client: Callable[..., LLMClient]) -> None:
    client = make_client(llm_parallel=1, llm_deadline_s=10)
    fake_openai.enqueue_stream(["a ", "b ", "c "], interval_s=0.1)
    fake_openai.default_reply = "plain"
    results = _concurrently([lambda: "".join(client.stream(USER)), lambda: (time.sleep(0.05), client.complete(USER))[1]])
    assert results == ["a b c ", "plain"] and fake_openai.max_in_flight == 1


# --- records and descriptions ---------------------------------------------------------------

def test_calls_are_recorded_and_failures_name_their_bound(fake_openai: FakeOpenAI,
                                                          make_client: Callable[..., LLMClient]) -> None:
    client = make_client(llm_timeout_s=0.3)
    client.complete(USER)
    rec = client.calls[-1]
    assert rec["kind"] == "complete" and rec["outcome"] == "ok" and rec["completion_tokens"] > 0 and rec["seconds"] >= 0
    fake_openai.enqueue_stream(["late"], interval_s=2.0)
    with pytest.raises(LLMDeadline) as exc:
        list(client.stream(USER))
    assert client.calls[-1]["bound"] == "first_token"
    assert describe_failure(exc.value) == "deadline: first_token bound of 0.3 s"
    assert describe_failure(LLMTokenLimit(provider="x", max_tokens=9)) == "token cap: 9 tokens"


# --- every schema caps its lists ------------------------------------------------------------

def _arrays(schema: dict[str, Any], defs: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if "$ref" in schema:
        yield from _arrays(defs[schema["$ref"].split("/")[-1]], defs)
        return
    if schema.get("type") == "array":
        yield schema
        yield from _arrays(schema.get("items") or {}, defs)
    for sub in (schema.get("properties") or {}).values():
        yield from _arrays(sub, defs)
    for sub in schema.get("anyOf") or []:
        yield from _arrays(sub, defs)


def test_every_structured_schema_caps_its_lists() -> None:
    from navigo_core.clarify.models import Summary
    from navigo_core.intent.llm_layer import MAX_INTENTS, LLMIntentReply
    from navigo_core.planner.agents.destination import RationalesOut
    from navigo_core.planner.agents.preference import PreferencesOut
    from navigo_core.planner.agents.synthesizer import SummaryOut
    from navigo_core.security.llm_scan import InjectionVerdict
    from navigo_core.understand.llm import LLMRequestFields

    schemas = (LLMIntentReply, Summary, RationalesOut, PreferencesOut, SummaryOut, InjectionVerdict, LLMRequestFields)
    for model in schemas:
        schema = model.model_json_schema()
        for array in _arrays(schema, schema.get("$defs", {})):
            assert isinstance(array.get("maxItems"), int), (model.__name__, array)
    item = {"intent": "route_planning", "target_agent": "x", "confidence": "high", "reason": "r"}
    reply = LLMIntentReply.model_validate({"intents": [item] * 9, "primary_intent": "route_planning",
                                           "multi_intent": False, "overall_reason": ""})
    assert len(reply.intents) == MAX_INTENTS  # a model repeating one item is cut, not trusted
