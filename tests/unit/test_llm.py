"""The LLM layer, every path through real HTTP against the fake OpenAI-compatible server.

Timeouts are short (0.3 s) and retries off unless a test is about them, so the
whole file runs in a few seconds.
"""

from __future__ import annotations

import json
import math
import socket
from collections.abc import Callable, Iterator
from typing import Any, Literal

import httpx
import pytest
from pydantic import BaseModel, Field

from navigo_core.config import Settings
from navigo_core.errors import (
    LLMError,
    LLMHTTPError,
    LLMInvalidOutput,
    LLMNotConfigured,
    LLMRefusal,
    LLMTimeout,
)
from navigo_core.llm import LLMClient, choose_strategy, detect_provider, make_llm_client
from navigo_core.llm.structured import extract_json
from tests.fakes.openai import FAKE_API_KEY, FakeOpenAI, embed_text

pytestmark = pytest.mark.usefixtures("no_internet")

SettingsFactory = Callable[..., Settings]
USER = [{"role": "user", "content": "Plan a trip from Paris to Lyon"}]


class Stop(BaseModel):
    name: str
    nights: int = Field(ge=0)


class Trip(BaseModel):
    intent: Literal["route", "chat"]
    stops: list[Stop]


GOOD_TRIP = {"intent": "route", "stops": [{"name": "Paris", "nights": 1}, {"name": "Lyon", "nights": 2}]}


@pytest.fixture
def make_client(fake_llm_settings: SettingsFactory) -> Iterator[Callable[..., LLMClient]]:
    """Factory: an LLMClient on the fake with these settings overrides (closed after the test)."""
    made: list[LLMClient] = []

    def make(**overrides: Any) -> LLMClient:
        made.append(LLMClient(fake_llm_settings(**overrides)))
        return made[-1]

    yield make
    for client in made:
        client.close()


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# --- configuration -------------------------------------------------------------

@pytest.mark.parametrize(("url", "provider"), [
    ("", "openai"),
    ("https://api.openai.com/v1", "openai"),
    ("https://api.deepseek.com", "deepseek"),
    ("https://api.deepseek.com/v1", "deepseek"),
    ("https://dashscope.aliyuncs.com/compatible-mode/v1", "dashscope"),
    ("https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "dashscope"),
    ("https://ark.cn-beijing.volces.com/api/v3", "ark"),
    ("http://localhost:11434/v1", "ollama"),
    ("http://vllm.internal:8000/v1", "vllm"),
    ("http://127.0.0.1:8000/v1", "other"),
])
def test_provider_is_guessed_from_the_base_url(url: str, provider: str) -> None:
    assert detect_provider(url) == provider


def test_auto_strategy_rule() -> None:
    assert choose_strategy("deepseek") == "json_object"
    assert choose_strategy("dashscope") == "json_object"
    for provider in ("openai", "ark", "ollama", "vllm", "other"):
        assert choose_strategy(provider) == "json_schema"
    assert choose_strategy("deepseek", "json_schema") == "json_schema"  # an explicit setting wins
    with pytest.raises(ValueError):
        choose_strategy("openai", "xml")


def test_no_key_means_no_client_and_not_configured(fake_llm_settings: SettingsFactory) -> None:
    settings = fake_llm_settings(llm_api_key="")
    assert make_llm_client(settings) is None
    with pytest.raises(LLMNotConfigured) as exc:
        LLMClient(settings)
    assert "LLM_API_KEY" in str(exc.value) and "LLM_API_KEY" in exc.value.message("zh")


def test_openai_api_key_is_a_fallback(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLM_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)
    fake_openai.api_key = FAKE_API_KEY
    client = make_llm_client(Settings(llm_base_url=fake_openai.url + "/v1", llm_max_retries=0))
    assert client is not None
    with client:
        fake_openai.enqueue("hi")
        assert client.complete(USER) == "hi"


# --- complete -------------------------------------------------------------------

def test_complete_sends_one_request_and_returns_the_text(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    fake_openai.api_key = FAKE_API_KEY  # the fake now rejects a missing or wrong key
    fake_openai.enqueue("Take the TGV.")
    assert fake_llm.complete(USER, temperature=0.2, max_tokens=50) == "Take the TGV."
    (req,) = fake_openai.requests
    assert req.method == "POST" and req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == f"Bearer {FAKE_API_KEY}"
    body = req.json()
    assert body["model"] == "fake-model" and body["messages"] == USER
    assert body["temperature"] == 0.2 and body["max_tokens"] == 50  # compatible servers: max_tokens
    assert "response_format" not in body and not body.get("stream")


def test_openai_gets_max_completion_tokens(make_client: Callable[..., LLMClient], fake_openai: FakeOpenAI) -> None:
    client = make_client()
    client.provider = "openai"  # the fake stands in for api.openai.com
    client.complete(USER, max_tokens=20)
    body = fake_openai.chat_requests[-1]
    assert body["max_completion_tokens"] == 20 and "max_tokens" not in body


def test_default_reply_when_nothing_is_scripted(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    assert "Paris to Lyon" in fake_llm.complete(USER)  # the fake echoes
    fake_openai.responder = lambda body: f"{len(body['messages'])} messages"
    assert fake_llm.complete(USER) == "1 messages"


# --- structured -------------------------------------------------------------------

def test_json_schema_strategy_sends_the_strict_schema(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    fake_openai.enqueue_json(GOOD_TRIP)
    assert fake_llm.structured(USER, Trip, strategy="json_schema") == Trip.model_validate(GOOD_TRIP)
    (body,) = fake_openai.chat_requests
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "Trip" and fmt["json_schema"]["strict"]
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False
    assert body["messages"] == USER  # the API enforces the schema: no prompt needed
    assert body["temperature"] == 0


def test_json_object_strategy_puts_the_schema_in_the_system_prompt(fake_openai: FakeOpenAI,
                                                                    fake_llm: LLMClient) -> None:
    fake_openai.enqueue_json(GOOD_TRIP)
    messages = [{"role": "system", "content": "You plan trips."}, *USER]
    assert fake_llm.structured(messages, Trip, strategy="json_object").stops[1].name == "Lyon"
    (body,) = fake_openai.chat_requests
    assert body["response_format"] == {"type": "json_object"}
    system = body["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("You plan trips.")
    schema_text = json.dumps(Trip.model_json_schema(), separators=(",", ":"))
    assert "JSON" in system["content"] and schema_text in system["content"]
    assert body["messages"][1:] == USER


def test_prompt_strategy_reads_json_out_of_prose_and_fences(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    fake_openai.enqueue(f"Sure! Here it is:\n```json\n{json.dumps(GOOD_TRIP)}\n```\nHave a nice trip {{:}}")
    assert fake_llm.structured(USER, Trip, strategy="prompt").intent == "route"
    (body,) = fake_openai.chat_requests
    assert "response_format" not in body
    assert body["messages"][0]["role"] == "system" and "JSON schema" in body["messages"][0]["content"]


def test_extract_json_takes_the_first_object() -> None:
    assert extract_json('noise {bad} then {"a": {"b": "}"}} and {"c": 1}') == '{"a": {"b": "}"}}'
    assert extract_json("no json here") == "no json here"


@pytest.mark.parametrize(("provider", "expected"), [
    ("deepseek", {"type": "json_object"}), ("dashscope", {"type": "json_object"}), ("openai", "json_schema"),
])
def test_auto_strategy_follows_the_provider(make_client: Callable[..., LLMClient], fake_openai: FakeOpenAI,
                                            provider: str, expected: Any) -> None:
    client = make_client(llm_structured_output="auto")
    client.provider = provider  # as guessed from the provider's real base URL
    fake_openai.enqueue_json(GOOD_TRIP)
    client.structured(USER, Trip)
    fmt = fake_openai.chat_requests[-1]["response_format"]
    assert fmt == expected if isinstance(expected, dict) else fmt["type"] == expected


def test_dashscope_compatible_mode_url_gets_json_object(make_client: Callable[..., LLMClient],
                                                        fake_openai: FakeOpenAI) -> None:
    client = make_client(llm_base_url=fake_openai.url + "/compatible-mode/v1")
    assert client.provider == "dashscope"
    fake_openai.enqueue_json(GOOD_TRIP)
    client.structured(USER, Trip)
    assert fake_openai.requests[-1].path == "/compatible-mode/v1/chat/completions"
    assert fake_openai.chat_requests[-1]["response_format"] == {"type": "json_object"}


def test_the_setting_picks_the_strategy(make_client: Callable[..., LLMClient], fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue_json(GOOD_TRIP)
    make_client(llm_structured_output="prompt").structured(USER, Trip)
    assert "response_format" not in fake_openai.chat_requests[-1]


@pytest.mark.parametrize("strategy", ["json_schema", "json_object", "prompt"])
def test_one_repair_turn_quotes_the_error_and_the_bad_output(fake_openai: FakeOpenAI, fake_llm: LLMClient,
                                                             strategy: str) -> None:
    bad = {"intent": "route", "stops": [{"name": "Paris", "nights": -1}]}
    fake_openai.enqueue_json(bad)
    fake_openai.enqueue_json(GOOD_TRIP)
    assert fake_llm.structured(USER, Trip, strategy=strategy) == Trip.model_validate(GOOD_TRIP)
    first, second = fake_openai.chat_requests
    assert second["messages"][:-2] == first["messages"]
    assistant, repair = second["messages"][-2:]
    assert assistant == {"role": "assistant", "content": json.dumps(bad)}
    assert repair["role"] == "user" and "stops.0.nights" in repair["content"]
    assert "greater than or equal to 0" in repair["content"]
    assert second.get("response_format") == first.get("response_format")


def test_a_reply_that_is_not_json_is_repaired_too(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    fake_openai.enqueue('{"intent": "route", "stops": [')  # cut off
    fake_openai.enqueue_json(GOOD_TRIP)
    assert fake_llm.structured(USER, Trip).intent == "route"
    assert "Invalid JSON" in fake_openai.chat_requests[1]["messages"][-1]["content"]


def test_a_second_bad_reply_raises_invalid_output(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    fake_openai.enqueue_json({"intent": "fly"})
    fake_openai.enqueue_json({"intent": "fly", "stops": []})
    fake_openai.enqueue_json(GOOD_TRIP)  # never asked for: one repair only
    with pytest.raises(LLMInvalidOutput) as exc:
        fake_llm.structured(USER, Trip)
    assert len(fake_openai.chat_requests) == 2 and fake_openai.pending == 1
    assert "intent" in exc.value.params["detail"] and "一次" in exc.value.message("zh")


@pytest.mark.parametrize("method", ["complete", "structured", "stream"])
def test_a_refusal_raises_llm_refusal(fake_openai: FakeOpenAI, fake_llm: LLMClient, method: str) -> None:
    fake_openai.enqueue_refusal("I can't help with that.")
    with pytest.raises(LLMRefusal) as exc:
        if method == "complete":
            fake_llm.complete(USER)
        elif method == "structured":
            fake_llm.structured(USER, Trip)
        else:
            list(fake_llm.stream(USER))
    assert "can't help" in str(exc.value)
    assert len(fake_openai.chat_requests) == 1  # a refusal is not repaired


def test_a_content_filter_stop_is_a_refusal(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    from tests.fakes.openai import Reply

    fake_openai.enqueue_reply(Reply(content="", finish_reason="content_filter"))
    with pytest.raises(LLMRefusal, match="content filter"):
        fake_llm.complete(USER)


# --- stream -----------------------------------------------------------------------

def test_stream_yields_the_deltas_in_order(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    fake_openai.enqueue_stream(["Take ", "the ", "TGV", "."])
    assert list(fake_llm.stream(USER, temperature=0.5)) == ["Take ", "the ", "TGV", "."]
    body = fake_openai.chat_requests[-1]
    assert body["stream"] is True and body["temperature"] == 0.5
    fake_openai.enqueue("a plain text is streamed in pieces")
    assert "".join(fake_llm.stream(USER)) == "a plain text is streamed in pieces"


def test_the_fake_streams_server_sent_events_ending_with_done(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue_stream(["Hel", "lo"])
    body = {"model": "m", "messages": USER, "stream": True}
    with httpx.stream("POST", fake_openai.url + "/v1/chat/completions", json=body, timeout=2) as resp:
        assert resp.headers["content-type"] == "text/event-stream"
        assert resp.headers["transfer-encoding"] == "chunked"
        events = [line for line in resp.iter_lines() if line]
    assert all(e.startswith("data: ") for e in events) and events[-1] == "data: [DONE]"
    chunks = [json.loads(e[6:]) for e in events[:-1]]
    assert [c["object"] for c in chunks] == ["chat.completion.chunk"] * 4
    assert [c["choices"][0]["delta"].get("content") for c in chunks] == ["", "Hel", "lo", None]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


@pytest.mark.parametrize("mode", ["drop", "error"])
def test_a_broken_stream_raises_after_the_partial_text(fake_openai: FakeOpenAI, fake_llm: LLMClient,
                                                      mode: Literal["drop", "error"]) -> None:
    fake_openai.enqueue_stream(["Take ", "the ", "TGV"], break_after=2, break_mode=mode)
    received: list[str] = []
    with pytest.raises(LLMHTTPError) as exc:
        for delta in fake_llm.stream(USER):
            received.append(delta)
    assert received == ["Take ", "the "]
    assert exc.value.code == "llm.stream_broken"


def test_a_stalled_stream_times_out(fake_openai: FakeOpenAI, make_client: Callable[..., LLMClient]) -> None:
    client = make_client(llm_timeout_s=0.3)
    fake_openai.enqueue_stream(["Take ", "the ", "TGV"], break_after=1, break_mode="hang")
    received: list[str] = []
    with pytest.raises(LLMTimeout):  # without the read timeout the hung stream would never end
        for delta in client.stream(USER):
            received.append(delta)
    assert received == ["Take "]


# --- HTTP failures ----------------------------------------------------------------

@pytest.mark.parametrize("fault", [{"latency_s": 3.0}, {"hang": True}], ids=["latency", "hang"])
def test_a_slow_server_times_out_quickly(fake_openai: FakeOpenAI, make_client: Callable[..., LLMClient],
                                         fault: dict[str, Any]) -> None:
    client = make_client(llm_timeout_s=0.3)
    fake_openai.set_fault(**fault)
    with pytest.raises(LLMTimeout) as exc:  # a 3 s answer or a hang, cut at 0.3 s: no timeout, no error
        client.complete(USER)
    assert exc.value.params["seconds"] == 0.3 and "0.3" in str(exc.value)


def test_429_without_retries(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    fake_openai.set_fault(status=429)
    with pytest.raises(LLMHTTPError) as exc:
        fake_llm.complete(USER)
    assert exc.value.params["status"] == 429 and exc.value.code == "llm.rate_limited"
    assert "injected fault" in exc.value.params["detail"]  # the server's own message
    assert len(fake_openai.requests) == 1


def test_429_once_is_retried_by_the_sdk(fake_openai: FakeOpenAI, make_client: Callable[..., LLMClient]) -> None:
    client = make_client(llm_max_retries=1)
    fake_openai.set_fault(status=429, times=1)
    fake_openai.enqueue("after the retry")
    assert client.complete(USER) == "after the retry"
    assert len(fake_openai.requests) == 2  # retried once, after the server's retry-after-ms


def test_the_fake_429_carries_retry_after(fake_openai: FakeOpenAI) -> None:
    fake_openai.set_fault(status=429)
    resp = httpx.post(fake_openai.url + "/v1/chat/completions", json={"messages": USER}, timeout=2)
    assert resp.status_code == 429 and resp.headers["retry-after"] == "1" and resp.headers["retry-after-ms"] == "50"
    assert resp.json()["error"]["type"] == "rate_limit_exceeded"


def test_500_is_an_http_error(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    fake_openai.set_fault(status=500)
    with pytest.raises(LLMHTTPError) as exc:
        fake_llm.complete(USER)
    assert exc.value.params["status"] == 500 and "(500)" in str(exc.value)


def test_a_malformed_body_is_our_error(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    fake_openai.set_fault(malformed_json=True)
    with pytest.raises(LLMHTTPError) as exc:
        fake_llm.complete(USER)
    assert exc.value.code == "llm.bad_response"


def test_connection_refused_names_the_url(make_client: Callable[..., LLMClient]) -> None:
    url = closed_port_url()
    with pytest.raises(LLMHTTPError) as exc:
        make_client(llm_base_url=url).complete(USER)
    assert exc.value.code == "llm.unreachable" and url in str(exc.value)


def test_a_wrong_key_is_rejected_and_never_shown(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    fake_openai.api_key = "sk-the-right-one"  # the fake echoes the key it got in its 401 message
    with pytest.raises(LLMHTTPError) as exc:
        fake_llm.complete(USER)
    assert exc.value.code == "llm.auth_failed" and exc.value.params["status"] == 401
    assert "Incorrect API key provided: ***" in str(exc.value)
    assert FAKE_API_KEY not in str(exc.value) + exc.value.message("zh") + repr(exc.value.params)


def test_a_custom_http_client_is_used(fake_openai: FakeOpenAI, fake_llm_settings: SettingsFactory) -> None:
    seen: list[str] = []
    with httpx.Client(event_hooks={"request": [lambda r: seen.append(str(r.url))]}) as http_client, \
            LLMClient(fake_llm_settings(), http_client=http_client) as client:
        fake_openai.enqueue("via httpx")
        assert client.complete(USER) == "via httpx"
        fake_openai.enqueue_stream(["a", "b"])
        assert list(client.stream(USER)) == ["a", "b"]
    assert seen == [fake_openai.url + "/v1/chat/completions"] * 2


# --- no raw SDK exception escapes ---------------------------------------------------

def _enqueue_twice(enqueue: Callable[[], None]) -> None:
    enqueue()
    enqueue()  # for the repair turn of structured()


# Transport faults break every method; content faults only the chat methods they script.
TRANSPORT_FAULTS: dict[str, Callable[[FakeOpenAI], None]] = {
    "429": lambda f: f.set_fault(status=429),
    "500": lambda f: f.set_fault(status=500),
    "503": lambda f: f.set_fault(status=503),
    "401": lambda f: setattr(f, "api_key", "sk-other"),
    "latency": lambda f: f.set_fault(latency_s=2.0),
    "hang": lambda f: f.set_fault(hang=True),
    "malformed": lambda f: f.set_fault(malformed_json=True),
    "stopped": lambda f: f.stop(),
}
CONTENT_FAULTS: dict[str, Callable[[FakeOpenAI], None]] = {
    "refusal": lambda f: _enqueue_twice(lambda: f.enqueue_refusal("no")),
    "schema-violating": lambda f: _enqueue_twice(lambda: f.enqueue_json({"intent": 1})),
    "broken-stream": lambda f: f.enqueue_stream(["x", "y"], break_after=1),
    "stream-error-event": lambda f: f.enqueue_stream(["x", "y"], break_after=1, break_mode="error"),
}


def _call(client: LLMClient, method: str) -> None:
    if method == "complete":
        client.complete(USER)
    elif method == "structured":
        client.structured(USER, Trip)
    elif method == "stream":
        list(client.stream(USER))
    else:
        client.embed(["Paris"])


@pytest.mark.parametrize("method", ["complete", "structured", "stream", "embed"])
@pytest.mark.parametrize("fault", [*TRANSPORT_FAULTS, *CONTENT_FAULTS])
def test_no_raw_sdk_exception_escapes(fake_openai: FakeOpenAI, make_client: Callable[..., LLMClient],
                                      fault: str, method: str) -> None:
    client = make_client(llm_timeout_s=0.3)
    {**TRANSPORT_FAULTS, **CONTENT_FAULTS}[fault](fake_openai)
    try:
        _call(client, method)  # anything but an LLMError (e.g. an openai.* exception) fails the test
    except LLMError as exc:
        text = f"{exc} {exc.message('zh')} {exc.params}"
        assert FAKE_API_KEY not in text and "Traceback" not in text
    else:
        assert fault in CONTENT_FAULTS, f"{method} succeeded despite the {fault} fault"


# --- embeddings -------------------------------------------------------------------

def test_embed_returns_one_vector_per_text(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    texts = ["route from Paris to Lyon", "route from Paris to Lyons", "weather in Tokyo"]
    vectors = fake_llm.embed(texts)
    assert len(vectors) == 3 and all(len(v) == fake_openai.embedding_dim for v in vectors)
    assert vectors[0] == pytest.approx(embed_text(texts[0]))
    (body,) = fake_openai.embedding_requests
    assert body == {"model": "fake-embed", "input": texts, "encoding_format": "float"}

    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True)) / math.prod(math.hypot(*v) for v in (a, b))

    assert cos(vectors[0], vectors[1]) > cos(vectors[0], vectors[2])


def test_embed_edge_cases(fake_openai: FakeOpenAI, fake_llm: LLMClient,
                          make_client: Callable[..., LLMClient]) -> None:
    assert fake_llm.embed([]) == [] and fake_openai.requests == []
    fake_openai.embedding_overrides["x"] = [1.0, 0.0]
    assert fake_llm.embed(["x"], model="other-embed") == [[1.0, 0.0]]
    assert fake_openai.embedding_requests[-1]["model"] == "other-embed"
    with pytest.raises(LLMNotConfigured) as exc:
        make_client(llm_embedding_model="").embed(["x"])
    assert exc.value.code == "llm.embedding_not_configured"
