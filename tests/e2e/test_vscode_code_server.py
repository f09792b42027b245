"""The VS Code extension in a real VS Code: code-server (VS Code's own build served to a browser) with
the packed .vsix installed, driven in Debian's headless Chromium by Playwright
(``tests/e2e/vscode_web/drive.mjs``), against the real ``ided lsp`` with the LLM scripted by the replay
provider. One pass goes through search (with a bad ``ided.search.maxResults``), go to definition,
hover and references through ided with the default settings (basedpyright on ``PATH``), index
status, a dry run and its plan graph (a webview), a run whose review opens in the diff editor,
feedback, one hunk of the second review dropped and the rest accepted from the review
notification's button, rollback, a refused second rollback, and a second run that is rejected; the
report of what the UI showed, the screenshots, the output channel and the repository are checked.
``IDED_VSCODE_SCREENSHOTS=DIR`` keeps the screenshots (``just vscode-screenshots`` regenerates
docs/images/vscode with it).

Needs the tools ``scripts/install-test-tools.sh`` installs (code-server and playwright-core under
``tests/e2e/vscode_web/node_modules``, Debian's ``chromium``); skipped with the reason without them."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from daemon.config import load_config
from tests.e2e.lsp_support import overrides, server_args, stop_daemon
from tests.e2e.vscode_support import packed_vsix
from tests.intel_tools import SEARCH_PATH, require_server
from tests.pipeline_support import choose, everyone_succeeds, write_script
from tests.vcs_support import git, make_repo

pytestmark = pytest.mark.e2e

__all__ = ["packed_vsix"]  # a fixture

REPO = Path(__file__).parents[2]
WEB = Path(__file__).parent / "vscode_web"
CODE_SERVER = WEB / "node_modules" / ".bin" / "code-server"
DRIVE_TIMEOUT_S = 480
KEEP_SCREENSHOTS = os.environ.get("IDED_VSCODE_SCREENSHOTS")
"""Where to copy the screenshots (read at import: the tests' isolated_home fixture clears IDED_* variables)."""
STEP_WAIT_MS = 60_000

CALC = (
    "".join(
        f"def {name}:\n    return {body}\n\n\n"
        for name, body in [
            ("add(a, b)", "a + b"),
            ("twice(a)", "add(a, a)"),
            ("sub(a, b)", "a - b"),
            ("mul(a, b)", "a * b"),
        ]
    )
    + "def div(a, b):\n    return a / b\n"
)
FIXED = CALC.replace("return a + b", "return a + b  # checked")
ASKED = CALC.replace("return a + b", "return b + a  # as asked").replace("return a / b", "return a / b if b else 0.0")
KEPT = CALC.replace("return a + b", "return b + a  # as asked")  # ASKED without its second hunk
USAGE = {"line": 6, "column": 12}  # `add` in `twice`


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found is not None:
            return found
    pytest.skip("Chromium not found: apt-get install chromium (scripts/install-test-tools.sh does it as root)")


def _tools() -> tuple[str, str]:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm not found: the VS Code end-to-end test needs Node.js 20 with npm")
    if not CODE_SERVER.exists() or not (WEB / "node_modules" / "playwright-core").exists():
        pytest.skip(
            "code-server/playwright-core not installed in tests/e2e/vscode_web: run scripts/install-test-tools.sh"
        )
    return str(CODE_SERVER), _chromium()


@pytest.fixture(scope="module")
def vsix(packed_vsix: Path) -> Path:
    _tools()
    return packed_vsix


@pytest.fixture
def repo(tmp_path: Path, isolated_home: Path) -> Path:
    return make_repo(tmp_path / "repo", {"calc.py": CALC, "README.md": "# calc\n"})


def _replay(tmp_path: Path) -> list[str]:
    """``--set`` pairs for a replayed bug_fix run: the coder comments ``add``, and swaps it on feedback."""
    entries: list[dict[str, Any]] = [
        {"role": "orchestrator", "answer": choose("bug_fix", "a crash report", code_review="SKIP"), "repeat": True},
        {
            "role": "coder",
            "match": "swap the operands",
            "tool_calls": [{"name": "write_file", "args": {"path": "calc.py", "content": ASKED}}],
        },  # the runs share the daemon's script: each entry is used once, the next answer ends the attempt
        {"role": "coder", "match": "swap the operands", "answer": {"status": "success", "summary": "swapped"}},
        {  # a model that takes a second: the run is seen in its Fix stage
            "role": "coder",
            "delay_seconds": 1.0,
            "tool_calls": [{"name": "write_file", "args": {"path": "calc.py", "content": FIXED}}],
        },
        {"role": "coder", "answer": {"status": "success", "summary": "commented"}},
        {  # the second run (rejected) edits too, so it also ends in review
            "role": "coder",
            "tool_calls": [{"name": "write_file", "args": {"path": "calc.py", "content": FIXED}}],
        },
        everyone_succeeds(),
    ]
    script = write_script(tmp_path / "script.yaml", entries)
    return ["--set", f"pipeline.replay_script={script}", "--set", "pipeline.resilience.cache=false"]


@asynccontextmanager
async def code_server(tmp_path: Path, vsix: Path, workspace: Path, extra: list[str]) -> AsyncGenerator[str]:
    """code-server on a free loopback port with the .vsix installed and the user settings that point
    the extension at this checkout's ``ided lsp``; yields the URL that opens ``workspace``."""
    binary, _ = _tools()
    data = tmp_path / "vscode-data"
    extensions = tmp_path / "vscode-extensions"
    args = server_args(tmp_path / "state")
    settings = {
        "ided.path": sys.executable,
        "ided.extraArgs": [*args[:-1], "--set", "intel.ready_wait_seconds=60", *extra],
        "ided.search.maxResults": 0,  # a bad k: the extension sends k=1, nothing is refused or printed
        "ided.search.mode": "lexical",
        "git.enabled": False,  # the git extension's own index refreshes would race ided's commits
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "security.workspace.trust.enabled": False,
        "telemetry.telemetryLevel": "off",
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "update.mode": "none",
    }
    (data / "User").mkdir(parents=True)
    (data / "User" / "settings.json").write_text(json.dumps(settings, indent=2))
    config = tmp_path / "code-server.yaml"
    config.write_text("auth: none\ncert: false\n")
    # the Python language servers on PATH, as a user's own install puts them (no intel.search_path); VS
    # Code's server gives the extension host the environment of the user's login shell, so the profile
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / ".profile").write_text(f'export PATH="{SEARCH_PATH[0]}:$PATH"\n')
    path = os.pathsep.join([SEARCH_PATH[0], os.environ.get("PATH", "")])
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "xdg-data"), "PATH": path}
    env["SHELL"] = "/bin/bash"
    common = ["--config", str(config), "--user-data-dir", str(data), "--extensions-dir", str(extensions)]
    install = await asyncio.create_subprocess_exec(
        binary, *common, "--install-extension", str(vsix),
        env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    said, _ = await asyncio.wait_for(install.communicate(), 120)
    assert install.returncode == 0, said.decode(errors="replace")
    process = await asyncio.create_subprocess_exec(
        binary, *common, "--bind-addr", "127.0.0.1:0", "--auth", "none", "--disable-telemetry",
        "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override",
        str(workspace),
        env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert process.stdout is not None
    seen: list[str] = []
    try:
        url = None
        while url is None:
            line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode(errors="replace")
            assert line, "code-server exited before listening:\n" + "".join(seen)
            seen.append(line)
            found = re.search(r"HTTP server listening on (http://127\.0\.0\.1:\d+)/", line)
            url = found.group(1) if found else None
        drain = asyncio.create_task(process.stdout.read())
        try:
            yield f"{url}/?folder={workspace}"
        finally:
            process.terminate()
            await asyncio.wait_for(process.wait(), 30)
            drain.cancel()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await stop_daemon(load_config(workspace, overrides=overrides(tmp_path / "state")))


async def _drive(tmp_path: Path, url: str) -> dict[str, Any]:
    _, browser = _tools()
    shots = tmp_path / "screenshots"
    shots.mkdir()
    out = tmp_path / "drive-report.json"
    settings = {
        "url": url,
        "chromium": browser,
        "out": str(out),
        "shots": str(shots),
        "timeoutMs": STEP_WAIT_MS,
        "searchQuery": "add",
        "dryRequest": "how should calc grow?",
        "request": "fix add",
        "feedback": "please swap the operands",
        "fixedMarker": "# checked",
        "acceptedMarker": "# as asked",
        "usage": USAGE,
        "dropHunk": "@@ -15,4 +15,4 @@",
    }
    (tmp_path / "drive.json").write_text(json.dumps(settings))
    node = shutil.which("node")
    assert node is not None
    process = await asyncio.create_subprocess_exec(
        node, str(WEB / "drive.mjs"), str(tmp_path / "drive.json"),
        cwd=str(WEB), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:
        printed, _ = await asyncio.wait_for(process.communicate(), DRIVE_TIMEOUT_S)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert out.exists(), printed.decode(errors="replace")
    report: dict[str, Any] = json.loads(out.read_text())
    if KEEP_SCREENSHOTS:
        shutil.copytree(shots, KEEP_SCREENSHOTS, dirs_exist_ok=True)
    assert "error" not in report, json.dumps(report, indent=2)
    return report


def _step(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in report["steps"] if s["name"] == name)


def _output_channel(tmp_path: Path) -> str:
    """The text of the extension's "ided" output channel (the server's stderr), as code-server logs it."""
    logs = sorted((tmp_path / "vscode-data" / "logs").rglob("*ided*.log"))
    return "".join(p.read_text(errors="replace") for p in logs)


async def test_search_status_run_review_accept_and_rollback_in_code_server(
    vsix: Path, repo: Path, tmp_path: Path
) -> None:
    require_server("python")
    async with code_server(tmp_path, vsix, repo, _replay(tmp_path)) as url:
        report = await _drive(tmp_path, url)

    assert report["errors"] == [], report["errors"]
    indexed = _step(report, "indexed")
    assert any(re.fullmatch(r"ided \d+", item) for item in indexed["statusBar"]), indexed

    search = _step(report, "search")
    assert search["hits"] == ["add calc.py:1 def add(a, b)"], search  # maxResults 0 is sent as k=1
    assert search["title"].startswith('ided: 1 hit(s) for "add"')
    assert search["editor"][:2] == CALC.splitlines()[:2]

    intel = _step(report, "intel")  # the default ided.intel ("auto"): no other extension answers Python
    assert intel["definition"].startswith("Ln 1, Col 5"), intel  # F12 on `add` in `twice` went to `def add`
    assert "def add(" in intel["hover"], intel
    assert "References (2)" in intel["references"], intel  # the definition and the use in `twice`

    status = _step(report, "status")["message"]
    assert re.match(r"ided: \d+ files, \d+ chunks, 0% embedded — ready \(daemon pid \d+\)", status), status

    dry = _step(report, "dry run")
    assert dry["message"].startswith("ided: dry run ") and "workflow bug_fix" in dry["message"]
    assert dry["run"]["rows"][0].startswith("how should calc grow?")
    plan = dry["plan"]  # the plan webview: a box per stage, each route labelled
    assert plan["title"] == "how should calc grow?" and "bug_fix" in plan["meta"], plan
    assert plan["nodes"] == ["○ Reproduction", "○ Diagnosis", "○ Fix", "○ Regression testing", "DONE"], plan
    assert sorted(plan["edges"]) == [
        "diagnosis -failure-> ABORT",
        "diagnosis -success-> fix",
        "fix -failure-> ABORT",
        "fix -success-> regression_testing",
        "regression_testing -failure-> ABORT",
        "regression_testing -retry-> fix",
        "regression_testing -success-> DONE",
        "reproduction -success, failure-> diagnosis",
    ], plan
    assert [s.split(":")[0] for s in plan["skipped"]] == ["Code review"], plan
    assert any(tab.startswith("ided plan: ") for tab in dry["tabs"]), dry["tabs"]

    review = _step(report, "review")
    run_id = re.search(r"run (\S+) is ready for review: 1 file\(s\) changed", review["message"])
    assert run_id is not None, review["message"]
    rows: list[str] = review["run"]["rows"]
    assert rows[0].startswith("fix add") and f"run {run_id.group(1)} · bug_fix · waiting for your review" in rows[0]
    assert any(row.startswith("Fix") and "completed" in row for row in rows), rows
    assert any(row.startswith("Code review") and "skipped" in row for row in rows), rows
    assert review["review"]["rows"] == ["calc.py M +1 −1", "@@ -1,5 +1,5 @@ - return a + b"]
    assert any(f"calc.py (ided run {run_id.group(1)}: before ↔ after)" in tab for tab in review["tabs"]), review["tabs"]
    assert review["before"][:2] == CALC.splitlines()[:2] and review["after"][:2] == FIXED.splitlines()[:2]
    assert "ided: review 1 file(s)" in review["statusBar"]
    # live progress: the status bar passed through the Fix stage (the scripted coder takes a second there)
    assert any(re.fullmatch(r"ided 2/4 [Ff]ix", t) for t in report["statusTexts"]), report["statusTexts"]

    all_changes = _step(report, "all changes")["tabs"]
    assert any(tab.startswith(f"ided run {run_id.group(1)} (1 file)") for tab in all_changes), all_changes

    second = _step(report, "review 2")  # after feedback from the notification's button
    assert second["message"] == f"ided: run {run_id.group(1)} is ready for review (round 2): 1 file(s) changed"
    assert second["before"][:2] == CALC.splitlines()[:2] and second["after"][:2] == ASKED.splitlines()[:2]
    # one hunk dropped in the Review view: the file is kept in part
    assert second["marked"]["rows"] == [
        "calc.py M +2 −2 · in part",
        "@@ -1,5 +1,5 @@ - return a + b",
        "@@ -15,4 +15,4 @@ def mul(a, b): - return a / b",
    ], second["marked"]
    assert second["run"]["rows"][-1].startswith("Log run finished: succeeded"), second["run"]
    assert any(row.startswith("Fix completed · attempt 2") for row in second["run"]["rows"]), second["run"]

    accepted = _step(report, "accepted")  # from the round-2 notification's button: what is kept
    assert accepted["message"] == (
        f"ided: accepted run {run_id.group(1)} in part: 1 commit(s), 1 file(s) on main; kept in part: calc.py"
    ), accepted["message"]
    assert accepted["editor"][:2] == KEPT.splitlines()[:2]  # the open editor follows the file on disk
    assert accepted["tabs"] == ["calc.py"], accepted["tabs"]  # the run's diff editors closed
    assert "ided run accepted" in accepted["statusBar"]
    assert accepted["run"]["rows"][-1].startswith("Log accepted on main (in part): 1 commit(s), calc.py"), accepted[
        "run"
    ]

    rolled = _step(report, "rolled back")
    assert rolled["message"].startswith(f"ided: rolled back run {run_id.group(1)}: 1 file(s) restored on main")
    assert rolled["editor"][:2] == CALC.splitlines()[:2]
    assert "ided run rolled back" in rolled["statusBar"]
    assert rolled["run"]["rows"][0].endswith("· rolled back"), rolled["run"]
    assert rolled["run"]["rows"][-1].startswith("Log rolled back: 1 revert commit(s), calc.py"), rolled["run"]

    refused = _step(report, "refused")["message"]
    assert refused.startswith(f"ided: rollback refused: run {run_id.group(1)} is rolled back, not accepted"), refused
    assert "vcs_failed" in refused and "\n" not in refused

    rejected = _step(report, "rejected")
    second_id = re.search(r"run (\S+) is ready for review: ", rejected["ready"])
    assert second_id is not None and second_id.group(1) != run_id.group(1), rejected["ready"]
    assert rejected["message"] == f"ided: rejected run {second_id.group(1)}: your files are untouched"
    assert not any("before ↔ after" in tab for tab in rejected["tabs"]), rejected["tabs"]
    assert "ided run rejected" in rejected["statusBar"]

    assert (repo / "calc.py").read_text() == CALC
    log = git(repo, "log", "--format=%s%n%b", "main")
    assert "ided-run: " in log and "Revert" in log
    assert len(git(repo, "rev-list", "main").split()) == 3  # initial, the reviewed commit kept in part, its revert
    channel = _output_channel(tmp_path)
    assert "Traceback" not in channel, channel
    assert "differed" not in channel and "WARNING" not in channel, channel  # a quiet start
    for name in (
        "search",
        "hover",
        "references",
        "plan",
        "review",
        "review-hunks",
        "accepted",
        "rolled-back",
        "rejected",
    ):
        assert (tmp_path / "screenshots" / f"{name}.png").stat().st_size > 10_000
