"""What retrievals read of the workspace is kept across them while the files are unchanged
(``FileMemory``), and token counts are made line by line where the tokenizer allows it."""

from __future__ import annotations

import os
from pathlib import Path

from daemon.config import EmbeddingConfig
from daemon.retrieval.file_snapshot import FileMemory, FileSnapshot, SnapshotFile
from daemon.retrieval.tokens import WordPieceCounter, load_token_counter


def _lines(taken: SnapshotFile, made: list[str]) -> int:
    made.append("made")
    return (taken.data or b"").count(b"\n")


def test_an_unchanged_file_is_served_from_memory_with_what_was_made_of_it(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    memory = FileMemory()
    made: list[str] = []
    first = FileSnapshot(tmp_path, memory)
    assert first.derived("a.py", "lines", lambda t: _lines(t, made)) == 2
    second = FileSnapshot(tmp_path, memory)
    assert second.get("a.py").data == b"x = 1\ny = 2\n"
    assert second.derived("a.py", "lines", lambda t: _lines(t, made)) == 2
    assert memory.hits == 1 and made == ["made"]


def test_a_changed_file_is_read_again_even_at_the_same_size(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("x = 1\n", encoding="utf-8")
    memory = FileMemory()
    made: list[str] = []
    assert FileSnapshot(tmp_path, memory).derived("a.py", "lines", lambda t: _lines(t, made)) == 1
    before = path.stat()
    path.write_text("x\n=2\n", encoding="utf-8")  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000))  # a clock that barely moved
    again = FileSnapshot(tmp_path, memory)
    assert again.get("a.py").data == b"x\n=2\n"
    assert again.derived("a.py", "lines", lambda t: _lines(t, made)) == 2
    assert memory.hits == 0 and made == ["made", "made"]


def test_a_file_too_big_for_the_memory_is_served_but_not_kept(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_bytes(b"0123456789" * 100)
    memory = FileMemory(max_bytes=1000)
    assert FileSnapshot(tmp_path, memory).get("big.txt").data == b"0123456789" * 100
    assert FileSnapshot(tmp_path, memory).get("big.txt").data == b"0123456789" * 100
    assert memory.hits == 0


def test_a_snapshot_without_memory_reads_every_time(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    made: list[str] = []
    for _ in range(2):
        FileSnapshot(tmp_path).derived("a.py", "lines", lambda t: _lines(t, made))
    assert made == ["made", "made"]


def test_token_counts_line_by_line_equal_the_whole_texts_counts() -> None:
    counter = load_token_counter(EmbeddingConfig())
    assert isinstance(counter, WordPieceCounter) and counter.by_lines
    texts = [
        "def add(a, b):\n    return a + b\n",
        "## Überschrift\r\n\r\nCafé naïve 東京 — résumé\n\n\tindented_name = value  # comment\n",
        "x\n\n\n" + "very_long_identifier_name_that_splits " * 40 + "\n}",
    ]
    for text in texts:
        whole = len(counter._tokenizer.encode(text, add_special_tokens=False).ids)  # pyright: ignore[reportPrivateUsage]
        assert counter.count(text) == whole
    assert counter.count(texts[0] + "\n" + texts[1]) == counter.count(texts[0]) + counter.count(texts[1])


def _encoded_cut(counter: WordPieceCounter, text: str, tokens: int) -> str:
    """The cut from the whole text's encoding (what ``cut`` did before it read the line counts)."""
    encoding = counter._tokenizer.encode(text, add_special_tokens=False)  # pyright: ignore[reportPrivateUsage]
    if len(encoding.ids) <= tokens:
        return text
    end = encoding.offsets[tokens - 1][1]
    newline = text.rfind("\n", 0, end)
    return text[: newline if newline > 0 else end]


def test_a_cut_from_line_counts_equals_the_cut_from_the_whole_encoding() -> None:
    counter = load_token_counter(EmbeddingConfig())
    assert isinstance(counter, WordPieceCounter) and counter.by_lines
    texts = [
        "def add(a, b):\n    return a + b\n\n\nclass Shop:\n    def total(self):  # sum\n        return 0\n",
        "\nfirst line empty\nsecond_line = 'Café naïve 東京'\r\n\r\nthird — résumé\n",
        "one_long_first_line " * 30 + "\nshort\n\n\n",
    ]
    for text in texts:
        total = counter.count(text)
        for tokens in range(1, total + 3):
            assert counter.cut(text, tokens) == _encoded_cut(counter, text, tokens), (text[:20], tokens)
