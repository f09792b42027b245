"""A run operation: declared once, from which the daemon's handler, the daemon client and the in-process
service are derived.

A declaration is an attribute of the typed client (``daemon.service.runs.service.RunService``) and names:

- its params: a pydantic dataclass (``daemon.service.runs.params``); its constructor is the client
  method's signature (``runs.accept(run_id, selection=...)``), its JSON is the ``runs/<name>`` params;
- its result type (a model, ``list[...]`` of models, ``bool``): what the client answers, and the JSON the
  daemon sends (validated back on the client's side);
- whether it changes something (``changes``: a client never sends it twice; a read is sent again over a
  fresh connection when the old one broke);
- the work, by reference: ``work(run_work, params)`` runs it on the process's ``RunWork``
  (``daemon.service.runs.work``), so pyright checks the declaration against the work it names.

A ``RunLaunch`` is an operation that launches a run: its work answers the launched run's record and the
client answers a ``RunFollow`` of that run's events (listened to before the launch). A launch whose
params are ``Lending`` carries a ``RunLoan`` (an editor's file reader, a client's tools) that the daemon's
run borrows over the launching connection (``daemon.service.runs.loans``).

The client reaches the work through a ``RunTransport``: ``HereRuns`` (``daemon.service.runs.local``) calls
``work`` in this process, ``DaemonRuns`` (``daemon.service.runs.remote``) sends ``runs/<name>`` to the
workspace daemon, whose ``RunHost`` (``daemon.service.runs.host``) answers every declaration the same way.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, Protocol, Self, TypeVar, overload

from pydantic import TypeAdapter

from daemon.core.run_models import ExecutionProgress, RunRecord

if TYPE_CHECKING:
    from daemon.service.runs.follow import RunFollow
    from daemon.service.runs.service import RunService
    from daemon.service.runs.work import RunWork

__all__ = ["METHOD_PREFIX", "Listening", "RunLaunch", "RunOperation", "RunTransport", "declared"]

PS = ParamSpec("PS")
P = TypeVar("P")
R = TypeVar("R")

AsyncCall = Callable[PS, Coroutine[Any, Any, R]]
"""A typed client method: the declaration's params constructor as its signature, its result as its answer."""

METHOD_PREFIX = "runs/"
"""Every run operation is the daemon method ``runs/<name>``."""

DEFAULT_WAIT_S = 120.0
"""How long a client waits for an answer over the daemon's socket unless the declaration says otherwise."""


class _Declared(Generic[PS, P, R]):
    """What every run operation declares (see the module docstring)."""

    def __init__(
        self,
        params: Callable[PS, P],
        result: type[R],
        *,
        work: Callable[[RunWork, P], Awaitable[R]],
        changes: bool,
        wait_s: Callable[[P], float] | float = DEFAULT_WAIT_S,
    ) -> None:
        self.params = params
        self.result = result
        self.work = work
        self.changes = changes
        self._wait_s = wait_s
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        _REGISTRY.setdefault(owner, {})[name] = self

    @property
    def method(self) -> str:
        """The daemon method that serves it."""
        return METHOD_PREFIX + self.name

    def wait_s(self, params: P) -> float:
        """How long a client waits for the daemon's answer to ``params``."""
        return self._wait_s(params) if callable(self._wait_s) else self._wait_s

    @functools.cached_property
    def params_adapter(self) -> TypeAdapter[P]:
        return TypeAdapter[P](self.params)  # pyright: ignore[reportArgumentType] - the params class itself

    @functools.cached_property
    def result_adapter(self) -> TypeAdapter[R]:
        return TypeAdapter(self.result)

    def parse(self, raw: Any) -> P:
        """The params from the wire (``ValidationError`` when they do not fit)."""
        return self.params_adapter.validate_python(raw if raw is not None else {})

    def dump(self, params: P) -> dict[str, Any]:
        """The params as the wire carries them (a lent ``RunLoan`` is left out: it cannot cross)."""
        return self.params_adapter.dump_python(params, mode="json", exclude={"loan"})


class RunOperation(_Declared[PS, P, R]):
    """A run operation that answers its result (see the module docstring)."""

    @overload
    def __get__(self, client: None, owner: type | None = None) -> Self: ...
    @overload
    def __get__(self, client: RunService, owner: type | None = None) -> AsyncCall[PS, R]: ...
    def __get__(self, client: RunService | None, owner: type | None = None) -> Self | AsyncCall[PS, R]:
        if client is None:
            return self
        transport = client.transport

        def call(*args: PS.args, **kwargs: PS.kwargs) -> Coroutine[Any, Any, R]:
            return transport.call(self, self.params(*args, **kwargs))

        call.__name__ = self.name
        return call


class RunLaunch(_Declared[PS, P, RunRecord]):
    """A run operation that launches a run: the client answers a ``RunFollow`` (see the module docstring)."""

    def __init__(
        self,
        params: Callable[PS, P],
        *,
        work: Callable[[RunWork, P], Awaitable[RunRecord]],
        wait_s: float = 3600.0,
    ) -> None:
        super().__init__(params, RunRecord, work=work, changes=True, wait_s=wait_s)

    @overload
    def __get__(self, client: None, owner: type | None = None) -> Self: ...
    @overload
    def __get__(self, client: RunService, owner: type | None = None) -> AsyncCall[PS, RunFollow]: ...
    def __get__(self, client: RunService | None, owner: type | None = None) -> Self | AsyncCall[PS, RunFollow]:
        if client is None:
            return self
        transport = client.transport

        def launch(*args: PS.args, **kwargs: PS.kwargs) -> Coroutine[Any, Any, RunFollow]:
            return transport.launch(self, self.params(*args, **kwargs))

        launch.__name__ = self.name
        return launch


_REGISTRY: dict[type, dict[str, _Declared[..., Any, Any]]] = {}


def declared(owner: type) -> dict[str, RunOperation[..., Any, Any] | RunLaunch[..., Any]]:
    """The operations declared on ``owner`` (the typed client), by name, in declaration order."""
    return {name: op for name, op in _REGISTRY.get(owner, {}).items() if isinstance(op, RunOperation | RunLaunch)}


class Listening(Protocol):
    """Progress events from the moment listening began, until ``close``."""

    def __aiter__(self) -> AsyncIterator[ExecutionProgress]: ...

    def close(self) -> None: ...


class RunTransport(Protocol):
    """How the typed client reaches the work: in this process or over the daemon's socket."""

    @property
    def in_daemon(self) -> bool:
        """Whether the workspace daemon executes the runs."""
        ...

    async def call(self, op: RunOperation[..., P, R], params: P) -> R:
        """``op``'s answer to ``params``."""
        ...

    async def launch(self, op: RunLaunch[..., P], params: P) -> RunFollow:
        """Launch a run with ``op``; its events are listened to before it starts."""
        ...

    def listen(self, run_id: str | None = None) -> Listening:
        """Every run's progress events (or ``run_id``'s) from now on."""
        ...

    async def aclose(self) -> None: ...
