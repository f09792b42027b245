from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from daemon.core.models import SkipReason
from daemon.index.file_reader import FileContent, read_file


def test_utf8_text_is_read_with_a_stable_hash(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("print('héllo')\n", encoding="utf-8")
    first = read_file(path, 1000)
    second = read_file(path, 1000)
    assert isinstance(first, FileContent)
    assert first == second
    assert first.data.decode() == "print('héllo')\n"


def test_invalid_utf8_is_skipped_as_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.py"
    path.write_bytes("x = 'caf\xe9'\n".encode("latin-1"))
    assert read_file(path, 1000) is SkipReason.NOT_UTF8


def test_a_binary_with_a_source_name_is_skipped_as_binary(tmp_path: Path) -> None:
    path = tmp_path / "fake.py"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)))
    assert read_file(path, 10_000) is SkipReason.BINARY


def test_a_file_that_grew_past_the_cap_since_the_scan_is_too_large(tmp_path: Path) -> None:
    path = tmp_path / "grown.py"
    path.write_text("x" * 2000)
    assert read_file(path, 1000) is SkipReason.TOO_LARGE


def test_a_file_deleted_before_reading_is_vanished(tmp_path: Path) -> None:
    assert read_file(tmp_path / "gone.py", 1000) is SkipReason.VANISHED


def test_an_unreadable_file_is_skipped_as_unreadable() -> None:
    # Root reads anything, so drop to an unprivileged uid in a forked child when running as root.
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        path = Path(tmp) / "locked.py"
        path.write_text("x = 1\n")
        os.chmod(path, 0)
        if os.geteuid() != 0:
            assert read_file(path, 1000) is SkipReason.UNREADABLE
            return
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            try:
                os.setgid(65534)
                os.setuid(65534)
                result = read_file(path, 1000)
                os.write(write_fd, str(result).encode())
            finally:
                os._exit(0)
        os.close(write_fd)
        os.waitpid(pid, 0)
        outcome = os.read(read_fd, 100).decode()
        os.close(read_fd)
        assert outcome == SkipReason.UNREADABLE.value
        assert stat.S_IMODE(path.stat().st_mode) == 0


def test_a_path_that_became_a_fifo_or_a_hard_link_is_skipped_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "swapped.py"
    os.mkfifo(fifo)  # would block an open for reading until a writer came
    assert read_file(fifo, 1000) is SkipReason.SPECIAL_FILE
    target = tmp_path / "target.py"
    target.write_text("x = 1\n")
    os.link(target, tmp_path / "second.py")
    assert read_file(tmp_path / "second.py", 1000) is SkipReason.HARD_LINK
    single = tmp_path / "single.py"
    single.write_text("y = 2\n")
    assert read_file(single, 1000, root_device=os.stat(tmp_path).st_dev + 1) is SkipReason.OTHER_FILESYSTEM
