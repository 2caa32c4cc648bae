"""How a worker takes new connections from the listening socket that all workers share: the worker
with the fewest open connections takes the next one.

Every worker waits on the same socket, and the kernel wakes them all when a client connects; the
first to call ``accept`` gets the connection. Left to that race, a worker that is busy wins it: it
is already running and sees the socket ready between two requests, while an idle worker must first
be scheduled. So a few clients with kept-alive connections all end on one worker, and the others
stay idle however many there are. Here a worker that holds open connections waits before it
accepts, ``DELAY_PER_CONNECTION`` for each (at most ``MAX_DELAY``); one with fewer connections waits
less and takes the connection first. After its wait a worker takes the client if it still waits,
so no client waits longer than ``MAX_DELAY`` for a worker.

The accepted socket goes to the loop's ``connect_accepted_socket`` with the server's own protocol,
as the loop's own server would hand it over.
"""
from __future__ import annotations

import asyncio
import errno
import logging
import socket

DELAY_PER_CONNECTION = 0.001  # seconds a worker waits per open connection before it accepts
MAX_DELAY = 0.01
PAUSE_ON_EXHAUSTION = 1.0  # seconds without accepting when the process is out of descriptors or memory
EXHAUSTED = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}

logger = logging.getLogger("structperc.serve")


class Acceptor:
    """Accepts the connections of ``sockets`` on ``loop``, each handed to a new ``protocol_factory()``;
    ``connections``: the worker's open connections (a sized collection that the protocols keep)."""

    def __init__(self, loop, sockets, protocol_factory, connections, ssl=None):
        self.loop, self.sockets, self.protocol_factory = loop, list(sockets), protocol_factory
        self.connections, self.ssl = connections, ssl
        self.timers, self.handing = {}, set()
        self.accepting = False

    def start(self):
        self.accepting = True
        for sock in self.sockets:
            sock.setblocking(False)
            self.watch(sock)

    def stop(self):
        """Accept no more: the connections already accepted go on."""
        self.accepting = False
        for timer in self.timers.values():
            timer.cancel()
        self.timers.clear()
        for sock in self.sockets:
            try:
                self.loop.remove_reader(sock.fileno())
            except (ValueError, OSError):  # the socket is closed already
                pass

    def pause(self, sock, seconds, then):
        """Stop watching ``sock`` for ``seconds``, then call ``then(sock)``."""
        def resume():
            del self.timers[sock.fileno()]
            then(sock)

        self.loop.remove_reader(sock.fileno())
        self.timers[sock.fileno()] = self.loop.call_later(seconds, resume)

    def watch(self, sock):
        if self.accepting:
            self.loop.add_reader(sock.fileno(), self.ready, sock)

    def ready(self, sock):
        """A client waits on ``sock``: an idle worker takes it; one that holds connections (or is
        handing one over) waits its turn first (``turn``). One client at a time: the next is weighed
        with the counts that this one changed."""
        held = len(self.connections) + len(self.handing)
        if held:
            self.pause(sock, min(MAX_DELAY, DELAY_PER_CONNECTION * held), self.turn)
        else:
            self.accept(sock)

    def turn(self, sock):
        """The wait is over: take the client that waited, unless another worker took it, and watch
        ``sock`` again."""
        if self.accepting and self.accept(sock):
            self.watch(sock)

    def accept(self, sock) -> bool:
        """Accept the client that waits, if one still does; False when the process is out of
        descriptors or memory (``sock`` is then paused for ``PAUSE_ON_EXHAUSTION``)."""
        try:
            conn, _ = sock.accept()
        except (BlockingIOError, InterruptedError, ConnectionAbortedError):
            return True  # no one waits (another worker took the client, or it left)
        except OSError as error:
            if error.errno not in EXHAUSTED:
                raise
            logger.error("structperc serve: cannot accept a connection (%s); pausing %.0f s", error,
                         PAUSE_ON_EXHAUSTION)
            self.pause(sock, PAUSE_ON_EXHAUSTION, self.watch)
            return False
        self.hand_over(conn)
        return True

    def hand_over(self, conn: socket.socket):
        conn.setblocking(False)
        task = self.loop.create_task(self.loop.connect_accepted_socket(self.protocol_factory, conn, ssl=self.ssl))
        self.handing.add(task)
        task.add_done_callback(lambda done: self.handed(done, conn))

    def handed(self, task: asyncio.Task, conn: socket.socket):
        self.handing.discard(task)
        if task.cancelled() or task.exception() is not None:
            if not task.cancelled():
                logger.error("structperc serve: a connection could not be set up: %s", task.exception())
            conn.close()
