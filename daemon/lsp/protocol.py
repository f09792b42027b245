"""The ``ided/*`` LSP extension: method names, typed params/results, and the protocol that knows them.

Wire types are attrs classes (as lsprotocol's are) with snake_case attributes that travel as
camelCase JSON. Every field of an ided result is always sent (``null`` when absent), so clients
never guess about omitted keys. Positions inside results are LSP positions: 0-based lines, columns
in the negotiated position encoding (UTF-16 unless the client chose otherwise).

The converter is strict about JSON types (a string where a number belongs is invalid params, not
silently coerced), which is what lets the transport guard answer -32602 for malformed params.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Generator
from concurrent.futures import Future
from typing import Any, TypeVar

import attrs
import cattrs
import cattrs.gen
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method

from daemon.core.early_handshake import EarlyAnswer
from daemon.core.models import ChunkKind, SearchMode
from daemon.lsp.methods import REQUESTS, LspMethods

__all__ = [
    "EmptyParams",
    "IdedProtocol",
    "IndexChangedParams",
    "IndexSearchParams",
    "IndexSearchResult",
    "IndexStatusResult",
    "LspMethods",
    "SearchHitItem",
    "camel_case",
    "extend_messages",
    "make_converter",
    "wire",
]

logger = logging.getLogger(__name__)

C = TypeVar("C", bound=type)
T = TypeVar("T")


_WIRE_TYPES: set[type] = set()


def _wire(cls: C) -> C:
    _WIRE_TYPES.add(cls)
    return cls


def wire(cls: C) -> C:
    """Mark an attrs class of an extension module as an ided wire type (camelCase, every field sent)."""
    return _wire(cls)


# -- params -------------------------------------------------------------------------------------


@_wire
@attrs.frozen(kw_only=True)
class EmptyParams:
    """Params of a method that takes none (``{}``; the key may be left out)."""


@_wire
@attrs.frozen(kw_only=True)
class IndexSearchParams:
    query: str
    k: int | None = None
    kind: ChunkKind | None = None
    language: str | None = None
    path_glob: str | None = None
    mode: SearchMode = SearchMode.HYBRID
    include_text: bool = False
    group_by_file: bool = False


# -- results ------------------------------------------------------------------------------------


@_wire
@attrs.frozen(kw_only=True)
class SearchHitItem:
    location: types.Location
    path: str
    score: float
    kind: str
    symbol_kind: str
    language: str
    name: str | None
    qualified_name: str | None
    signature: str | None
    preview: str
    text: str | None
    sources: list[str]


@_wire
@attrs.frozen(kw_only=True)
class IndexSearchResult:
    query: str
    mode: str
    hits: list[SearchHitItem]
    embedded_fraction: float
    reranked: bool
    matches: str
    notes: list[str]
    seconds: float


@_wire
@attrs.frozen(kw_only=True)
class IndexStatusResult:
    workspace: str
    ready: bool
    reason: str | None
    busy: str | None
    files_indexed: int
    chunks: int
    embedded: int
    embedded_fraction: float
    dense_model: str | None
    last_update: str | None
    store: str
    state_dir: str
    daemon_pid: int
    clients: int
    watching: bool


@_wire
@attrs.frozen(kw_only=True)
class IndexChangedParams:
    """``ided/index/changed``: files were (re-)indexed; ``paths`` empty means a full pass."""

    paths: list[str]
    uris: list[str]
    files_indexed: int
    files_removed: int
    chunks_written: int
    chunks_deleted: int
    seconds: float


# -- messages -----------------------------------------------------------------------------------
# One request and one response class per method, as lsprotocol has for the standard methods; built
# by one factory (the extension modules, ``run_protocol``, use it too).


def request_types(
    name: str, method: str, params: Any, result: type, *, params_optional: bool = False
) -> tuple[type, type]:
    """The wire request ``<name>Request`` (``id``, ``params``, ``method``) and response ``<name>Response``."""
    params_field = attrs.field(type=params | None, default=None) if params_optional else attrs.field(type=params)
    request = attrs.make_class(
        name + "Request",
        {
            "id": attrs.field(type=int | str),
            "params": params_field,
            "method": attrs.field(type=str, default=method),
            "jsonrpc": attrs.field(type=str, default="2.0"),
        },
        frozen=True,
        kw_only=True,
    )
    response = attrs.make_class(
        name + "Response",
        {
            "id": attrs.field(type=int | str),
            "result": attrs.field(type=result),
            "jsonrpc": attrs.field(type=str, default="2.0"),
        },
        frozen=True,
        kw_only=True,
    )
    return _wire(request), _wire(response)


def notification_type(name: str, method: str, params: type) -> type:
    """The wire notification ``name`` (``params``, ``method``)."""
    notification = attrs.make_class(
        name,
        {
            "params": attrs.field(type=params),
            "method": attrs.field(type=str, default=method),
            "jsonrpc": attrs.field(type=str, default="2.0"),
        },
        frozen=True,
        kw_only=True,
    )
    return _wire(notification)


IndexSearchRequest, IndexSearchResponse = request_types(
    "IndexSearch", LspMethods.INDEX_SEARCH, IndexSearchParams, IndexSearchResult
)

MESSAGE_TYPES: dict[str, tuple[type, type | None]] = {
    LspMethods.INDEX_SEARCH: (IndexSearchRequest, IndexSearchResponse),
    LspMethods.INDEX_STATUS: request_types(
        "IndexStatus", LspMethods.INDEX_STATUS, EmptyParams, IndexStatusResult, params_optional=True
    ),
    LspMethods.INDEX_CHANGED: (
        notification_type("IndexChangedNotification", LspMethods.INDEX_CHANGED, IndexChangedParams),
        None,
    ),
}


def extend_messages(table: dict[str, tuple[type, type | None]]) -> None:
    """Add the request/notification types of an extension module (``daemon.lsp.run_protocol``,
    ``daemon.lsp.intel_wire``); call at import."""
    MESSAGE_TYPES.update(table)


class IdedProtocol(LanguageServerProtocol):
    """lsprotocol's types for the standard methods, ours for ``ided/*``; the methods are announced
    under ``capabilities.experimental.ided`` in the ``initialize`` result."""

    _early: EarlyAnswer | None = None

    def expect_early_answer(self, early: EarlyAnswer) -> None:
        """The ``initialize`` request ``msg_id`` was answered with ``result`` before this protocol existed
        (``daemon.lsp.handshake``): when it is replayed, drop this protocol's own answer to it, and say so
        in the log if that answer differs."""
        self._early = early

    def _send_response(self, msg_id: Any, result: Any | None = None, error: Any | None = None) -> None:
        early = self._early
        if early is None or msg_id != early.id:
            super()._send_response(msg_id, result, error)  # pyright: ignore[reportUnknownMemberType]
            return
        self._early = None
        ours: Any = None if error is not None else self._converter.unstructure(result)  # pyright: ignore[reportUnknownMemberType]
        problem = early.replay_problem(ours, error)
        if problem is not None:
            logger.log(*problem)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {
            "ided": {
                "version": 1,
                "requests": _in_table_order([m for m, (_, response) in MESSAGE_TYPES.items() if response is not None]),
                "notifications": [m for m, (_, response) in MESSAGE_TYPES.items() if response is None],
            }
        }
        return result

    def _send_handler_result(self, future: Future[Any], *, msg_id: str | int) -> None:
        """A handler's coded refusal (a ``JsonRpcException``: invalid params, a daemon error) is an
        answer, not a server fault: it goes to the client as that error with one log line, no
        traceback and no ``window/showMessage``. Anything else keeps pygls' handling (-32603, logged)."""
        error = None if future.cancelled() else future.exception()
        if isinstance(error, JsonRpcException):
            self._request_futures.pop(msg_id, None)
            logger.info("request %s refused: %s %s", msg_id, error.code, error.message)
            self._send_response(msg_id, error=error.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    @functools.lru_cache  # noqa: B019 - one protocol per process; pygls caches the same way
    def get_message_type(self, method: str) -> type[Any] | None:
        if method in MESSAGE_TYPES:
            return MESSAGE_TYPES[method][0]
        return super().get_message_type(method)

    @functools.lru_cache  # noqa: B019
    def get_result_type(self, method: str) -> type[Any] | None:
        if method in MESSAGE_TYPES:
            return MESSAGE_TYPES[method][1]
        return super().get_result_type(method)


def _in_table_order(methods: list[str]) -> list[str]:
    """``methods`` in the order of ``LspMethods`` (as the early ``initialize`` answer lists them), others after."""
    order = {method: i for i, method in enumerate(REQUESTS)}
    return sorted(methods, key=lambda m: order.get(m, len(order)))


# -- converter ----------------------------------------------------------------------------------


def camel_case(name: str) -> str:
    """``path_glob`` -> ``pathGlob``: how attribute names travel on the wire."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _strict(accept: tuple[type, ...], label: str) -> Callable[[Any, type[T]], T]:
    """A structure hook that refuses JSON values of the wrong type instead of coercing them.

    Subclasses (the str/int enums of lsprotocol and ours) dispatch here too: the value is checked
    against the JSON type and then looked up by value.
    """

    def structure(value: Any, cls: type[T]) -> T:
        if isinstance(value, bool) and bool not in accept:
            raise TypeError(f"expected {label}, got a boolean")
        if not isinstance(value, accept):
            raise TypeError(f"expected {label}, got {type(value).__name__}")
        return cls(value)  # pyright: ignore[reportCallIssue]

    return structure


def make_converter() -> cattrs.Converter:
    """pygls' converter plus strict JSON primitives and the camelCase, never-omitting ided types."""
    converter = default_converter()
    converter.register_structure_hook(str, _strict((str,), "a string"))
    converter.register_structure_hook(int, _strict((int,), "an integer"))
    converter.register_structure_hook(float, _strict((int, float), "a number"))
    converter.register_structure_hook(bool, _strict((bool,), "a boolean"))

    def is_wire(cls: Any) -> bool:
        return cls in _WIRE_TYPES

    def unstructure_fn(cls: Any) -> Any:
        overrides = {a.name: cattrs.gen.override(rename=camel_case(a.name)) for a in attrs.fields(cls)}
        return cattrs.gen.make_dict_unstructure_fn(cls, converter, **overrides)  # pyright: ignore[reportArgumentType]

    def structure_fn(cls: Any) -> Any:
        overrides = {a.name: cattrs.gen.override(rename=camel_case(a.name)) for a in attrs.fields(cls)}
        return cattrs.gen.make_dict_structure_fn(cls, converter, **overrides)  # pyright: ignore[reportArgumentType]

    converter.register_unstructure_hook_factory(is_wire, unstructure_fn)
    converter.register_structure_hook_factory(is_wire, structure_fn)
    return converter
