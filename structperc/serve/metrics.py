"""Prometheus' metrics of the server, summed over gunicorn's workers (prometheus-client's multiprocess
mode: each worker writes its values to files in ``PROMETHEUS_MULTIPROC_DIR``, which ``/metrics`` reads).

The folder must be named in the environment before prometheus_client is imported: ``structperc serve``
makes a fresh one (``multiprocess_folder``) and imports this module only after. Routes are labelled by
their path for the known routes only, so that random paths cannot grow the metrics without bound.
"""
import os
import tempfile
import time

ROUTES = ("/v1/tag", "/v1/explain", "/v1/models", "/process", "/models", "/live", "/ready", "/metrics", "/",
          "/page.js", "/page.css", "/openapi.json")


def multiprocess_folder() -> str:
    """A new, empty folder for the workers' metric files, named in ``PROMETHEUS_MULTIPROC_DIR``."""
    folder = tempfile.mkdtemp(prefix="structperc-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder
    return folder


class Metrics:
    """The counters and the histogram; ``exposition()`` is the text of ``/metrics``."""

    def __init__(self):
        from prometheus_client import Counter, Histogram

        self.requests = Counter("structperc_requests", "HTTP requests answered, by route and status",
                                ["route", "status"])
        self.seconds = Histogram("structperc_request_seconds", "Time to answer a request, by route", ["route"],
                                 buckets=(.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10))
        self.tokens = Counter("structperc_tokens", "Tokens tagged, by model", ["model"])

    def exposition(self) -> tuple[bytes, str]:
        from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST

    def middleware(self, app):
        """ASGI middleware counting every answer by route and status, and timing it."""
        metrics = self

        async def counted(scope, receive, send):
            if scope["type"] != "http":
                return await app(scope, receive, send)
            route = scope["path"] if scope["path"] in ROUTES else "other"
            start = time.perf_counter()
            answered = False

            async def counting_send(message):
                nonlocal answered
                if message["type"] == "http.response.start":  # counted before the client can see it
                    metrics.requests.labels(route, str(message["status"])).inc()
                    answered = True
                await send(message)

            try:
                await app(scope, receive, counting_send)
            finally:
                if not answered:  # the app raised before answering: ``errors.Faults`` answers 500
                    metrics.requests.labels(route, "500").inc()
                metrics.seconds.labels(route).observe(time.perf_counter() - start)

        return counted


def worker_exited(pid: int) -> None:
    """gunicorn's child_exit hook: the worker's live gauges go (its counters stay summed)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid)
