"""The ASGI app: Starlette's routes over the served models (``served.Models``), the limits, the errors and
the metrics. ``build_app`` runs in gunicorn's master, before the workers fork; each worker then tags
its warm-up sentence once on its own tagging thread before ``/ready`` answers 200.

Routes: ``POST /v1/tag``, ``POST /v1/explain``, ``GET /v1/models``, UDPipe's ``/process`` and
``/models`` (``udpipe``), ``GET /live``, ``GET /ready``, ``GET /metrics``, ``GET /openapi.json``, and
the page (``GET /``, ``/page.js``, ``/page.css``).
"""
from __future__ import annotations

import contextlib
import time
from importlib.resources import files

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
import orjson
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from structperc.serve import payloads, tagging, udpipe
from structperc.serve.draining import Draining
from structperc.serve.errors import (HTTP_KINDS, ApiError, Faults, api_error_response, error_response,
                                     internal_error)
from structperc.serve.limits import BearerAuth, Limits, TagQueue, read_body
from structperc.serve.openapi import openapi_schema
from structperc.serve.served import WARM_UP_TEXT

PAGE_FILES = {"/": ("index.html", "text/html; charset=utf-8"), "/page.js": ("page.js", "text/javascript"),
              "/page.css": ("page.css", "text/css")}
# the page loads nothing from elsewhere, and runs no inline script
PAGE_POLICY = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"


class TaggedResponse(JSONResponse):
    """The JSON of a tagging's answer, written by orjson: the tokens of a document's sentences are the
    bulk of a large answer, and orjson writes them in a fraction of the time of the standard library's
    encoder."""

    def render(self, content) -> bytes:
        return orjson.dumps(content)


def page_asset(name: str) -> bytes:
    return files("structperc.serve").joinpath("page", name).read_bytes()


def check_lengths(corpus, limits: Limits):
    lengths = tagging.sentence_lengths(corpus)
    if len(lengths) and lengths.max() > limits.max_tokens:
        raise ApiError(413, "too_many_tokens", f"a sentence of {int(lengths.max())} tokens; at most "
                                               f"{limits.max_tokens} a sentence (--max-tokens)")


def n_tokens(corpus) -> int:
    return int(corpus.sentence_offsets[-1])


async def tag_endpoint(request):
    state = request.app.state
    deadline = time.monotonic() + state.limits.timeout
    payloads.require_type(request, "application/json")
    payload = payloads.parse_json(await read_body(request, state.limits))
    served, text, sentences, options = payloads.tag_request(payload, state.models, state.limits)

    def corpus():
        made = tagging.text_corpus(text) if text is not None else tagging.tokens_corpus(sentences)
        check_lengths(made, state.limits)
        return made

    size = len(text) if text is not None else sum(len(token) + 1 for tokens in sentences for token in tokens)
    sentences_out, count = await state.queue.tag(served, options, corpus, text, deadline,
                                                 inline=size <= state.limits.inline_chars)
    state.metrics.tokens.labels(served.name).inc(count)
    return TaggedResponse({"model": served.name, "sentences": sentences_out})


async def explain_endpoint(request):
    state = request.app.state
    deadline = time.monotonic() + state.limits.timeout
    payloads.require_type(request, "application/json")
    payload = payloads.parse_json(await read_body(request, state.limits))
    served, tokens, token = payloads.explain_request(payload, state.models, state.limits)
    explanation = await state.queue.run(lambda: tagging.explain_token(served, tokens, token), deadline)
    return JSONResponse({"model": served.name, **explanation})


async def models_endpoint(request):
    models = request.app.state.models
    return JSONResponse({"models": [models.get(name).description for name in models.names()],
                         "default_model": models.default})


async def process_endpoint(request):
    state = request.app.state
    deadline = time.monotonic() + state.limits.timeout
    body = b"" if request.method == "GET" else await read_body(request, state.limits)
    fields = await udpipe.form_fields(request, body)
    served, acknowledgements = udpipe.process_request(fields, state.models)

    def job():
        corpus = udpipe.input_corpus(fields)
        check_lengths(corpus, state.limits)
        return tagging.conllu(served, corpus), n_tokens(corpus)

    result, count = await state.queue.run(job, deadline)
    state.metrics.tokens.labels(served.name).inc(count)
    return TaggedResponse({"model": served.name, "acknowledgements": acknowledgements, "result": result})


async def udpipe_models_endpoint(request):
    return JSONResponse(udpipe.models_answer(request.app.state.models))


async def live_endpoint(request):
    return JSONResponse({"status": "live"})


async def ready_endpoint(request):
    state = request.app.state
    if not state.ready:
        return error_response(503, "not_ready", "loading: the models are not warm yet", {"Retry-After": "1"})
    return JSONResponse({"status": "ready", "models": state.models.names()})


async def metrics_endpoint(request):
    body, media_type = request.app.state.metrics.exposition()
    return Response(body, media_type=media_type)


async def openapi_endpoint(request):
    state = request.app.state
    return JSONResponse(openapi_schema(state.models.names(), state.version))


async def page_endpoint(request):
    name, media_type = PAGE_FILES[request.url.path]
    return Response(page_asset(name), media_type=media_type,
                    headers={"Content-Security-Policy": PAGE_POLICY, "Cache-Control": "no-cache"})


async def api_error_handler(request, error):
    return api_error_response(error)


async def http_error_handler(request, error):
    kind = HTTP_KINDS.get(error.status_code, "http_error")
    message = {404: f"no such path {request.url.path[:100]!r}; see /openapi.json",
               405: f"{request.method} is not allowed on {request.url.path}"}.get(error.status_code, str(error.detail))
    return error_response(error.status_code, kind, message, getattr(error, "headers", None))


def build_app(models, limits: Limits, metrics, token: str | None = None, cors_origins=(), version=""):
    """The app over ``models`` (a ``served.Models``): Faults outermost, then the metrics, the drain of a
    stopping worker, auth and CORS (only when given), then Starlette; ``version`` (the package's) goes
    into the OpenAPI schema."""

    @contextlib.asynccontextmanager
    async def lifespan(app):
        # the worker's first tagging, on its own thread, before it says it is ready
        state = app.state
        state.ready = False
        for name in state.models.names():
            served = state.models.get(name)
            await state.queue.run(lambda s=served: tagging.tag_text(s, WARM_UP_TEXT, tagging.TagOptions()),
                                  time.monotonic() + 600)
        state.ready = True
        yield

    routes = [
        Route("/v1/tag", tag_endpoint, methods=["POST"]),
        Route("/v1/explain", explain_endpoint, methods=["POST"]),
        Route("/v1/models", models_endpoint, methods=["GET"]),
        Route("/process", process_endpoint, methods=["GET", "POST"]),
        Route("/models", udpipe_models_endpoint, methods=["GET"]),
        Route("/live", live_endpoint, methods=["GET"]),
        Route("/ready", ready_endpoint, methods=["GET"]),
        Route("/metrics", metrics_endpoint, methods=["GET"]),
        Route("/openapi.json", openapi_endpoint, methods=["GET"]),
        *[Route(path, page_endpoint, methods=["GET"]) for path in PAGE_FILES],
    ]
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={ApiError: api_error_handler, HTTPException: http_error_handler,
                                        Exception: internal_error})
    app.state.models = models
    app.state.limits = limits
    app.state.version = version
    app.state.metrics = metrics
    app.state.queue = TagQueue(limits.queue)
    app.state.ready = False
    outer = app
    if cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        outer = CORSMiddleware(outer, allow_origins=list(cors_origins), allow_methods=["GET", "POST"],
                               allow_headers=["Authorization", "Content-Type"])
    if token:
        outer = BearerAuth(outer, token)
    return Faults(metrics.middleware(Draining(outer)))
