"""A bounded map that drops its least recently used entry first.

``LruMap`` is the one place the daemon's memos keep their recency order and their bound: the
store's chunk memo, the remembered language-server answers, name resolutions, token counts,
recently read files, query vectors, the retrieval agent's chunk vectors and the model answers of the
resilience layer. A ``get`` that finds its key, and every ``put``, make the entry the most
recent; a ``put`` past ``capacity`` drops the least recent ones (a capacity of 0 or less keeps
nothing). Not thread-safe: a caller that shares one across threads holds its own lock around it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, ItemsView
from typing import Generic, TypeVar

__all__ = ["LruMap"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LruMap(Generic[K, V]):
    """See the module docstring."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[K, V] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        """The value of ``key`` (now the most recent), or None."""
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        """Set ``key`` as the most recent entry; the least recent go past ``capacity``."""
        self._entries[key] = value
        self._entries.move_to_end(key)
        while self._entries and len(self._entries) > max(self.capacity, 0):
            self._entries.popitem(last=False)

    def pop(self, key: K) -> V | None:
        return self._entries.pop(key, None)

    def items(self) -> ItemsView[K, V]:
        return self._entries.items()

    def clear(self) -> None:
        self._entries.clear()
