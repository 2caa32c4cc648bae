"""The acceptor (``serve.accepting``): of the workers that wait on one listening socket, the one that
holds the fewest connections takes the next client. Two acceptors stand for two workers here: each
watches its own descriptor of one listening socket on real sockets of 127.0.0.1, as two processes
that forked from one master would."""
import asyncio
import socket

import pytest

from structperc.serve.accepting import MAX_DELAY, Acceptor


class Held(asyncio.Protocol):
    """A protocol that keeps its connection in ``held`` while it is open, as uvicorn's do."""

    def __init__(self, held):
        self.held = held

    def connection_made(self, transport):
        self.transport = transport
        self.held.add(self)

    def connection_lost(self, exc):
        self.held.discard(self)


async def contest(held_first: int, held_second: int, clients: int = 1):
    """Two acceptors on one listening socket, holding ``held_first`` and ``held_second`` connections
    already; ``clients`` connect one at a time. Returns how many each took."""
    loop = asyncio.get_running_loop()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    helds = [set(range(-held_first, 0)), set(range(-held_second, 0))]  # stand-ins for open connections
    taken = [0, 0]

    def factory(k):
        def make():
            taken[k] += 1
            return Held(helds[k])
        return make

    # the first acceptor registers first, so that without the policy its callback runs first and wins
    acceptors = [Acceptor(loop, [listener.dup()], factory(k), helds[k]) for k in (0, 1)]
    for acceptor in acceptors:
        acceptor.start()
    opened = []
    try:
        for _ in range(clients):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            opened.append(writer)
            for _ in range(100):  # bounded: until one acceptor has handed the connection over
                await asyncio.sleep(MAX_DELAY / 2)
                if sum(taken) == len(opened):
                    break
            await asyncio.sleep(MAX_DELAY)  # the clients come apart: each waits no longer than it
        return taken
    finally:
        for acceptor in acceptors:
            acceptor.stop()
            for sock in acceptor.sockets:
                sock.close()
        for writer in opened:
            writer.close()
        listener.close()


@pytest.mark.parametrize("held_first, held_second, winner", [(3, 0, 1), (0, 3, 0), (5, 1, 1), (1, 6, 0)])
def test_the_acceptor_that_holds_fewer_connections_takes_the_client(held_first, held_second, winner):
    taken = asyncio.run(contest(held_first, held_second))
    assert taken[winner] == 1 and taken[1 - winner] == 0, taken


@pytest.mark.parametrize("held_first, held_second, clients, expected", [(3, 0, 2, [0, 2]), (6, 0, 5, [0, 5]),
                                                                       (0, 4, 6, [5, 1])])
def test_a_worker_that_waited_and_lost_still_waits_for_the_next_client(held_first, held_second, clients,
                                                                        expected):
    """The one that holds more waits its turn for every client, not only for the first it waited for."""
    assert asyncio.run(contest(held_first, held_second, clients=clients)) == expected


def test_clients_that_stay_connected_end_shared_evenly():
    taken = asyncio.run(contest(0, 0, clients=8))
    assert sorted(taken) == [4, 4], taken


def test_a_stopped_acceptor_takes_no_client():
    async def run():
        loop = asyncio.get_running_loop()
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        taken = []
        acceptor = Acceptor(loop, [listener], lambda: taken.append(1) or Held(set()), set())
        acceptor.start()
        acceptor.stop()
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.getsockname()[1])
        await asyncio.sleep(0.05)
        writer.close()
        listener.close()
        return taken

    assert asyncio.run(run()) == []
