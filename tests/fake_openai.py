"""A fake OpenAI-compatible server on a loopback port, for recording cassettes in tests.

``FakeOpenAI()`` serves ``POST /v1/chat/completions`` from a thread, plainly or as
server-sent events (``"stream": true``), with usage when asked. Its rule: a conversation
whose last message is the user's gets a ``get_weather`` tool call (when that tool is
offered) for the city named last in the question; one whose last message is a tool
result gets an answer quoting it. Ids count up from 1 per server, so a run is
deterministic. ``requests`` holds every request body it received; ``stop()`` closes it.
"""

from __future__ import annotations

import importlib
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import ModuleType
from typing import Any

import pytest

REQUIRE_OPENAI = "FUNCWARE_REQUIRE_OPENAI"
CREATED = 1_700_000_000


def require_openai() -> ModuleType:
    """``langchain_openai``; skip without the ``openai`` extra (fail if CI requires it)."""
    if os.environ.get(REQUIRE_OPENAI) != "1":
        return pytest.importorskip(
            "langchain_openai", reason="the ChatOpenAI cassette tests need the `openai` extra"
        )
    try:
        return importlib.import_module("langchain_openai")
    except ImportError as exc:
        pytest.fail(
            f"{REQUIRE_OPENAI}=1 but langchain_openai cannot be imported ({exc}); "
            "install the extra: pip install -e '.[openai]'",
            pytrace=False,
        )


def _reply(body: dict[str, Any], number: int) -> tuple[str | None, list[dict[str, Any]]]:
    """The answer's text and tool calls for a request body."""
    last = body["messages"][-1]
    offered = {t["function"]["name"] for t in body.get("tools", [])}
    if last["role"] == "user" and "get_weather" in offered:
        city = str(last["content"]).rstrip("?!. ").split()[-1]
        call = {
            "id": f"call_{number}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
        }
        return None, [call]
    if last["role"] == "tool":
        return f"{last['content']}, says the weather tool.", []
    return f"You said: {last['content']}", []


class FakeOpenAI:
    """The server; ``base_url`` is what ``ChatOpenAI(base_url=...)`` takes."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._count = 0
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                if self.path != "/v1/chat/completions":
                    self.send_error(404)
                    return
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake._lock:
                    fake.requests.append(body)
                    fake._count += 1
                    number = fake._count
                if body.get("stream"):
                    fake._stream(self, body, number)
                else:
                    fake._whole(self, body, number)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def stop(self) -> None:
        """Stop serving and close the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    @staticmethod
    def _usage(body: dict[str, Any]) -> dict[str, int]:
        prompt = sum(len(str(m.get("content") or "")) for m in body["messages"]) // 4 + 1
        return {"prompt_tokens": prompt, "completion_tokens": 7, "total_tokens": prompt + 7}

    def _whole(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], number: int) -> None:
        text, calls = _reply(body, number)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = calls
        payload = {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": CREATED,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if calls else "stop",
                }
            ],
            "usage": self._usage(body),
        }
        data = json.dumps(payload).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _stream(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], number: int) -> None:
        text, calls = _reply(body, number)
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": "" if calls else None}]
        for start in range(0, len(text or ""), 8):
            deltas.append({"content": (text or "")[start : start + 8]})
        for index, call in enumerate(calls):
            head = {**call, "index": index, "function": {**call["function"], "arguments": ""}}
            deltas.append({"tool_calls": [head]})
            arguments = call["function"]["arguments"]
            for start in range(0, len(arguments), 6):
                piece = {"arguments": arguments[start : start + 6]}
                deltas.append({"tool_calls": [{"index": index, "function": piece}]})
        base = {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": body["model"],
        }
        events = [
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            for delta in deltas
        ]
        finish = "tool_calls" if calls else "stop"
        events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({**base, "choices": [], "usage": self._usage(body)})
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Connection", "close")
        handler.end_headers()
        for event in events:
            handler.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            handler.wfile.flush()
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
