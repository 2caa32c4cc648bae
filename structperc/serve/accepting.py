"""How a worker takes new connections from the listening socket that all workers share: the worker
with the fewest open connections takes the next one.

Every worker waits on the same socket, and the kernel wakes them all when a client connects; the
first to call ``accept`` gets the connection. Left to that race, a worker that is busy wins it: it
is already running and sees the socket ready between two requests, while an idle worker must first
be scheduled. So a few clients with kept-alive connections all end on one worker, and the others
stay idle however many there are. Here a worker that holds open connections waits before it
accepts, ``DELAY_PER_CONNECTION`` for each (at most ``MAX_DELAY``); one with fewer connections waits
less and takes the connection first. A worker accepts after its wait whoever is still waiting, so
no connection waits longer than ``MAX_DELAY``.

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
        self.waited = {}  # fd -> the worker has waited its turn for the connection now ready
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

    def watch(self, sock):
        self.timers.pop(sock.fileno(), None)
        if self.accepting:
            self.loop.add_reader(sock.fileno(), self.ready, sock)

    def pause(self, sock, seconds):
        self.loop.remove_reader(sock.fileno())
        self.timers[sock.fileno()] = self.loop.call_later(seconds, self.watch, sock)

    def ready(self, sock):
        """A client waits on ``sock``: wait one's turn if this worker holds connections, else accept."""
        held = len(self.connections)
        if held and not self.waited.get(sock.fileno()):
            self.waited[sock.fileno()] = True
            self.pause(sock, min(MAX_DELAY, DELAY_PER_CONNECTION * held))
            return
        self.waited[sock.fileno()] = False
        # an idle worker takes every client that waits; a busy one, after its wait, the first only
        for _ in range(1 if held else 64):
            try:
                conn, _ = sock.accept()
            except (BlockingIOError, InterruptedError):
                return  # another worker took it
            except ConnectionAbortedError:
                continue
            except OSError as error:
                if error.errno not in EXHAUSTED:
                    raise
                logger.error("structperc serve: cannot accept a connection (%s); pausing %.0f s", error,
                             PAUSE_ON_EXHAUSTION)
                self.pause(sock, PAUSE_ON_EXHAUSTION)
                return
            self.hand_over(conn)

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
