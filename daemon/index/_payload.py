"""What both vector-store adapters share: the point payload, path-glob planning, RRF fusion, errors.

Payload layout (one flat JSON object per point, six keys):

- ``path``, ``kind``, ``language``: the chunk's fields that filters use (keyword-indexed);
- ``chunk``: the whole :class:`~daemon.core.models.Chunk` as one JSON string
  (``Chunk.model_dump_json(exclude_defaults=True)``), so ``Chunk.model_validate_json`` rebuilds
  it exactly. One string instead of a key per field because the engines convert payloads value
  by value: qdrant-edge-py 0.9.0 spent ~2 µs per value and ~2.5 µs per list item (a chunk with
  25 imports: ~160 µs per point, measured), against ~10 µs for this layout;
- ``chunk_hash``: ``Chunk.chunk_hash``, so unchanged chunks can reuse their dense vector;
- ``embedded``: ``1`` once the point has a dense vector, else ``0``. An integer, not a bool:
  qdrant-edge-py 0.9.0 never matches ``MatchValue(True/False)`` (measured: every bool match
  counts 0 points, with or without a bool index), while integer matches work in every engine.

Stores written before the packed layout hold every Chunk field as its own key; they are still
read (``chunk_from_payload`` accepts both) and are rewritten file by file as files change.

Path globs are ``fnmatch`` patterns over the workspace-relative POSIX path, matched
case-sensitively; ``*`` also crosses ``/``. They are resolved *exactly*, never by over-fetching:
a pattern without wildcards is an exact path match; ``literal-prefix*`` is an indexed prefix
condition; anything else makes the adapter list the distinct stored paths (a facet on the
keyword index), keep the ones ``fnmatch`` accepts and filter on exactly those.
The price is one approximate facet over ``path`` per such query plus one ``fnmatch`` per
distinct path, proportional to the number of *files* (about 5 ms for 5,000 files at 100k
chunks); the gain is that a selective glob never returns fewer hits than exist, which a
post-filter over an over-fetched candidate list cannot promise.
"""

from __future__ import annotations

import fnmatch
import logging
import re
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from pydantic import ValidationError

from daemon.core.models import Chunk
from daemon.errors import DaemonError, StoreError, state_error

__all__ = [
    "CHUNK",
    "CHUNK_HASH",
    "DENSE",
    "EMBEDDED",
    "EMBEDDED_NO",
    "EMBEDDED_YES",
    "LEXICAL",
    "PATH",
    "PAYLOAD_INDEXES",
    "REBUILD_HINT",
    "RRF_K",
    "FusedHit",
    "GlobMode",
    "IndexKind",
    "PathGlob",
    "batched",
    "build_payload",
    "chunk_from_payload",
    "chunk_json",
    "chunk_to_payload",
    "engine_errors",
    "engine_state_error",
    "rrf_fuse",
]

logger = logging.getLogger(__name__)

LEXICAL = "lexical"
"""Name of the sparse (BM25 term-frequency, IDF applied by the engine) vector."""
DENSE = "dense"
"""Name of the dense (cosine) vector."""

PATH = "path"
KIND = "kind"
LANGUAGE = "language"
CHUNK_HASH = "chunk_hash"
CHUNK = "chunk"
EMBEDDED = "embedded"
EMBEDDED_YES = 1
EMBEDDED_NO = 0


class IndexKind(Enum):
    """The kind of index a payload field gets, whichever engine."""

    PREFIX_KEYWORD = "prefix_keyword"  # a keyword index that also matches prefixes, where the engine can
    KEYWORD = "keyword"
    INTEGER = "integer"


PAYLOAD_INDEXES: Mapping[str, IndexKind] = {
    PATH: IndexKind.PREFIX_KEYWORD,
    KIND: IndexKind.KEYWORD,
    LANGUAGE: IndexKind.KEYWORD,
    EMBEDDED: IndexKind.INTEGER,
}
"""The payload fields that filters use, and the index each gets (see the module doc)."""

_STORE_FIELDS = frozenset({CHUNK_HASH, EMBEDDED, CHUNK})

RRF_K = 60
"""RRF constant: score = sum over rankers of 1 / (RRF_K + position), position counted from 0.

That is Qdrant's formula; its own default constant is 2, which lets a single first place
outweigh agreement between rankers. 60 is the value of the original RRF paper (Cormack et al.).
"""

REBUILD_HINT = "run `ided index --rebuild` to rebuild the index from the workspace"

_WILDCARDS = "*?["

T = TypeVar("T")


def chunk_json(chunk: Chunk) -> str:
    """The JSON string the ``chunk`` payload key holds (fields at their default are left out)."""
    return chunk.model_dump_json(exclude_defaults=True)


def build_payload(
    *, path: str, kind: str, language: str, chunk_hash: str, chunk_json: str, embedded: bool
) -> dict[str, Any]:
    """The payload of one point from its parts (see the module doc)."""
    return {
        PATH: path,
        KIND: kind,
        LANGUAGE: language,
        CHUNK_HASH: chunk_hash,
        EMBEDDED: EMBEDDED_YES if embedded else EMBEDDED_NO,
        CHUNK: chunk_json,
    }


def chunk_to_payload(chunk: Chunk, *, embedded: bool) -> dict[str, Any]:
    """The payload stored with ``chunk``: its filter fields, the chunk as JSON, its hash, the embedded flag."""
    return build_payload(
        path=chunk.path,
        kind=chunk.kind.value,
        language=chunk.language,
        chunk_hash=chunk.chunk_hash,
        chunk_json=chunk_json(chunk),
        embedded=embedded,
    )


def chunk_from_payload(payload: Mapping[str, Any] | None) -> Chunk:
    """Rebuild the Chunk a payload was written from (either layout); StoreError if it is not one of ours."""
    if payload is None:
        raise StoreError(f"a stored point has no payload; {REBUILD_HINT}")
    packed = payload.get(CHUNK)
    try:
        if isinstance(packed, str):
            return Chunk.model_validate_json(packed)
        return Chunk.model_validate({key: value for key, value in payload.items() if key not in _STORE_FIELDS})
    except ValidationError as exc:
        raise StoreError(f"a stored point does not hold a valid chunk; {REBUILD_HINT}", cause=exc) from exc


class GlobMode(Enum):
    """How a path glob reaches the engine."""

    EXACT = "exact"  # no wildcard: one path, an exact keyword match
    PREFIX = "prefix"  # literal prefix then only '*': a prefix match says it all
    PATTERN = "pattern"  # anything else: list the paths under the prefix, fnmatch them


@dataclass(frozen=True, slots=True)
class PathGlob:
    """A path glob split into what the engine can index (``prefix``) and what fnmatch decides."""

    pattern: str
    prefix: str
    mode: GlobMode

    @classmethod
    def parse(cls, pattern: str) -> PathGlob:
        cut = min((i for i, ch in enumerate(pattern) if ch in _WILDCARDS), default=len(pattern))
        prefix, rest = pattern[:cut], pattern[cut:]
        if not rest:
            mode = GlobMode.EXACT
        elif set(rest) == {"*"}:
            mode = GlobMode.PREFIX
        else:
            mode = GlobMode.PATTERN
        return cls(pattern=pattern, prefix=prefix, mode=mode)

    def matches(self, path: str) -> bool:
        return fnmatch.fnmatchcase(path, self.pattern)

    def select(self, paths: Iterable[str]) -> list[str]:
        """The given paths the glob accepts, sorted."""
        return sorted(p for p in paths if self.matches(p))


@dataclass(frozen=True, slots=True)
class FusedHit:
    """One id after Reciprocal Rank Fusion."""

    id: str
    score: float
    sources: tuple[str, ...]


def rrf_fuse(
    rankings: Sequence[tuple[str, Sequence[str]]],
    *,
    k: int = RRF_K,
    strengths: Sequence[Sequence[float]] | None = None,
) -> list[FusedHit]:
    """Fuse ranked id lists ``[(ranker name, ids best first), ...]`` with RRF, best first.

    Ties are broken by the best position reached in any list; then, when ``strengths`` gives each
    list's raw scores (parallel to its ids), by the sum of each ranker's score relative to its own
    best: when the rankers disagree exactly ("first in one, second in the other"), the one whose
    preference is the clearer decides. Then by id, so the order is always stable.
    """
    scores: dict[str, float] = {}
    best: dict[str, int] = {}
    sources: dict[str, list[str]] = {}
    strength: dict[str, float] = {}
    for index, (name, ids) in enumerate(rankings):
        raw = strengths[index] if strengths is not None else ()
        top = raw[0] if raw and raw[0] > 0 else 1.0
        for position, point_id in enumerate(ids):
            if name in sources.get(point_id, ()):
                continue  # a ranker lists an id once; ignore repeats defensively
            scores[point_id] = scores.get(point_id, 0.0) + 1.0 / (k + position)
            best[point_id] = min(best.get(point_id, position), position)
            sources.setdefault(point_id, []).append(name)
            if position < len(raw):
                strength[point_id] = strength.get(point_id, 0.0) + raw[position] / top
    ordered = sorted(scores, key=lambda pid: (-scores[pid], best[pid], -strength.get(pid, 0.0), pid))
    return [FusedHit(id=pid, score=scores[pid], sources=tuple(sources[pid])) for pid in ordered]


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of at most ``size`` items (itertools.batched arrives in 3.12)."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


@contextmanager
def engine_errors(store: str, action: str) -> Generator[None]:
    """Turn any engine exception raised inside into a StoreError naming the store and the action."""
    try:
        yield
    except StoreError:
        raise
    except Exception as exc:
        logger.debug("%s: %s failed: %s", store, action, exc)
        coded = engine_state_error(f"{action} in {store}", exc)
        if coded is not None:
            raise coded from exc
        raise StoreError(f"{store}: {action} failed", cause=exc) from exc


_OS_ERROR = re.compile(r"os error (\d+)|Os \{ code: (\d+)")


def engine_state_error(action: str, exc: BaseException) -> DaemonError | None:
    """``disk_full`` / ``state_unwritable`` when an engine error is the disk's (Rust: "(os error 28)",
    "Os { code: 27, ... }"), else None."""
    if isinstance(exc, OSError) and exc.errno is not None:
        os_errno = exc.errno
    else:
        found = _OS_ERROR.search(str(exc))
        if found is None:
            return None
        os_errno = int(found.group(1) or found.group(2))
    coded = state_error(action, "the index", OSError(os_errno, str(exc)))
    return None if isinstance(coded, StoreError) else coded
