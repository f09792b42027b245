"""Point ids: deterministic, distinct per (path, ordinal, chunk hash), valid UUIDs every store accepts."""

from __future__ import annotations

import uuid

from daemon.core.models import chunk_point_id, content_hash


def test_the_same_chunk_gets_the_same_id_and_any_difference_a_new_one() -> None:
    h = content_hash("def f():\n    pass\n")
    first = chunk_point_id("src/a.py", 0, h)
    assert chunk_point_id("src/a.py", 0, h) == first
    others = {
        chunk_point_id("src/b.py", 0, h),
        chunk_point_id("src/a.py", 1, h),
        chunk_point_id("src/a.py", 0, content_hash("def g():\n    pass\n")),
    }
    assert first not in others and len(others) == 3


def test_ids_are_rfc_9562_version_8_uuids() -> None:
    for n in range(64):
        parsed = uuid.UUID(chunk_point_id("p.py", n, "ab" * 16))
        assert parsed.version == 8
        assert parsed.variant == uuid.RFC_4122
        assert str(parsed) == chunk_point_id("p.py", n, "ab" * 16)


def test_no_collisions_over_a_large_workspace_worth_of_ids() -> None:
    ids = {chunk_point_id(f"pkg/m{n % 997}.py", n // 997, content_hash(str(n))) for n in range(200_000)}
    assert len(ids) == 200_000
