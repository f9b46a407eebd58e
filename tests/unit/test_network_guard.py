"""The no-network guard applies to every test, not only to modules that ask for it (issue 12)."""

from __future__ import annotations

import socket

import pytest


def test_a_test_that_does_not_ask_for_the_guard_still_cannot_reach_the_internet() -> None:
    with pytest.raises(AssertionError, match="must not use the network"):
        socket.create_connection(("192.0.2.1", 80), timeout=1)  # TEST-NET-1: never routed anyway


def test_loopback_stays_allowed() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        with socket.create_connection(server.getsockname(), timeout=5):
            pass
    finally:
        server.close()
