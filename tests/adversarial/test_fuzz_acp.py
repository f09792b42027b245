"""The seeded JSON-RPC fuzz of ``ided acp`` (stdio), small enough for CI: the hand-written hostile
cases and ``MUTATIONS`` mutated valid frames, a liveness request after each. ``just fuzz`` runs the
long version (scripts/fuzz_fronts.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.fuzz_support import FRONTS, fuzz_front

pytestmark = pytest.mark.e2e

SEED = 20261125
MUTATIONS = 40


async def test_the_acp_front_answers_every_fuzzed_request_and_never_dies(tmp_path: Path, isolated_home: Path) -> None:
    report = await fuzz_front(FRONTS["acp"], tmp_path / "fuzz", seed=SEED, mutations_count=MUTATIONS)
    assert report.failures == [], report.line()
    assert report.sent > MUTATIONS
    assert (report.survived, report.unanswered, report.deaths, report.garbled) == (report.sent, 0, 0, 0)
