"""The Neovim plugin's run commands in a real headless Neovim against the real ``ided lsp`` (the LLM
scripted by the replay provider): ``:IdedDryRun``, ``:IdedRun`` with its progress window, the review
in diff mode, ``:IdedFeedback``, ``:IdedAccept``, ``:IdedRollback``, ``:IdedReject``; and the opt-in
standard definition/references/hover answered from a language server in the project's venv."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from daemon.trust import TrustStore
from tests.e2e.lsp_support import copy_fixture
from tests.e2e.nvim_support import run_headless
from tests.intel_tools import SEARCH_PATH, require_server
from tests.pipeline_support import choose, everyone_succeeds, write_script
from tests.vcs_support import git, make_repo

pytestmark = pytest.mark.e2e

CALC = "def add(a, b):\n    return a + b\n"
FIXED = "def add(a, b):\n    return a + b  # checked\n"
ASKED = "def add(a, b):\n    return b + a  # as asked\n"


@pytest.fixture
def repo(tmp_path: Path, isolated_home: Path) -> Path:
    return make_repo(tmp_path / "repo", {"calc.py": CALC, "README.md": "# calc\n"})


def bug_fix_script(tmp_path: Path) -> tuple[str, ...]:
    """``--set`` pairs for a replayed bug_fix run: the coder fixes add, and swaps it on feedback."""
    entries: list[dict[str, Any]] = [
        {"role": "orchestrator", "answer": choose("bug_fix", "a crash report", code_review="SKIP"), "repeat": True},
        {
            "role": "coder",
            "match": "swap the operands",
            "tool_calls": [{"name": "write_file", "args": {"path": "calc.py", "content": ASKED}}],
        },  # each request opens its own pipeline, so the script starts over: the next answer ends the attempt
        {"role": "coder", "match": "swap the operands", "answer": {"status": "success", "summary": "swapped"}},
        {"role": "coder", "tool_calls": [{"name": "write_file", "args": {"path": "calc.py", "content": FIXED}}]},
        everyone_succeeds(),
    ]
    script = write_script(tmp_path / "script.yaml", entries)
    return ("--set", f"pipeline.replay_script={script}", "--set", "pipeline.resilience.cache=false")


def messages(report: dict[str, Any]) -> list[str]:
    return [n["message"] for n in report["notes"]]


DRY_RUN = r"""
once("IdedRunStarted", function(event)
  report.dry = event.data
  local buf = vim.fn.bufnr("ided://run/" .. event.data.runId)
  report.window = vim.fn.bufwinid(buf) ~= -1
  report.progress = lines(buf)
  vim.cmd("IdedSymbols Zzqqxxnothing")
end)
once("IdedSymbolsDone", function()
  finish()
end)
vim.cmd("IdedAccept")
vim.cmd("IdedDryRun how should calc grow?")
"""


async def test_a_dry_run_shows_its_plan_in_the_progress_window(repo: Path, tmp_path: Path) -> None:
    orchestrator = {"role": "orchestrator", "answer": choose("architecture_discussion"), "repeat": True}
    script = write_script(tmp_path / "script.yaml", [orchestrator])
    extra = ("--set", f"pipeline.replay_script={script}", "--set", "pipeline.resilience.cache=false")
    report = await run_headless(tmp_path, repo, DRY_RUN, *extra)

    assert report["dry"]["status"] == "planned" and report["dry"]["workflow"] == "architecture_discussion"
    assert report["window"] is True
    progress: list[str] = report["progress"]
    assert progress[0] == f"dry run {report['dry']['runId']}: how should calc grow?"
    assert progress[1] == f"workflow architecture_discussion; stages: {', '.join(report['dry']['stages'])}"
    said = messages(report)
    assert "ided: no run yet: start one with :IdedRun {request}" in said  # :IdedAccept before any run
    assert "ided: nothing found for symbols matching Zzqqxxnothing" in said
    assert not any("ided: ided:" in m or "for ided:" in m for m in said)


FULL_LOOP = r"""
local calc = vim.api.nvim_get_current_buf()
ided.start(calc)
local function diff_windows()
  local count = 0
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.wo[win].diff then
      count = count + 1
    end
  end
  return count
end
local function review(key)
  once("IdedReviewOpened", function(event)
    report[key] = { files = #event.data.files, commits = #event.data.commits, list = lines(0) }
    once("IdedDiffOpened", function(opened)
      report[key].before = lines(opened.data.before)
      report[key].after = lines(opened.data.after)
      report[key].diff_windows = diff_windows()
      report[key].tab = vim.fn.tabpagenr()
      vim.cmd("tabclose")
      if key == "review1" then
        vim.cmd("IdedFeedback please swap the operands")
      else
        vim.cmd("IdedAccept")
      end
    end)
    vim.cmd.normal(vim.api.nvim_replace_termcodes("<CR>", true, false, true))
  end)
end
once("IdedRunStarted", function(event)
  report.started = event.data
  review("review1")
  once("IdedFeedbackStarted", function(feedback)
    report.feedback = feedback.data
    review("review2")
  end)
end)
once("IdedAccepted", function(event)
  report.accepted = event.data
  report.buffer_after_accept = lines(calc)
  report.progress = lines(vim.fn.bufnr("ided://run/" .. report.started.runId))
  vim.cmd("IdedRollback")
end)
once("IdedRolledBack", function(event)
  report.rolled_back = event.data
  report.buffer_after_rollback = lines(calc)
  finish()
end)
vim.cmd("IdedRun fix add")
"""


async def test_run_review_in_diff_mode_feedback_accept_and_rollback(repo: Path, tmp_path: Path) -> None:
    report = await run_headless(tmp_path, repo, FULL_LOOP, *bug_fix_script(tmp_path), open_file="calc.py")

    assert report["errors"] == []
    run_id: str = report["started"]["runId"]
    assert report["started"]["workflow"] == "bug_fix" and report["started"]["status"] == "running"
    first = report["review1"]
    assert first["list"][0].startswith(f"ided review of run {run_id} (ided/run/{run_id}, 1 commit(s))")
    assert first["list"][3] == "M calc.py  +1 -1"
    assert first["before"] == CALC.splitlines() and first["after"] == FIXED.splitlines()
    assert first["diff_windows"] == 2 and first["tab"] == 2

    assert report["feedback"]["runId"] == run_id
    second = report["review2"]
    assert second["commits"] == 2 and second["after"] == ASKED.splitlines()

    progress: list[str] = report["progress"]
    assert progress[0] == f"run {run_id}: fix add"
    assert "> Fix" in progress and "> Fix (attempt 2)" in progress
    assert "    write_file calc.py" in progress
    assert "feedback: please swap the operands" in progress
    assert sum(line.startswith("review: 1 file(s) changed") for line in progress) == 2
    assert sum(line.startswith("run finished: succeeded") for line in progress) == 2

    assert report["accepted"]["files"] == ["calc.py"]
    assert report["buffer_after_accept"] == ASKED.splitlines()  # the open buffer follows the file
    assert sorted(report["rolled_back"]["reverted"]) == sorted(report["accepted"]["commits"])
    assert report["buffer_after_rollback"] == CALC.splitlines()
    assert (repo / "calc.py").read_text() == CALC
    assert f"ided: accepted run {run_id}: 2 commit(s), 1 file(s)" in messages(report)


REJECT = r"""
once("IdedRunFinished", function(event)
  report.finished = event.data
  once("IdedReviewOpened", function()
    vim.cmd("IdedReject")
  end)
end)
once("IdedRejected", function(event)
  report.rejected = event.data
  vim.cmd("IdedFeedback please swap the operands")
  once("IdedRunError", function(error)
    report.feedback_after_reject = error.data
    vim.cmd("IdedCancel not-a-run")
    once("IdedRunError", function(cancel)
      report.cancel_unknown = cancel.data
      finish()
    end)
  end)
end)
vim.cmd("IdedRun fix add")
"""


async def test_reject_leaves_the_files_alone_and_later_refusals_are_shown(repo: Path, tmp_path: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    report = await run_headless(tmp_path, repo, REJECT, *bug_fix_script(tmp_path))

    assert report["finished"]["event"]["status"] == "succeeded"
    assert report["rejected"]["runId"] == report["finished"]["runId"]
    assert (repo / "calc.py").read_text() == CALC and git(repo, "rev-parse", "HEAD") == head
    refused = report["feedback_after_reject"]  # a rejected run takes no feedback (docs/review.md)
    assert refused["method"] == "ided/run/feedback" and refused["code"] == -32803
    assert "rejected" in refused["message"]
    assert report["cancel_unknown"]["data"]["code"] == "run_not_found"
    assert any(n["message"] == "ided: " + refused["message"] and n["level"] == 4 for n in report["notes"])


INTEL = r"""
vim.api.nvim_create_autocmd("LspAttach", {
  once = true,
  callback = function(event)
    local client = vim.lsp.get_client_by_id(event.data.client_id)
    report.capabilities = {
      definition = client.server_capabilities.definitionProvider or false,
      hover = client.server_capabilities.hoverProvider or false,
      references = client.server_capabilities.referencesProvider or false,
    }
    vim.api.nvim_win_set_cursor(0, { 26, 9 })
    vim.lsp.buf.definition({
      on_list = function(definitions)
        report.definitions = definitions.items
        vim.lsp.buf.references({ includeDeclaration = true }, {
          on_list = function(references)
            report.references = references.items
            local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
            vim.lsp.buf_request_all(0, "textDocument/hover", params, function(results)
              local answer = results[client.id]
              report.hover = answer and answer.result and answer.result.contents or vim.NIL
              report.hover_error = answer and answer.err and answer.err.message or vim.NIL
              finish()
            end)
          end,
        })
      end,
    })
  end,
})
ided.start(0)
"""


async def test_definition_references_and_hover_through_ided_when_turned_on(tmp_path: Path, isolated_home: Path) -> None:
    server = require_server("python")
    installed = next(
        Path(d) / n for d in SEARCH_PATH for n in (f"{server}-langserver", server) if (Path(d) / n).exists()
    )
    workspace = copy_fixture(tmp_path / "ws")
    (workspace / ".venv" / "bin").mkdir(parents=True)
    (workspace / ".venv" / "bin" / installed.name).symlink_to(installed)
    TrustStore.default().add(workspace)  # your own project: its .venv/bin is searched once trusted
    geometry = workspace / "src" / "geometry.py"
    geometry.write_text(geometry.read_text() + "\n\nUNIT = hypotenuse(3.0, 4.0)\n")  # line 26
    report = await run_headless(
        tmp_path,
        workspace,
        INTEL,
        "--set",
        "intel.ready_wait_seconds=60",
        intel=True,
        open_file="src/geometry.py",
    )

    assert report["capabilities"] == {"definition": True, "hover": True, "references": True}
    (definition,) = report["definitions"]
    assert definition["filename"] == str(geometry) and definition["lnum"] == 21
    assert sorted(item["lnum"] for item in report["references"]) == [21, 26]
    assert report["hover_error"] is None
    assert report["hover"]["kind"] == "markdown" and "def hypotenuse(" in report["hover"]["value"]
    assert "Length of the long side of a right triangle" in report["hover"]["value"]


OFF = r"""
vim.api.nvim_create_autocmd("LspAttach", {
  once = true,
  callback = function(event)
    local client = vim.lsp.get_client_by_id(event.data.client_id)
    report.definition = client.server_capabilities.definitionProvider or false
    report.hover = client.server_capabilities.hoverProvider or false
    finish()
  end,
})
ided.start(0)
"""


async def test_definition_and_hover_stay_with_your_own_servers_by_default(tmp_path: Path, isolated_home: Path) -> None:
    workspace = copy_fixture(tmp_path / "ws")
    report = await run_headless(tmp_path, workspace, OFF, open_file="src/geometry.py")
    assert report["definition"] is False and report["hover"] is False
