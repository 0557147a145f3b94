"""A deliberately misbehaving OpenAI-compatible HTTP server for fault-injection tests (hand-made test double).

Used only where a real server cannot be made to fail on purpose (issue 3 acceptance: 429 with Retry-After, 500,
reset mid-stream, error chunk inside a 200 stream, ``finish_reason: length`` with empty content, ``<think>`` never
closed, a prompt reported back as 2,048 tokens; issue 39: ``markdown``, the answer wrapped in ``**…**``, which fails
the mechanical format rules). Real-server tests use llama-cpp-python instead.

Behaviour is chosen by a marker in the text to translate (the last user message or the completion prompt):
``[[fault:NAME]]`` or ``[[fault:NAME:N]]`` (misbehave on the first N requests carrying that text, then answer
normally; without N: always). Normal answers translate by the rule ``"ES " + text`` so tests can check the value;
usage reports ``(characters of all messages or the prompt) // 2 + 1`` prompt tokens and one completion token per answer word.
Every request is counted per text (:attr:`FakeServer.counts`) and optionally appended to a log file.

Written on raw asyncio streams (not http.server) so it can send a TCP reset mid-body.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import socket
import struct
import threading
import time
from collections import Counter
from typing import Any

MARK = re.compile(r"\[\[fault:([a-z0-9_]+)(?::(\d+))?\]\]")


def answer_for(text: str) -> str:
    """The normal answer the fake server gives for ``text`` (markers removed)."""
    return "ES " + MARK.sub("", text).strip()


class FakeServer:
    """Run with ``with FakeServer(latency_s=0.0) as srv: srv.base_url``; ``srv.counts[text]`` counts requests."""

    def __init__(self, latency_s: float = 0.0, log_path: str | None = None, server_header: str = "fake",
                 owned_by: str = "fake"):
        self.latency_s = latency_s
        self.log_path = log_path
        self.server_header = server_header
        self.owned_by = owned_by
        self.in_flight = 0
        self.max_in_flight = 0
        self.max_in_flight_streams = 0
        self.counts: Counter[str] = Counter()
        self.requests: list[dict[str, Any]] = []
        self.headers_seen: list[dict[str, str]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self.port = 0
        self._ready = threading.Event()
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FakeServer:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._loop is not None:
            fut = asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop)
            try:
                fut.result(5)
            except Exception:  # noqa: BLE001
                pass
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        if self._loop is not None and not self._loop.is_running():
            self._loop.close()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    # ---------------------------------------------------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                method, path, _ = line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while True:
                    h = await reader.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    k, _, v = h.decode("latin-1").partition(":")
                    headers[k.strip().lower()] = v.strip()
                n = int(headers.get("content-length", "0"))
                body = await reader.readexactly(n) if n else b""
                keep = await self._dispatch(method, path, headers, body, writer)
                if not keep:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return
        finally:
            try:
                writer.close()
            except Exception:  # noqa: BLE001
                pass

    def _send(self, writer: asyncio.StreamWriter, status: int, body: bytes, ctype: str = "application/json",
              extra: dict[str, str] | None = None) -> None:
        reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
                  500: "Internal Server Error", 503: "Service Unavailable"}.get(status, "X")
        head = [f"HTTP/1.1 {status} {reason}", f"Content-Type: {ctype}", f"Content-Length: {len(body)}",
                f"Server: {self.server_header}"]
        for k, v in (extra or {}).items():
            head.append(f"{k}: {v}")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)

    @staticmethod
    def _reset(writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()

    async def _dispatch(self, method: str, path: str, headers: dict[str, str], body: bytes,
                        writer: asyncio.StreamWriter) -> bool:
        with self._lock:
            self.headers_seen.append(headers)
        if method == "GET" and path.endswith("/models"):
            self._send(writer, 200, json.dumps({"object": "list", "data": [
                {"id": "fake-model", "object": "model", "owned_by": self.owned_by}]}).encode())
            await writer.drain()
            return True
        req = json.loads(body or b"{}")
        if "messages" in req:
            text = next((m["content"] for m in reversed(req["messages"]) if m.get("role") == "user"), "")
            prompt_chars = sum(len(m.get("content") or "") for m in req["messages"])
            chat = True
        else:
            text = req.get("prompt", "")
            prompt_chars = len(text)
            chat = False
        with self._lock:
            self.counts[text] += 1
            nth = self.counts[text]
            self.requests.append({"path": path, "text": text, "body": req, "t": time.time()})
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"text": text, "t": time.time()}) + "\n")
        stream = bool(req.get("stream"))
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if stream:
                self.max_in_flight_streams = max(self.max_in_flight_streams, self.in_flight)
        try:
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            return await self._answer(req, text, nth, chat, prompt_chars, headers, writer)
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _answer(self, req: dict[str, Any], text: str, nth: int, chat: bool, prompt_chars: int,
                      headers: dict[str, str], writer: asyncio.StreamWriter) -> bool:
        m = MARK.search(text)
        fault = m.group(1) if m else None
        limit = int(m.group(2)) if m and m.group(2) else None
        if fault and limit is not None and nth > limit:
            fault = None
        stream = bool(req.get("stream"))
        answer = answer_for(text)
        usage = {"prompt_tokens": prompt_chars // 2 + 1, "completion_tokens": max(1, len(answer.split())),
                 "total_tokens": 0, "prompt_tokens_details": {"cached_tokens": 0},
                 "completion_tokens_details": {"reasoning_tokens": 0}}
        finish = "stop"
        model = "fake-model"
        if fault == "auth_echo":  # echo the Authorization header back (canary-key test)
            answer = f"ES {headers.get('authorization', '')}"
        if fault == "auth_echo_b64":  # … base64-encoded, and as the model's name
            answer = "ES " + base64.b64encode(headers.get("authorization", "").encode()).decode()
            model = headers.get("authorization", "")
        if fault == "ctx_stream_empty":  # llama-cpp-python on a prompt over its context: an empty 200 stream, and
            if stream:                    # HTTP 400 for the same request without streaming
                writer.write((f"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                              f"Server: {self.server_header}\r\n\r\n").encode() + b"0\r\n\r\n")
                await writer.drain()
                return True
            self._send(writer, 400, b'{"error": {"message": "Requested tokens (3077) exceed context window of 2048"}}')
            await writer.drain()
            return True
        if fault == "r429":
            self._send(writer, 429, json.dumps({"error": {"message": f"rate limited; your key "
                                                          f"{headers.get('authorization', '')}"}}).encode(),
                       extra={"Retry-After": "1"})
            await writer.drain()
            return True
        if fault == "r500":
            self._send(writer, 500, b'{"error": {"message": "internal error"}}')
            await writer.drain()
            return True
        if fault == "r401":
            self._send(writer, 401, b'{"error": {"message": "invalid api key"}}')
            await writer.drain()
            return True
        if fault == "ctx400":
            self._send(writer, 400, b'{"error": {"message": "Requested tokens (3000) exceed context window of '
                                    b'2048"}}')
            await writer.drain()
            return True
        if fault == "length_empty":
            answer, finish = "", "length"
        if fault == "think_unclosed":
            answer, finish = "<think>The user wants a translation. Let me think about", "stop"
        if fault == "think_closed":
            answer = "<think>reasoning here</think>" + answer
        if fault == "empty":
            answer = ""
        if fault == "markdown":  # the answer in markdown emphasis (fails the format rules: format.markdown)
            answer = f"**{answer}**"
        if fault == "eos":  # a literal end-of-sequence token at the end of the text
            answer = answer + "</s>"
        if fault == "truncated":
            usage["prompt_tokens"] = 2048
        if not stream:
            if fault == "reset":  # headers + half the body, then a TCP reset
                full = json.dumps(self._completion(chat, answer, finish, usage, model)).encode()
                head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(full)}\r\n"
                        f"Server: {self.server_header}\r\n\r\n").encode()
                writer.write(head + full[: len(full) // 2])
                await writer.drain()
                self._reset(writer)
                return False
            if fault == "error200":
                self._send(writer, 200, b'{"error": {"message": "The model service connection was interrupted"}}')
                await writer.drain()
                return True
            self._send(writer, 200, json.dumps(self._completion(chat, answer, finish, usage, model)).encode())
            await writer.drain()
            return True
        # streaming: chunked SSE
        writer.write((f"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                      f"Server: {self.server_header}\r\n\r\n").encode())

        def chunk(data: str) -> bytes:
            b = data.encode()
            return f"{len(b):x}\r\n".encode() + b + b"\r\n"

        words = answer.split(" ") if answer else []
        for i, w in enumerate(words):
            piece = w if i == 0 else " " + w
            delta = {"choices": [{"index": 0, "delta": {"content": piece} if chat else None, "text": piece,
                                  "finish_reason": None}], "model": model}
            if chat:
                del delta["choices"][0]["text"]
            else:
                del delta["choices"][0]["delta"]
            writer.write(chunk(f"data: {json.dumps(delta)}\n\n"))
            await writer.drain()
            if fault == "reset" and i == 0:
                self._reset(writer)
                return False
            if fault == "interrupted" and i == 0:  # what llama-cpp-python's server does to a stream when another
                writer.write(chunk("data: [DONE]\n\n"))  # request arrives (interrupt_requests): [DONE], no finish
                writer.write(b"0\r\n\r\n")
                await writer.drain()
                return True
            if fault == "error200" and i == 0:
                writer.write(chunk('data: {"error": {"message": "The model service connection was interrupted"}}'
                                   '\n\n'))
                writer.write(b"0\r\n\r\n")
                await writer.drain()
                return True
        end = {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}] if chat else
               [{"index": 0, "text": "", "finish_reason": finish}], "model": model}
        writer.write(chunk(f"data: {json.dumps(end)}\n\n"))
        writer.write(chunk(f"data: {json.dumps({'choices': [], 'usage': usage, 'model': model})}\n\n"))
        writer.write(chunk("data: [DONE]\n\n"))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    @staticmethod
    def _completion(chat: bool, answer: str, finish: str, usage: dict[str, Any],
                    model: str = "fake-model") -> dict[str, Any]:
        if chat:
            choice = {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": finish}
        else:
            choice = {"index": 0, "text": answer, "finish_reason": finish}
        return {"id": "x", "object": "chat.completion" if chat else "text_completion", "model": model,
                "choices": [choice], "usage": usage}


def main() -> None:  # pragma: no cover - manual use: python tests/fake_openai_server.py PORTFILE [LATENCY]
    import sys

    srv = FakeServer(latency_s=float(sys.argv[2]) if len(sys.argv) > 2 else 0.0)
    with srv:
        with open(sys.argv[1], "w") as fh:
            fh.write(str(srv.port))
        while True:
            time.sleep(3600)


if __name__ == "__main__":  # pragma: no cover
    main()
