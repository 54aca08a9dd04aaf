"""A local OpenAI-compatible chat-completions server, so `ChatOpenAI` runs its real code path.

In-process: `with StubLLM() as stub: ChatOpenAI(base_url=stub.base_url, api_key="stub")`.
Separate process: `python -m tests.support.stub_llm --port P` prints its base URL; drive it with
`StubClient(url)` (`GET /_stub/requests`, `POST /_stub/reset`, `POST /_stub/script`).
Reply specs and the default policy are in `stub_replies`.
"""

from __future__ import annotations

import argparse
import copy
import json
import signal
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

from tests.support.ports import free_port
from tests.support.stub_replies import (
    JSON,
    as_spec,
    completion,
    default_reply,
    prompt_text,
    stream_chunks,
)

Responder = Callable[[JSON], JSON | str | None]
_MODELS = {"object": "list", "data": [{"id": "stub-model", "object": "model", "created": 0,
                                       "owned_by": "stub"}]}  # fmt: skip


class StubLLM:
    """Records every chat request; answers from the script queue, `responder`, or the default."""

    def __init__(self, port: int | None = None, host: str = "127.0.0.1") -> None:
        self.host, self.port = host, port or free_port()
        self.responder: Responder | None = None
        self._lock = threading.Lock()
        self._requests: list[JSON] = []
        self._script: deque[JSON] = deque()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """Server root (the control endpoints live under `/_stub/`)."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The value for `OPENAI_BASE_URL` / `ChatOpenAI(base_url=...)`."""
        return f"{self.url}/v1"

    def start(self) -> StubLLM:
        """Serve in a daemon thread."""
        self._server = ThreadingHTTPServer((self.host, self.port), _Handler)
        self._server.daemon_threads = True
        cast(Any, self._server).stub = self
        threading.Thread(target=self._server.serve_forever, name="stub-llm", daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> StubLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def requests(self) -> list[JSON]:
        """Copies of every chat-completions request body so far, oldest first."""
        with self._lock:
            return copy.deepcopy(self._requests)

    def last_prompt(self) -> str:
        """`prompt_text` of the latest request."""
        return prompt_text(self.requests()[-1])

    def reset(self) -> None:
        """Forget recorded requests, scripted replies and the responder."""
        with self._lock:
            self._requests.clear()
            self._script.clear()
            self.responder = None

    def script(self, *replies: JSON | str) -> None:
        """Queue replies (a string means `{"content": s}`); each is used by one request."""
        with self._lock:
            self._script.extend(as_spec(r) for r in replies)

    def next_reply(self, body: JSON) -> tuple[JSON, int]:
        """Record `body` and choose its reply spec; returns (spec, request number from 1)."""
        with self._lock:
            self._requests.append(copy.deepcopy(body))
            n = len(self._requests)
            scripted = self._script.popleft() if self._script else None
        if scripted is not None:
            return scripted, n
        answer = self.responder(body) if self.responder is not None else None
        return (as_spec(answer) if answer is not None else default_reply(body, n)), n


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read the records
        return

    @property
    def stub(self) -> StubLLM:
        return cast(StubLLM, cast(Any, self.server).stub)

    def _send(self, status: int, payload: Any, raw: str | None = None) -> None:
        data = (raw if raw is not None else json.dumps(payload)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(200, _MODELS)
        elif self.path == "/_stub/requests":
            self._send(200, self.stub.requests())
        elif self.path == "/_stub/health":
            self._send(200, {"ok": True})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            return self._send(400, {"error": {"message": "request body is not JSON"}})
        if self.path.rstrip("/") in ("/v1/chat/completions", "/chat/completions"):
            return self._chat(body)
        if self.path == "/_stub/reset":
            self.stub.reset()
        elif self.path == "/_stub/script":
            self.stub.script(*(body if isinstance(body, list) else [body]))
        else:
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        self._send(200, {"ok": True})

    def _chat(self, body: JSON) -> None:
        spec, n = self.stub.next_reply(body)
        time.sleep(float(spec.get("delay", 0)))
        status = int(spec.get("status", 200))
        if status != 200:
            error = {"message": spec.get("content") or "stub failure", "type": "server_error"}
            return self._send(status, {"error": error})
        if "raw" in spec:
            return self._send(200, None, raw=str(spec["raw"]))
        if not body.get("stream"):
            return self._send(200, completion(body, spec, n))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")  # no length: the body ends when we close
        self.end_headers()
        self.close_connection = True
        for chunk in stream_chunks(body, spec, n):
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")


class StubClient:
    """Control a stub running in another process through its `/_stub/` endpoints."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/").removesuffix("/v1")

    def _call(self, path: str, payload: Any = None) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        method = "GET" if data is None else "POST"
        headers = {"Content-Type": "application/json"}
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def requests(self) -> list[JSON]:
        """Every chat request body the stub has recorded."""
        return cast(list[JSON], self._call("/_stub/requests"))

    def reset(self) -> None:
        """Forget requests and scripted replies."""
        self._call("/_stub/reset", {})

    def script(self, *replies: JSON | str) -> None:
        """Queue reply specs (strings mean plain content)."""
        self._call("/_stub/script", [as_spec(r) for r in replies])


def main(argv: list[str] | None = None) -> None:
    """Run the stub in the foreground until SIGTERM/SIGINT, printing its base URL first."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    stub = StubLLM(port=args.port or None, host=args.host).start()
    print(stub.base_url, flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    done.wait()
    stub.stop()


if __name__ == "__main__":
    main()
