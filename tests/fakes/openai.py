"""A fake OpenAI-compatible API: chat completions (plain and streamed) and embeddings.

It answers in the exact JSON shapes the ``openai`` SDK parses, under any path
prefix (``/v1/chat/completions``, ``/compatible-mode/v1/chat/completions``, …),
so a client pointed at ``fake.url + "/v1"`` works like against a real server.

Scripting (chat completions; the queue is first in, first out)::

    fake.enqueue("plain text")                  # message.content
    fake.enqueue_json({"intent": "route"})      # content = the JSON text (may violate a schema on purpose)
    fake.enqueue_refusal("I can't help")        # message.refusal set, content null
    fake.enqueue_stream(["Hel", "lo"])          # chunks of a streamed reply
    fake.enqueue_stream(["Hel"], break_after=1)                     # drop the connection after 1 chunk
    fake.enqueue_stream(["Hel"], break_after=1, break_mode="hang")  # …or stall, or send an error event
    fake.enqueue_stream(["la "], forever=True)                      # repeat the pieces, never finish
    fake.enqueue_stream(["a ", "b "], interval_s=0.05)              # trickle: pause before each piece
    fake.responder = lambda body: "text" or Reply(...)  # used when the queue is empty
    fake.default_reply = "OK"                   # used when queue and responder are empty (None: echo)

A queued text answers a streamed request too (split into small chunks), and a
queued stream answers a plain request with its joined text.

Recording: ``fake.chat_requests`` (JSON bodies of chat requests, oldest first),
``fake.embedding_requests``, and every raw request in ``fake.requests``; ``fake.streams``
holds one :class:`StreamRecord` per streamed answer (pieces sent, finished, cut by the client).
``fake.max_in_flight`` is the most chat requests it was answering at one time (``fake.compute_s``:
how long each plain answer takes, a busy model).

Authentication: with ``fake.api_key`` set, a request without ``Authorization:
Bearer <api_key>`` gets 401, its message quoting the key it got (as a careless
server might; the client must redact it).

Faults (besides the base :class:`~tests.fakes.server.Faults`: ``set_fault(status=429)``,
``latency_s``, ``hang``, ``malformed_json``, ``times``): error bodies have OpenAI's
shape ``{"error": {"message", "type", "param", "code"}}``; a 429 carries
``Retry-After`` and ``retry-after-ms`` from ``fake.retry_after_s`` (small, so the
SDK's own retry stays fast).

Embeddings are deterministic: :func:`embed_text` hashes character trigrams into
``fake.embedding_dim`` buckets and normalises, so similar texts get similar
vectors; ``fake.embedding_overrides[text] = [...]`` scripts a vector.

Run it for browser tests (``FAKE_OPENAI_REPLY`` sets the default reply)::

    python -m tests.fakes.openai --port 8701    # then LLM_BASE_URL=http://127.0.0.1:8701/v1 LLM_API_KEY=test
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import os
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from tests.fakes.server import DropConnection, FakeServer, Request, Response, serve_main

__all__ = ["FAKE_API_KEY", "FakeOpenAI", "Reply", "StreamRecord", "embed_text"]

FAKE_API_KEY = "sk-fake-test-key-0123456789"  # what the test fixtures send; see FakeOpenAI.api_key

BreakMode = Literal["drop", "hang", "error"]
STREAM_PIECE_CHARS = 4  # a plain text answering a streamed request is sent in pieces of this size


@dataclass
class Reply:
    """One scripted chat answer.

    ``content`` / ``refusal``: the message. ``chunks``: the pieces of a streamed
    answer (None: derived from ``content``). ``break_after``: a stream breaks
    after this many pieces, by ``break_mode``: ``drop`` the connection, ``hang``
    until the server stops, or send an OpenAI ``error`` event.
    """

    content: str | None = ""
    refusal: str | None = None
    chunks: list[str] | None = None
    finish_reason: str = "stop"
    break_after: int | None = None
    break_mode: BreakMode = "drop"
    forever: bool = False  # a stream repeats its pieces and never finishes (until the client goes away)
    interval_s: float = 0.0  # a stream pauses this long before each piece (a slow, trickling model)

    def text(self) -> str:
        return "".join(self.chunks) if self.chunks is not None else (self.content or "")

    def pieces(self) -> list[str]:
        if self.chunks is not None:
            return list(self.chunks)
        text = self.content or ""
        return [text[i:i + STREAM_PIECE_CHARS] for i in range(0, len(text), STREAM_PIECE_CHARS)]


Responder = Callable[[dict[str, Any]], "str | Reply"]
FOREVER_MAX_PIECES = 200_000  # a "forever" stream still stops here, so a broken test cannot spin for ever


@dataclass
class StreamRecord:
    """What happened to one streamed answer: ``pieces`` sent, ``finished`` normally, ``cut`` by the client."""

    pieces: int = 0
    finished: bool = False
    cut: bool = False


def embed_text(text: str, dim: int = 64) -> list[float]:
    """The fake's embedding of ``text``: hashed character trigrams, L2-normalised."""
    vec = [0.0] * dim
    padded = f"  {text.lower()} "
    for i in range(len(padded) - 2):
        digest = hashlib.blake2b(padded[i:i + 3].encode("utf-8"), digest_size=8).digest()
        vec[int.from_bytes(digest[:4], "little") % dim] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


class FakeOpenAI(FakeServer):
    """Answers ``POST …/chat/completions`` (plain and SSE), ``POST …/embeddings`` and ``GET …/models``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, model: str = "fake-model") -> None:
        super().__init__(host, port)
        self.model = model
        self.api_key: str | None = None
        self.responder: Responder | None = None
        self.default_reply: str | None = None
        self.retry_after_s = 0.05
        self.embedding_dim = 64
        self.embedding_overrides: dict[str, list[float]] = {}
        self._queue: deque[Reply] = deque()
        self._queue_lock = threading.Lock()
        self.streams: list[StreamRecord] = []
        self.compute_s = 0.0  # every plain chat answer takes this long (a busy model; see max_in_flight)
        self.max_in_flight = 0
        self._in_flight = 0
        self._ids = itertools.count(1)
        self.route("POST", r"(?:/.*)?/chat/completions", self._chat)
        self.route("POST", r"(?:/.*)?/embeddings", self._embeddings)
        self.route("GET", r"(?:/.*)?/models", self._models)

    # --- scripting ---

    def enqueue(self, text: str) -> None:
        """Answer the next chat request with ``text``."""
        self.enqueue_reply(Reply(content=text))

    def enqueue_json(self, value: Any) -> None:
        """Answer the next chat request with ``value`` as JSON text."""
        self.enqueue(json.dumps(value, ensure_ascii=False))

    def enqueue_refusal(self, refusal: str) -> None:
        """Answer the next chat request with a refusal (``content`` null)."""
        self.enqueue_reply(Reply(content=None, refusal=refusal))

    def enqueue_stream(self, chunks: list[str], *, break_after: int | None = None,
                       break_mode: BreakMode = "drop", forever: bool = False, interval_s: float = 0.0) -> None:
        """Answer the next chat request with these stream pieces, optionally breaking after ``break_after``;
        ``forever``: repeat them without end; ``interval_s``: pause before each piece."""
        self.enqueue_reply(Reply(content=None, chunks=list(chunks), break_after=break_after, break_mode=break_mode,
                                 forever=forever, interval_s=interval_s))

    def enqueue_reply(self, reply: Reply) -> None:
        with self._queue_lock:
            self._queue.append(reply)

    @property
    def pending(self) -> int:
        """Queued replies not used yet."""
        with self._queue_lock:
            return len(self._queue)

    def reset(self) -> None:
        """Forget requests, faults and queued replies."""
        super().reset()
        with self._queue_lock:
            self._queue.clear()
            self.streams.clear()
            self.max_in_flight = 0

    # --- recording ---

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """JSON bodies of the chat completion requests received, oldest first."""
        return [r.json() for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def embedding_requests(self) -> list[dict[str, Any]]:
        return [r.json() for r in self.requests if r.path.endswith("/embeddings")]

    # --- OpenAI shapes ---

    def _auth_error(self, req: Request) -> Response | None:
        """401 when ``api_key`` is set and the request does not carry it."""
        if self.api_key is None or req.headers.get("authorization") == f"Bearer {self.api_key}":
            return None
        sent = req.headers.get("authorization", "").removeprefix("Bearer ")
        return Response(401, {"error": {"message": f"Incorrect API key provided: {sent}",
                                        "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}})

    def fault_body(self, status: int) -> Any:
        kind = {401: "invalid_request_error", 429: "rate_limit_exceeded"}.get(status, "server_error")
        return {"error": {"message": f"injected fault: HTTP {status}", "type": kind, "param": None, "code": kind}}

    def fault_headers(self, status: int) -> dict[str, str]:
        if status != 429:
            return {}
        return {"Retry-After": str(max(1, math.ceil(self.retry_after_s))),
                "retry-after-ms": str(int(self.retry_after_s * 1000))}

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._queue_lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            answer = self.responder(body)
            return answer if isinstance(answer, Reply) else Reply(content=answer)
        if self.default_reply is not None:
            return Reply(content=self.default_reply)
        return Reply(content=f"(fake {self.model}) You said: {_last_user_text(body)}")

    def _envelope(self, body: dict[str, Any], obj: str) -> dict[str, Any]:
        return {"id": f"chatcmpl-fake{next(self._ids)}", "object": obj, "created": int(time.time()),
                "model": body.get("model") or self.model, "system_fingerprint": "fp_fake"}

    def _chat(self, req: Request, m: re.Match[str]) -> Response:
        if denied := self._auth_error(req):
            return denied
        body = req.json()
        if not isinstance(body, dict) or not body.get("messages"):
            return Response(400, {"error": {"message": "'messages' is required", "type": "invalid_request_error",
                                            "param": "messages", "code": None}})
        reply = self._next_reply(body)
        if body.get("stream"):
            return Response(200, chunks=self._counted(self._sse(body, reply)), content_type="text/event-stream",
                            headers={"Cache-Control": "no-cache"})
        self._enter()
        try:
            delay = self.compute_s + reply.interval_s * max(1, len(reply.pieces()))
            if delay:
                self.pause(delay)
        finally:
            self._exit()
        text = reply.text()
        prompt_tokens = sum(len(str(msg.get("content", "")).split()) for msg in body["messages"])
        completion_tokens = len(text.split())
        return Response(200, {
            **self._envelope(body, "chat.completion"),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": None if reply.refusal else text,
                            "refusal": reply.refusal},
                "logprobs": None,
                "finish_reason": reply.finish_reason,
            }],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        })

    def _sse(self, body: dict[str, Any], reply: Reply) -> Iterator[bytes]:
        envelope = self._envelope(body, "chat.completion.chunk")

        def event(data: Any) -> bytes:
            return b"data: " + json.dumps(data, ensure_ascii=False).encode("utf-8") + b"\n\n"

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
            return event({**envelope, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                                   "finish_reason": finish_reason}]})

        record = StreamRecord()
        with self._queue_lock:
            self.streams.append(record)
        yield chunk({"role": "assistant", "content": ""})
        if reply.refusal:
            yield chunk({"refusal": reply.refusal})
        pieces = reply.pieces()
        source = itertools.islice(itertools.cycle(pieces), FOREVER_MAX_PIECES) if reply.forever and pieces else pieces
        try:
            for i, piece in enumerate(source):
                if reply.break_after is not None and i >= reply.break_after:
                    break
                if reply.interval_s and self.pause(reply.interval_s):
                    return  # the server is stopping
                if self._stopping.is_set():
                    return
                yield chunk({"content": piece})
                record.pieces += 1
        except GeneratorExit:  # the client went away mid-stream
            record.cut = True
            raise
        if reply.break_after is not None:
            if reply.break_mode == "error":
                yield event({"error": {"message": "injected fault: stream error", "type": "server_error",
                                       "param": None, "code": "server_error"}})
                return
            if reply.break_mode == "hang":
                self.pause(None)
            raise DropConnection
        try:
            yield chunk({}, reply.finish_reason)
            if (body.get("stream_options") or {}).get("include_usage"):
                yield event({**envelope, "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                                                  "total_tokens": 2}})
            yield b"data: [DONE]\n\n"
        except GeneratorExit:
            record.cut = True
            raise
        record.finished = True

    def _enter(self) -> None:
        with self._queue_lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _exit(self) -> None:
        with self._queue_lock:
            self._in_flight -= 1

    def _counted(self, events: Iterator[bytes]) -> Iterator[bytes]:
        """``events``, counted as one chat request in flight while they are sent."""
        self._enter()
        try:
            yield from events
        finally:
            self._exit()

    def _embeddings(self, req: Request, m: re.Match[str]) -> Any:
        if denied := self._auth_error(req):
            return denied
        body = req.json()
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return Response(400, {"error": {"message": "'input' must be a string or a list of strings",
                                            "type": "invalid_request_error", "param": "input", "code": None}})
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(texts):
            vec = self.embedding_overrides.get(text) or embed_text(text, self.embedding_dim)
            value: Any = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode() if as_base64 else vec
            data.append({"object": "embedding", "index": i, "embedding": value})
        tokens = sum(len(t.split()) for t in texts)
        return {"object": "list", "data": data, "model": body.get("model") or self.model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}

    def _models(self, req: Request, m: re.Match[str]) -> Any:
        return {"object": "list", "data": [{"id": self.model, "object": "model", "created": 0, "owned_by": "fake"}]}


def _last_user_text(body: dict[str, Any]) -> str:
    for msg in reversed(body.get("messages") or []):
        if msg.get("role") == "user":
            content = msg.get("content")
            return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return ""


def _cli_server(host: str, port: int) -> FakeOpenAI:
    server = FakeOpenAI(host, port)
    server.default_reply = os.environ.get("FAKE_OPENAI_REPLY") or None
    return server


if __name__ == "__main__":
    serve_main(_cli_server, "fake OpenAI-compatible API", 8701)
