"""The ``serve`` command: the models over HTTP (``structperc.serve``), under gunicorn with uvicorn's
workers. The models are loaded here, in the process that becomes gunicorn's master, so that a model
that does not load is a user error (one line, status 2) before anything listens."""
import os
import shutil
import socket
from pathlib import Path
from typing import Annotated, Optional

import typer

from structperc import __version__
from structperc.errors import ConfigError

SERVE_EPILOG = """Examples (port 8080; with --token-file add -H "Authorization: Bearer $(cat token.txt)"):

  structperc serve en-ewt-upos nl-conll2002-ner --port 8080 --workers 2

  curl -s localhost:8080/v1/tag -H 'Content-Type: application/json' \\
    -d '{"model": "en-ewt-upos", "text": "Mary left early."}'

  curl -s localhost:8080/v1/tag -H 'Content-Type: application/json' \\
    -d '{"model": "nl-conll2002-ner", "sentences": [["Jan", "woont", "in", "Gent", "."]], "k": 2, "marginals": true}'

  curl -s localhost:8080/v1/explain -H 'Content-Type: application/json' \\
    -d '{"model": "en-ewt-upos", "tokens": ["Mary", "left"], "token": 1}'

  curl -s localhost:8080/v1/models

  curl -s localhost:8080/process -d model=en-ewt-upos -d tokenizer= -d tagger= --data-urlencode 'data=Mary left.'

  curl -s localhost:8080/models

  curl -s localhost:8080/live; curl -s localhost:8080/ready

  curl -s localhost:8080/metrics; curl -s localhost:8080/openapi.json

  open http://localhost:8080/ in a browser: paste text, pick a model, see the tags and entities
"""


SERVER_MODULES = ("starlette", "uvicorn", "uvicorn_worker", "gunicorn", "prometheus_client", "multipart")


def check_server_installed():
    """A ConfigError naming the extra to install when a package of the server is missing."""
    import importlib.util

    missing = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(f"structperc serve needs {', '.join(missing)}: pip install 'structperc[serve]'")


def check_port_free(host, port):
    """A ConfigError when ``host:port`` cannot be bound (in use, or not an address of this machine)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            raise ConfigError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None


def read_token(path: Path) -> str:
    token = path.read_text(encoding="utf-8").strip()
    if not token or any(c.isspace() for c in token):
        raise ConfigError(f"{path}: the token file must hold one token (no white space)")
    return token


def serve_command(
    models: Annotated[list[str], typer.Argument(
        help="Model files (.npz) or model names (structperc models list); the first is the default model.")],
    host: str = typer.Option("127.0.0.1", help="Address to listen on (0.0.0.0: every interface)."),
    port: int = typer.Option(8080, min=0, max=65535, help="Port to listen on."),
    workers: int = typer.Option(1, min=1, help="Worker processes (they share the models' memory)."),
    max_body: int = typer.Option(1 << 20, "--max-body", min=1, help="Largest request body, in bytes (413)."),
    max_tokens: int = typer.Option(1000, "--max-tokens", min=1, help="Most tokens in one sentence (413)."),
    timeout: float = typer.Option(10.0, min=0.001, help="Seconds to answer a request in (504)."),
    body_seconds: float = typer.Option(10.0, "--body-seconds", min=0.001,
                                       help="Seconds to receive a request's body in (408)."),
    queue: int = typer.Option(64, min=1, help="Requests a worker holds, waiting or running; "
                                              "one more is answered 503 with Retry-After."),
    token_file: Optional[Path] = typer.Option(None, "--token-file", exists=True, dir_okay=False,
                                              help="Require Authorization: Bearer TOKEN, the token read from "
                                                   "this file (401 without; /live, /ready and the page are open)."),
    cors_origin: Optional[list[str]] = typer.Option(None, "--cors-origin",
                                                    help="Allow browsers on this origin to call the API "
                                                         "(repeatable; none by default)."),
    reload_on_change: bool = typer.Option(False, "--reload-on-change",
                                          help="Swap in a model whose file changes, as SIGHUP does."),
    watch_seconds: float = typer.Option(1.0, "--watch-seconds", min=0.05, hidden=True),
    graceful_seconds: int = typer.Option(30, "--graceful-seconds", min=0,
                                           help="On SIGTERM or a swap, how long a worker may finish its requests."),
    mirror: Optional[Path] = typer.Option(None, help="Copy a named model's corpus from this mirror when it must be "
                                                     "built (default $STRUCTPERC_MIRROR)."),
    access_log: bool = typer.Option(False, "--access-log", help="Log every request on stderr."),
):
    """Serve models over HTTP: JSON (/v1/tag), UDPipe's REST API (/process), a page at /, Prometheus'
    /metrics, /live and /ready. The models are loaded and their kernels loaded once, before the worker
    processes fork. SIGTERM finishes the requests in flight, then exits; SIGHUP swaps in the model files
    that changed (a file that fails its checksum is refused and the old model stays)."""
    check_server_installed()  # before any module of the server imports one of its packages
    from structperc.serve.limits import Limits
    from structperc.serve.metrics import multiprocess_folder

    check_port_free(host, port)
    token = read_token(token_file) if token_file is not None else None
    folder = multiprocess_folder()  # before prometheus_client is imported
    master = os.getpid()
    try:
        from structperc.serve.app import build_app
        from structperc.serve.master import ServeApplication
        from structperc.serve.metrics import Metrics
        from structperc.serve.precompile import compile_side_by_side
        from structperc.serve.served import Models, read_served, warm

        say = lambda line: typer.echo(line, err=True)  # noqa: E731
        read = [read_served(source, report=say, mirror=mirror) for source in models]
        compile_side_by_side(read)  # numba's cache cold: the kernels compile here and in child processes
        for one in read:
            warm(one)
        served = Models(read)
        limits = Limits(max_body=max_body, body_seconds=body_seconds, max_tokens=max_tokens, timeout=timeout,
                        queue=queue)
        app = build_app(served, limits, Metrics(), token, cors_origin or (), __version__)
        options = {"bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}", "workers": workers,
                   "worker_class": "structperc.serve.worker.ServeWorker", "preload_app": True,
                   "graceful_timeout": graceful_seconds, "keepalive": 5, "loglevel": "warning",
                   "accesslog": "-" if access_log else None, "errorlog": "-", "proc_name": "structperc-serve"}
        ServeApplication(app, options, served, watch_seconds=watch_seconds if reload_on_change else None).run()
    finally:
        if os.getpid() == master:  # a forked worker leaves through here too
            shutil.rmtree(folder, ignore_errors=True)
