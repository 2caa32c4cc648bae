"""gunicorn's worker for the app: uvicorn's (``uvicorn_worker``) on asyncio and httptools, with the
lifespan on (each worker warms up before ``/ready`` says 200), and a drain before it stops
(``draining``)."""
import threading

from uvicorn.server import Server
from uvicorn_worker import UvicornWorker

from structperc.serve.draining import DRAIN_SECONDS, DRAINING


class DrainingServer(Server):
    """uvicorn's server that, on its first stop signal, drains for ``DRAIN_SECONDS`` before stopping; a
    second signal stops it at once, as uvicorn does."""

    def handle_exit(self, sig, frame):
        if DRAINING.is_set():
            return super().handle_exit(sig, frame)
        DRAINING.set()
        threading.Timer(DRAIN_SECONDS, super().handle_exit, (sig, frame)).start()


class ServeWorker(UvicornWorker):
    CONFIG_KWARGS = {"loop": "asyncio", "http": "httptools", "lifespan": "on", "server_header": False}

    async def _serve(self) -> None:
        import sys

        from gunicorn.arbiter import Arbiter

        self.config.app = self.wsgi
        server = DrainingServer(config=self.config)
        self._install_sigquit_handler()
        await server.serve(sockets=self.sockets)
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)
