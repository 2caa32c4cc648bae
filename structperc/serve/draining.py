"""A worker that is told to stop (SIGTERM, or the old workers of a SIGHUP swap) first drains for
``DRAIN_SECONDS``: it goes on serving, but every answer says ``Connection: close``, so that each client
closes its kept-alive connection itself after its next request and opens the next one to a worker that
stays. Only then does uvicorn stop, finishing the requests in flight and closing the connections left
idle. Without it, a client that reuses an idle connection at the moment the worker closes it fails
(``benchmarks/serve.md``: 1 to 3 failed requests of about 40,000 over two swaps)."""
import threading

DRAIN_SECONDS = 1.0
DRAINING = threading.Event()  # per process: set in a worker told to stop


class Draining:
    """ASGI middleware: ``Connection: close`` on every answer once the worker drains."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def closing_send(message):
            if message["type"] == "http.response.start" and DRAINING.is_set():
                message = {**message, "headers": [*message.get("headers", []), (b"connection", b"close")]}
            await send(message)

        await self.app(scope, receive, closing_send)
