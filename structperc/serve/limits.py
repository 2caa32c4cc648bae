"""What one request may cost, each with a flag of ``structperc serve`` and a default (``Limits``):

- its body: at most ``max_body`` bytes (413, before a byte is read when Content-Length says so), all of
  it received within ``body_seconds`` (408: a slow client holds no worker for long);
- its sentences: at most ``max_tokens`` tokens each (413);
- its time: an answer within ``timeout`` seconds of arriving, else 504 (a job still waiting is dropped;
  one already running finishes, unseen);
- the queue: each worker tags on one thread (``TagQueue``), and at most ``queue`` requests wait or run
  there; one more is answered 503 with Retry-After at once, not kept waiting.

Access: ``BearerAuth`` requires ``Authorization: Bearer TOKEN`` (401) on every path but the probes and
the page's static files.
"""
from __future__ import annotations

import asyncio
import hmac
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from structperc.serve.errors import ApiError, error_response

MIB = 1 << 20


@dataclass(frozen=True)
class Limits:
    max_body: int = MIB
    body_seconds: float = 10.0
    max_tokens: int = 1000
    timeout: float = 10.0
    queue: int = 64
    max_k: int = 20


async def read_body(request, limits: Limits) -> bytes:
    """The request's body, at most ``limits.max_body`` bytes (413) received within ``limits.body_seconds``
    (408)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise ApiError(400, "bad_request", "Content-Length is not a number")
        if int(declared) > limits.max_body:
            raise ApiError(413, "too_large", f"the body has {int(declared):,} bytes; at most {limits.max_body:,} "
                                             f"are taken (--max-body)")
    chunks, size = [], 0

    async def receive_all():
        nonlocal size
        async for chunk in request.stream():
            size += len(chunk)
            if size > limits.max_body:
                raise ApiError(413, "too_large", f"the body has more than {limits.max_body:,} bytes (--max-body)")
            chunks.append(chunk)

    try:
        await asyncio.wait_for(receive_all(), limits.body_seconds)
    except asyncio.TimeoutError:
        raise ApiError(408, "timeout", f"the body did not arrive within {limits.body_seconds:g} s") from None
    return b"".join(chunks)


class TagQueue:
    """One tagging thread per worker process, and a bound on the requests waiting for it or running.

    The thread is started on first use, in the worker: a thread of the master would not survive the
    fork. The models are not shared between threads."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.waiting = 0
        self._executor = None
        self._pid = None

    def executor(self):
        if self._pid != os.getpid():
            self._executor, self._pid = ThreadPoolExecutor(1, thread_name_prefix="tagger"), os.getpid()
        return self._executor

    async def run(self, job, deadline: float):
        """``job()`` on the tagging thread, its result; 503 when the queue is full, 504 past ``deadline``
        (``time.monotonic``)."""
        if self.waiting >= self.capacity:
            raise ApiError(503, "busy", f"{self.waiting} requests are already queued here (--queue); try again",
                           {"Retry-After": "1"})

        def guarded():
            if time.monotonic() > deadline:  # waited its whole time in the queue: nobody awaits it now
                return None
            return job()

        self.waiting += 1
        try:
            future = asyncio.wrap_future(self.executor().submit(guarded))
            try:
                return await asyncio.wait_for(asyncio.shield(future), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                raise ApiError(504, "timeout", "the request took longer than the time limit (--timeout)") from None
        finally:
            self.waiting -= 1


# paths that answer without a token: the probes, and the page's static parts (which hold no data)
OPEN_PATHS = ("/live", "/ready", "/", "/page.js", "/page.css")


class BearerAuth:
    """ASGI middleware: ``Authorization: Bearer TOKEN`` on every path but ``OPEN_PATHS``, else 401."""

    def __init__(self, app, token: str):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"] not in OPEN_PATHS:
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                response = error_response(401, "unauthorized", "this server needs Authorization: Bearer TOKEN",
                                          {"WWW-Authenticate": "Bearer"})
                return await response(scope, receive, send)
        return await self.app(scope, receive, send)
