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


def logged_bug(error, method, path) -> str:
    """Log ``error`` (being handled) with its traceback under a new id, once; the id."""
    error_id = getattr(error, "structperc_error_id", None)
    if error_id is None:
        error_id = uuid.uuid4().hex[:16]
        LOG.error("internal error %s on %s %s\n%s", error_id, method, path, traceback.format_exc())
        error.structperc_error_id = error_id
    return error_id


def bug_response(error_id):
    return error_response(500, "internal", f"internal error {error_id}; the server's log has its details",
                          {"X-Error-Id": error_id})


async def internal_error(request, error):
    """Starlette's handler of any other exception (its ServerErrorMiddleware answers with it, then raises
    the exception again, for ``Faults``)."""
    return bug_response(logged_bug(error, request.method, request.url.path))


class Faults:
    """ASGI middleware, outermost: an exception that escapes the app is logged with a new id beside its
    traceback (once: ``internal_error`` may have logged it), and the client gets a 500 whose body names
    only the id (or, when the answer had begun, the connection is closed). It goes no further, so the
    server goes on serving and logs nothing twice."""

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
        except Exception as error:  # noqa: BLE001  a bug of ours: logged, never shown to the client
            error_id = logged_bug(error, scope.get("method"), scope.get("path"))
            if not started:
                await bug_response(error_id)(scope, receive, send)
