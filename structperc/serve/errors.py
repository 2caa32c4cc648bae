"""Errors over HTTP: a client's error is a JSON body ``{"error": {"kind", "message"}}`` with its 4xx; a
bug is a 500 whose body holds only an id, the id logged beside the traceback (``Faults``)."""
import logging
import traceback
import uuid

from starlette.responses import JSONResponse

LOG = logging.getLogger("uvicorn.error")  # gunicorn's error log in a worker (uvicorn_worker wires it)


class ApiError(Exception):
    """A request the server refuses: ``status`` (4xx, or 503/504 for load), ``kind`` (a word a client can
    test), ``message`` (for a person); ``headers`` (e.g. Retry-After)."""

    def __init__(self, status, kind, message, headers=None):
        super().__init__(message)
        self.status, self.kind, self.message, self.headers = status, kind, message, headers or {}


def error_response(status, kind, message, headers=None):
    return JSONResponse({"error": {"kind": kind, "message": message}}, status_code=status, headers=headers)


def api_error_response(error: ApiError):
    return error_response(error.status, error.kind, error.message, error.headers)


# Starlette's own HTTP errors (no route, a wrong method) under this project's kinds
HTTP_KINDS = {404: "not_found", 405: "method_not_allowed", 400: "bad_request", 413: "too_large"}


class Faults:
    """ASGI middleware, outermost: an exception that escapes the app is logged with a new id beside its
    traceback, and the client gets a 500 whose body names only the id (or, when the answer had begun,
    the connection is closed). The server goes on serving."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def tracking_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:  # noqa: BLE001  a bug of ours: logged, never shown to the client
            error_id = uuid.uuid4().hex[:16]
            LOG.error("internal error %s on %s %s\n%s", error_id, scope.get("method"), scope.get("path"),
                      traceback.format_exc())
            if not started:
                response = error_response(500, "internal", f"internal error {error_id}; the server's log has "
                                                           f"its details", {"X-Error-Id": error_id})
                await response(scope, receive, send)
