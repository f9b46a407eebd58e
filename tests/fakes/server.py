"""A small reusable fake HTTP server for tests (and for browser tests run by hand).

It listens on ``127.0.0.1`` on a free port, serves from a daemon thread, records
every request, and can be told to misbehave. Subclass it (or call
:meth:`FakeServer.route`) to speak a particular API; see ``tests/fakes/osrm.py``.

Example::

    class FakeEcho(FakeServer):
        def __init__(self):
            super().__init__()
            self.route("GET", r"/echo/(?P<word>\\w+)", lambda req, m: {"word": m["word"]})
            self.route("POST", r"/v1/chat/completions", self.chat)

        def chat(self, req, m):
            body = req.json()
            return Response(200, {"choices": [...]})

    with FakeEcho() as srv:              # start() … stop()
        httpx.get(srv.url + "/echo/hi")  # {"word": "hi"}
        assert srv.requests[-1].path == "/echo/hi"
        srv.set_fault(status=503)        # every answer is now a 503 with a JSON error body
        srv.set_fault(latency_s=2.0)     # answer after 2 s (timeouts)
        srv.set_fault(hang=True)         # never answer (until stop())
        srv.set_fault(malformed_json=True)  # 200 with a body that is not JSON
        srv.set_fault(status=500, times=1)  # only the next request fails
        srv.clear_faults()

A handler returns a :class:`Response`, or any JSON-able value (sent as 200
``application/json``), or ``(status, value)``. A request no route matches gets
404 with a JSON error. A handler that raises gets 500 with the exception text.

Streamed bodies (e.g. server-sent events): give the Response ``chunks``, an
iterable of bytes; each piece is sent at once with chunked transfer encoding.
The iterable may pause between pieces with :meth:`FakeServer.pause`, and may
raise :class:`DropConnection` to cut the connection mid-body (a broken stream)::

    def events():
        yield b"data: 1\n\n"
        srv.pause(0.1)
        raise DropConnection  # the client sees an incomplete body

    Response(200, chunks=events(), content_type="text/event-stream")

Subclasses may override :meth:`FakeServer.fault_body` and
:meth:`FakeServer.fault_headers` to shape injected errors like a real API's.

Run a subclass from the command line with :func:`serve_main` (it serves in the
foreground until Ctrl-C), e.g. ``python -m tests.fakes.osrm --port 5001``.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["DropConnection", "FakeServer", "Faults", "Request", "Response", "serve_main"]


@dataclass
class Request:
    """One request the server received."""

    method: str
    path: str  # URL-decoded path, without the query string
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.monotonic)

    @property
    def params(self) -> dict[str, str]:
        """The query string with the last value of each name."""
        return {k: v[-1] for k, v in self.query.items()}

    def json(self) -> Any:
        return json.loads(self.body or b"null")


class DropConnection(Exception):
    """Raise from a streamed :class:`Response`'s ``chunks`` to drop the connection mid-body."""


@dataclass
class Response:
    """What a handler answers. ``body`` may be bytes, str, or a JSON-able value.

    ``chunks``: when set, the body is streamed instead (chunked transfer encoding),
    one piece per item; ``body`` is ignored.
    """

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    chunks: Iterable[bytes] | None = None

    def encoded(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode("utf-8")
        return json.dumps(self.body, ensure_ascii=False).encode("utf-8")


@dataclass
class Faults:
    """How the server misbehaves; all off by default.

    ``latency_s``: wait this long before answering (interrupted by ``stop()``).
    ``status``: answer every request with this HTTP status and a JSON error body.
    ``hang``: never answer; the connection stays open until ``stop()``.
    ``malformed_json``: answer 200 with a body that is not valid JSON.
    ``times``: apply the faults to the next N requests only (None: until cleared).
    """

    latency_s: float = 0.0
    status: int | None = None
    hang: bool = False
    malformed_json: bool = False
    times: int | None = None

    @property
    def active(self) -> bool:
        return bool(self.latency_s or self.status or self.hang or self.malformed_json)


Handler = Callable[[Request, "re.Match[str]"], Any]


class FakeServer:
    """A threaded HTTP server on 127.0.0.1 with routes, request recording and fault injection."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host, self.port = host, port
        self.requests: list[Request] = []
        self.faults = Faults()
        self._routes: list[tuple[str, re.Pattern[str], Handler]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def fault_body(self, status: int) -> Any:
        """The JSON body sent with an injected ``status`` fault; override to mimic an API's error shape."""
        return {"error": f"injected fault: HTTP {status}", "message": f"injected fault: HTTP {status}"}

    def fault_headers(self, status: int) -> dict[str, str]:
        """Extra headers sent with an injected ``status`` fault (e.g. ``Retry-After``); none by default."""
        return {}

    def pause(self, seconds: float | None) -> bool:
        """Sleep ``seconds`` (None: until ``stop()``) in a handler; True when the server is stopping."""
        return self._stopping.wait(seconds)

    # --- configuration ---

    def route(self, method: str, pattern: str, handler: Handler) -> None:
        """Answer ``method`` requests whose path fully matches the regex ``pattern`` with ``handler``."""
        self._routes.append((method.upper(), re.compile(pattern), handler))

    def set_fault(self, **faults: Any) -> None:
        """Replace the faults, e.g. ``set_fault(status=500)``, ``set_fault(hang=True)`` (see :class:`Faults`)."""
        with self._lock:
            self.faults = Faults(**faults)

    def clear_faults(self) -> None:
        self.set_fault()

    def reset(self) -> None:
        """Forget recorded requests and clear the faults."""
        with self._lock:
            self.requests.clear()
            self.faults = Faults()

    def requests_to(self, path_prefix: str) -> list[Request]:
        """Recorded requests whose path starts with ``path_prefix``."""
        return [r for r in self.requests if r.path.startswith(path_prefix)]

    # --- life cycle ---

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:54321`` (no trailing slash)."""
        if self._httpd is None:
            raise RuntimeError("the fake server is not started")
        return f"http://{self.host}:{self._httpd.server_address[1]}"

    def start(self) -> FakeServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = ThreadingHTTPServer((self.host, self.port), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"{type(self).__name__}-{self._httpd.server_address[1]}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; releases hanging and sleeping handlers first."""
        self._stopping.set()
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def serve_forever(self) -> None:
        """Serve in the foreground until interrupted (for command-line use)."""
        self.start()
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- request handling (runs in the server's threads) ---

    def _take_faults(self) -> Faults:
        with self._lock:
            f = self.faults
            if f.times is not None and f.active:
                if f.times <= 0:
                    return Faults()
                self.faults = Faults(f.latency_s, f.status, f.hang, f.malformed_json, f.times - 1)
            return f

    def dispatch(self, req: Request) -> Response | None:
        """The response to ``req`` (None: hang, send nothing)."""
        with self._lock:
            self.requests.append(req)
        faults = self._take_faults()
        if faults.hang:
            self._stopping.wait()
            return None
        if faults.latency_s and self._stopping.wait(faults.latency_s):
            return None
        if faults.status:
            return Response(faults.status, self.fault_body(faults.status), self.fault_headers(faults.status))
        if faults.malformed_json:
            return Response(200, b'{"code": "Ok", "this is": not json', content_type="application/json")
        for method, pattern, handler in self._routes:
            m = pattern.fullmatch(req.path)
            if m and method == req.method:
                try:
                    return _as_response(handler(req, m))
                except Exception as exc:  # a bug in a fake should show, not hang the test
                    return Response(500, {"error": f"fake handler failed: {exc!r}"})
        return Response(404, {"error": f"no route for {req.method} {req.path}"})


def _as_response(value: Any) -> Response:
    if isinstance(value, Response):
        return value
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], int):
        return Response(value[0], value[1])
    return Response(200, value)


def _make_handler(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _handle(self) -> None:
            split = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            req = Request(
                method=self.command, path=unquote(split.path),
                query=parse_qs(split.query, keep_blank_values=True),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=self.rfile.read(length) if length else b"",
            )
            resp = server.dispatch(req)
            if resp is None:  # hang / stopped: drop the connection without an answer
                self.close_connection = True
                return
            self.send_response(resp.status)
            self.send_header("Content-Type", resp.content_type)
            for k, v in resp.headers.items():
                self.send_header(k, v)
            if resp.chunks is not None:
                self._send_chunks(resp.chunks)
                return
            body = resp.encoded()
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _send_chunks(self, chunks: Iterable[bytes]) -> None:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                for piece in chunks:
                    if piece:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.write(b"0\r\n\r\n")
            except (DropConnection, OSError):  # a broken stream, or the client went away
                self.close_connection = True

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

        def handle(self) -> None:
            try:
                super().handle()
            except ConnectionError:  # the client went away (timed out, reset): nobody to answer
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

    return _Handler


def serve_main(factory: Callable[[str, int], FakeServer], description: str, default_port: int) -> None:
    """Command-line entry: ``--host`` / ``--port``, print the URL, serve until Ctrl-C."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=default_port, help=f"port (default {default_port}; 0 = any free port)")
    args = parser.parse_args()
    server = factory(args.host, args.port).start()
    print(f"{description} listening on {server.url}", flush=True)
    server.serve_forever()
