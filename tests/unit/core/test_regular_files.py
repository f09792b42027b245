"""Only regular files are opened, and no open or read blocks: FIFOs, sockets, links to devices.

Each read runs in a worker thread joined with a bound: a read that blocked (the bug this guards
against: an open of a FIFO waits for a writer for ever) fails the test instead of hanging it.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from daemon.core.models import SkipReason
from daemon.core.regular_files import NotRegularFile, boundary_problem, read_regular, read_regular_stat

BOUND_S = 30.0
T = TypeVar("T")


def bounded(call: Callable[[], T]) -> T | BaseException:
    """``call()``'s result or exception, from a thread that must finish within ``BOUND_S``."""
    box: list[T | BaseException] = []

    def run() -> None:
        try:
            box.append(call())
        except BaseException as exc:  # the exception is the answer under test
            box.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(BOUND_S)
    assert not worker.is_alive(), "the read blocked"
    return box[0]


def test_a_fifo_and_a_link_to_one_are_refused_without_opening(tmp_path: Path) -> None:
    fifo = tmp_path / "inner.fifo"
    os.mkfifo(fifo)
    link = tmp_path / "fifolink.txt"
    link.symlink_to("inner.fifo")
    for path in (fifo, link):
        outcome = bounded(lambda p=path: read_regular(p))
        assert isinstance(outcome, NotRegularFile) and outcome.kind == "FIFO"


def test_a_socket_and_a_character_device_are_refused(tmp_path: Path) -> None:
    sock_path = tmp_path / "s.py"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(sock_path))
        outcome = bounded(lambda: read_regular(sock_path))
        assert isinstance(outcome, NotRegularFile) and outcome.kind == "socket"
    finally:
        server.close()
    zero = tmp_path / "zero.txt"
    zero.symlink_to("/dev/zero")
    outcome = bounded(lambda: read_regular(zero))
    assert isinstance(outcome, NotRegularFile) and outcome.kind == "character device"


def test_a_regular_file_is_read_up_to_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"0123456789")
    assert read_regular(path, 4) == b"0123"
    data, st = read_regular_stat(path)
    assert data == b"0123456789" and st.st_nlink == 1
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing.py")


def test_a_hard_link_or_a_file_on_another_file_system_may_live_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside.env"
    outside.write_text("DB_PASSWORD=x\n")
    inside = tmp_path / "ws" / "hardout.txt"
    inside.parent.mkdir()
    os.link(outside, inside)
    st = os.stat(inside)
    assert boundary_problem(st, st.st_dev) is SkipReason.HARD_LINK
    single = tmp_path / "ws" / "plain.py"
    single.write_text("x = 1\n")
    plain = os.stat(single)
    assert boundary_problem(plain, plain.st_dev) is None
    assert boundary_problem(plain, plain.st_dev + 1) is SkipReason.OTHER_FILESYSTEM
    assert boundary_problem(plain, None) is None
