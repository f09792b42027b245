"""Language-server answers remembered while nothing the server could see has changed.

``RememberedAnswers`` is a bounded map (least recently used out first) from a key to an answer. The
caller builds the key from everything an answer depends on: the question (file, position, options),
the token of what the server knows (``LanguageServerPool.view``: its process, every notification it
was sent — documents opened, changed, closed, watched files —, the work it reported) and the
daemon's index generation (every watched file event). Any change the server could see makes a new
key, so an old answer is never found again: it is never stale, only unused until it falls out.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["RememberedAnswers"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class RememberedAnswers(Generic[K, V]):
    """See the module docstring. Use from one event loop (not thread-safe)."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._answers: OrderedDict[K, V] = OrderedDict()

    def __len__(self) -> int:
        return len(self._answers)

    def get(self, key: K) -> V | None:
        answer = self._answers.get(key)
        if answer is not None:
            self._answers.move_to_end(key)
        return answer

    def put(self, key: K, answer: V) -> None:
        self._answers[key] = answer
        self._answers.move_to_end(key)
        while len(self._answers) > self._capacity:
            self._answers.popitem(last=False)
