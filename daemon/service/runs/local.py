"""The in-process transport of the run service: ``HereRuns`` runs each operation's work in this process.

``open_here(config, models_needed=...)`` opens the workspace's ``RunWork`` (the pipeline runtime and the
review) and answers a ``RunService`` over it; ``reviewing(review)`` one over a review alone (the command
line's review commands). Every launch listens to the runtime's progress before the run starts and answers
a ``RunFollow`` of that run's events up to its ``run_finished``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TypeVar, Unpack

from daemon.config import Config
from daemon.service.pipeline.opening import PipelineChoices
from daemon.service.runs.follow import RunFollow
from daemon.service.runs.operation import Listening, RunLaunch, RunOperation
from daemon.service.runs.review import RunReview
from daemon.service.runs.service import RunService
from daemon.service.runs.work import RunWork

__all__ = ["HereRuns", "here", "open_here", "reviewing"]

P = TypeVar("P")
R = TypeVar("R")


class HereRuns:
    """The ``RunTransport`` that calls each operation's work on this process's ``RunWork``."""

    in_daemon = False

    def __init__(self, work: RunWork) -> None:
        self.work = work

    async def call(self, op: RunOperation[..., P, R], params: P) -> R:
        return await op.work(self.work, params)

    async def launch(self, op: RunLaunch[..., P], params: P) -> RunFollow:
        subscription = self.work.listen()  # before the launch: the run's first events are not missed
        try:
            record = await op.work(self.work, params)
        except BaseException:
            subscription.close()
            raise
        return RunFollow(record, subscription, subscription.close)

    def listen(self, run_id: str | None = None) -> Listening:
        return self.work.listen(run_id)

    async def aclose(self) -> None:
        """Nothing: the ``RunWork`` is closed by whoever opened it."""


@asynccontextmanager
async def open_here(
    config: Config, *, models_needed: bool, **choices: Unpack[PipelineChoices]
) -> AsyncGenerator[RunService]:
    """The run service of ``config``'s workspace in this process; runs still in flight are interrupted on exit
    (they stay resumable)."""
    async with RunWork.open(config, models_needed=models_needed, **choices) as work:
        yield here(work)


def here(work: RunWork) -> RunService:
    """The run service over ``work``, which its caller opened and closes."""
    return RunService(HereRuns(work))


def reviewing(review: RunReview) -> RunService:
    """A run service that answers the review operations over ``review`` (the others refuse)."""
    return here(RunWork.reviewing(review))
