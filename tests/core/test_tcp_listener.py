"""The HTTP frontends' listening socket: its connections must not wait on Nagle's algorithm.

uvicorn writes a response's head and body separately; with Nagle on, the body waited for the client's
delayed ACK of the head (about 40 ms per 2026-07-28 call). asyncio sets
TCP_NODELAY only on IPPROTO_TCP sockets, and Linux copies the listener's TCP_NODELAY to accepted ones.
"""

from __future__ import annotations

import socket

from mcpsqueeze.transports import tcp_listener


def test_connections_accepted_by_the_frontend_listener_have_nagle_off() -> None:
    listener = tcp_listener("127.0.0.1", 0)
    with listener, socket.create_connection(listener.getsockname()[:2], timeout=5):
        accepted, _ = listener.accept()
        with accepted:
            assert accepted.proto == socket.IPPROTO_TCP  # what asyncio checks before setting TCP_NODELAY
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
