"""gunicorn's worker for the app: uvicorn's (``uvicorn_worker``) on asyncio and httptools, with the
lifespan on (each worker warms up before ``/ready`` says 200), new connections taken by the worker
that holds the fewest (``accepting``), and a drain before it stops (``draining``)."""
import asyncio
import threading

from uvicorn.server import Server
from uvicorn_worker import UvicornWorker

from structperc.serve.accepting import Acceptor
from structperc.serve.draining import DRAIN_SECONDS, DRAINING


class DrainingServer(Server):
    """uvicorn's server that accepts through an ``Acceptor`` (least connections first) and, on its first
    stop signal, drains for ``DRAIN_SECONDS`` before stopping; a second signal stops it at once, as
    uvicorn does."""

    acceptor = None

    async def startup(self, sockets=None):
        await super().startup(sockets=[])  # the lifespan only: the sockets are the acceptor's
        config = self.config

        def protocol():  # the one uvicorn's own server would make
            return config.http_protocol_class(config=config, server_state=self.server_state,
                                              app_state=self.lifespan.state)

        self.acceptor = Acceptor(asyncio.get_running_loop(), sockets or [], protocol,
                                 self.server_state.connections, ssl=config.ssl)
        self.acceptor.start()

    async def shutdown(self, sockets=None):
        self.stop_accepting()
        await super().shutdown(sockets=sockets)

    def handle_exit(self, sig, frame):
        if DRAINING.is_set():
            return super().handle_exit(sig, frame)
        DRAINING.set()
        # stop accepting at once: a new connection goes to a worker that stays, never to one that closes it
        # unanswered when the drain ends; the connections already open drain (``draining``)
        try:
            asyncio.get_running_loop().call_soon_threadsafe(self.stop_accepting)
        except RuntimeError:  # no loop runs in this thread: uvicorn's own stop closes the listeners
            pass
        threading.Timer(DRAIN_SECONDS, super().handle_exit, (sig, frame)).start()

    def stop_accepting(self):
        if self.acceptor is not None:
            self.acceptor.stop()


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
