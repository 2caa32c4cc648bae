"""What one request may cost, each with a flag of ``structperc serve`` and a default (``Limits``):

- its body: at most ``max_body`` bytes (413, before a byte is read when Content-Length says so), all of
  it received within ``body_seconds`` (408: a slow client holds no worker for long);
- its sentences: at most ``max_tokens`` tokens each (413);
- its time: an answer within ``timeout`` seconds of arriving, else 504 (a job still waiting is dropped;
  one already running finishes, unseen);
- the queue: a worker tags a small request on its event loop and a large one on its tagging thread
  (``TagQueue``, which tags the requests waiting together as one batch); at most ``queue`` requests
  wait or run in a worker, and one more is answered 503 with Retry-After at once, not kept waiting.

Access: ``BearerAuth`` requires ``Authorization: Bearer TOKEN`` (401) on every path but the probes and
the page's static files.
"""
from __future__ import annotations

import asyncio
import hmac
import os
import queue
import threading
import time
from concurrent.futures import CancelledError, Future
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
    # a request of at most this many characters of text or tokens is tagged on the event loop
    inline_chars: int = 4096


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
        await within(limits.body_seconds, receive_all())
    except asyncio.TimeoutError:
        raise ApiError(408, "timeout", f"the body did not arrive within {limits.body_seconds:g} s") from None
    return b"".join(chunks)


async def within(seconds: float, awaitable):
    """``awaitable`` awaited for at most ``seconds``, else asyncio.TimeoutError: in the request's own task
    where ``asyncio.timeout`` exists (Python 3.11 on), else in a task of its own (``asyncio.wait_for``,
    which costs a task a request)."""
    if not hasattr(asyncio, "timeout"):
        return await asyncio.wait_for(awaitable, seconds)
    async with asyncio.timeout(seconds):
        return await awaitable


@dataclass
class Job:
    """One request's work for the tagging thread: ``run()`` alone, or, with a ``batch`` key (the model and
    the options), ``corpus()`` (which may raise the request's ApiError) tagged with the other jobs of the
    same key that wait at the same time (``tagging.tag_batch``); ``text``: the text its offsets are into."""
    future: Future
    deadline: float
    run: object = None
    batch: tuple | None = None
    corpus: object = None
    text: str | None = None


class TagQueue:
    """Where a worker tags, and a bound on the requests waiting there or running.

    A small request is tagged on the event loop itself (``tag`` with ``inline``): the requests that
    arrive in one turn of the loop are tagged together as one batch once the loop has read them all,
    with no thread to hand them to, so that the GIL is never passed back and forth for them. A large
    one, and every other job (``run``), goes to the worker's one tagging thread, which takes every
    job that waits when it is free (at most ``batch_jobs``) and tags those of one model and one set
    of options as one corpus: the loop goes on reading and answering meanwhile. Either way each
    kernel is called once for many requests under load, and its fixed cost (a call, its arrays) is
    shared. The thread is started on first use, in the worker: a thread of the master would not
    survive the fork. A model may tag on both threads at once: tagging writes nothing of the model's
    but its lookup caches (built before the fork, by ``served.warm``), and each kernel call allocates
    its own arrays."""

    def __init__(self, capacity: int, batch_jobs: int = 32):
        self.capacity, self.batch_jobs = capacity, batch_jobs
        self.waiting = 0
        self._jobs = None
        self._pid = None
        self._turn = []  # the small jobs of this turn of the loop, each with its asyncio future

    def _submit(self, job: Job):
        if self._pid != os.getpid():
            self._jobs, self._pid = queue.SimpleQueue(), os.getpid()
            threading.Thread(target=self._work, args=(self._jobs,), name="tagger", daemon=True).start()
        self._jobs.put(job)

    def _admit(self):
        if self.waiting >= self.capacity:
            raise ApiError(503, "busy", f"{self.waiting} requests are already queued here (--queue); try again",
                           {"Retry-After": "1"})

    async def _await(self, job: Job):
        self._admit()
        self.waiting += 1
        try:
            self._submit(job)
            try:
                return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(job.future)),
                                              max(0.0, job.deadline - time.monotonic()))
            except (asyncio.TimeoutError, CancelledError):
                raise ApiError(504, "timeout", "the request took longer than the time limit (--timeout)") from None
        finally:
            self.waiting -= 1

    async def run(self, run, deadline: float):
        """``run()`` on the tagging thread, alone; its result. 503 when the queue is full, 504 past
        ``deadline`` (``time.monotonic``)."""
        return await self._await(Job(Future(), deadline, run=run))

    async def tag(self, served, options, corpus, text, deadline: float, inline: bool = False):
        """The sentences of ``corpus()`` tagged by ``served`` (``tagging.tag_batch``) and its token count,
        batched with the jobs of the same model and options: on the event loop when ``inline`` (a small
        request), else on the tagging thread; 503 and 504 as ``run``."""
        job = Job(Future(), deadline, batch=(served, options), corpus=corpus, text=text)
        if not inline:
            return await self._await(job)
        self._admit()
        self.waiting += 1
        try:
            loop = asyncio.get_running_loop()
            answer = loop.create_future()
            self._turn.append((job, answer))
            if len(self._turn) == 1:
                loop.call_soon(self._tag_turn)
            return await answer
        finally:
            self.waiting -= 1

    def _tag_turn(self):
        """Tag the small jobs of this turn of the loop (``tag`` with ``inline``) and answer each; a job
        left unanswered by a bug answers with it (a 500), so that no request waits for ever."""
        turn, self._turn = self._turn, []
        try:
            now = time.monotonic()
            live = []
            for job, answer in turn:
                if answer.cancelled():
                    continue
                if job.deadline <= now:
                    answer.set_exception(ApiError(504, "timeout", "the request took longer than the time limit "
                                                                  "(--timeout)"))
                elif job.future.set_running_or_notify_cancel():
                    live.append(job)
            tag_jobs(live)
        except Exception as error:  # noqa: BLE001  a bug outside any one job's
            for job, _ in turn:
                if not job.future.done():
                    job.future.set_exception(error)
        for job, answer in turn:
            if answer.done() or not job.future.done():
                continue
            if job.future.exception() is not None:
                answer.set_exception(job.future.exception())
            else:
                answer.set_result(job.future.result())

    def _work(self, jobs):
        while True:
            taken = [jobs.get()]
            while len(taken) < self.batch_jobs:
                try:
                    taken.append(jobs.get_nowait())
                except queue.Empty:
                    break
            now = time.monotonic()
            live = [job for job in taken if job.deadline > now and job.future.set_running_or_notify_cancel()]
            for job in live:
                if job.batch is None:
                    settle(job.future, job.run)
            tag_jobs([job for job in live if job.batch is not None])


def tag_jobs(jobs: list[Job]):
    """Tag ``jobs`` (each with a ``batch`` key), those of one model and one set of options as one corpus
    (``tagging.tag_batch``), and settle each job's future: its sentences and token count, or its error."""
    from structperc.serve.tagging import tag_batch

    groups = {}
    for job in jobs:
        groups.setdefault((id(job.batch[0]), job.batch[1]), []).append(job)
    for group in groups.values():
        corpora, ready = [], []
        for job in group:
            try:
                corpora.append(job.corpus())
                ready.append(job)
            except Exception as error:  # noqa: BLE001  the request's own error (an ApiError, a bug)
                job.future.set_exception(error)
        if not ready:
            continue
        served, options = ready[0].batch
        try:
            answers = tag_batch(served, corpora, [job.text for job in ready], options)
        except Exception as error:  # noqa: BLE001  a bug: each request of the batch answers 500
            for job in ready:
                job.future.set_exception(error)
            continue
        for job, corpus, sentences in zip(ready, corpora, answers):
            job.future.set_result((sentences, int(corpus.sentence_offsets[-1])))


def settle(future: Future, run):
    try:
        future.set_result(run())
    except Exception as error:  # noqa: BLE001  handed to the request, which answers it (4xx, or 500 with an id)
        future.set_exception(error)


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
