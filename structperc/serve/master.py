"""gunicorn's master, with the app built here before the workers fork (``ServeApplication``).

gunicorn's own signals do the rest: SIGTERM stops accepting, lets each worker finish the requests in
flight (``graceful_timeout``) and exits; SIGHUP calls ``ServeApplication.reload``, which reads again the
changed model files (``served.Models.reload``; a file that fails its checksum is refused, the old model
stays), and then forks new workers from the master, which now holds the new models, before it stops
the old ones gracefully: the listening socket stays open throughout, so no request fails.
``--reload-on-change`` sends the master SIGHUP itself when a model file changes (``watch``).
"""
from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time

from gunicorn.app.base import BaseApplication


class ServeApplication(BaseApplication):
    """gunicorn on an app already built (``app``), with ``options`` (gunicorn's settings) and ``models``
    (a ``served.Models``) to reload on SIGHUP."""

    def __init__(self, app, options: dict, models, watch_seconds: float | None = None):
        self.application, self.options, self.models = app, options, models
        self.watch_seconds = watch_seconds
        super().__init__()

    def load_config(self):
        for key, value in self.options.items():
            self.cfg.set(key, value)
        self.cfg.set("when_ready", self.when_ready)
        self.cfg.set("pre_fork", pre_fork)
        self.cfg.set("child_exit", child_exit)

    def load(self):
        return self.application

    def reload(self):
        gc.unfreeze()  # the old models' objects may be collected again once they are let go
        super().reload()
        for line in self.models.reload():
            print(f"structperc serve: {line}", file=sys.stderr, flush=True)

    def when_ready(self, server):
        host, port = server.LISTENERS[0].sock.getsockname()[:2]
        print(f"structperc serve: {', '.join(self.models.names())} on http://{host}:{port}/ "
              f"({self.cfg.workers} worker{'s' if self.cfg.workers > 1 else ''}; pid {os.getpid()})",
              file=sys.stderr, flush=True)
        if self.watch_seconds:
            threading.Thread(target=watch, args=(self.models, self.watch_seconds), daemon=True,
                             name="model-watch").start()


def pre_fork(server, worker):
    """Move every object the master holds (the models, the modules) out of the collector's reach before
    a worker forks: a collection in the worker would otherwise write to each object's header, and so
    copy every page of the master's objects into the worker's private memory."""
    gc.freeze()


def child_exit(server, worker):
    from structperc.serve.metrics import worker_exited

    worker_exited(worker.pid)


def watch(models, every: float):
    """Send this process SIGHUP when a model file changes (its size or modification time, then its
    sha256: ``Models.changed``), at most once every ``every`` seconds; runs until the master exits."""
    def signature():
        out = []
        for served in list(models.by_name.values()):
            for path in served.files:
                try:
                    stat = os.stat(path)
                    out.append((path, stat.st_size, stat.st_mtime_ns))
                except OSError:
                    out.append((path, None, None))
        return out

    seen = signature()
    while True:
        time.sleep(every)
        now = signature()
        if now != seen:
            time.sleep(every)  # let a writer finish (``utils.atomic`` renames; a copy may not)
            seen = signature()
            if models.changed():
                os.kill(os.getpid(), signal.SIGHUP)
