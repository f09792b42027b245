"""The Neovim plugin's run commands in a real headless Neovim against the real ``ided lsp`` (the LLM
scripted by the replay provider): ``:IdedDryRun`` and the plan drawn as a text graph (``:IdedPlan``),
``:IdedRun`` with its progress window (one, however many runs), the review in diff mode, kept or
dropped hunk by hunk, ``:IdedFeedback``, ``:IdedAccept`` (whole or in part), ``:IdedRollback``,
``:IdedReject`` (the review list closes after both answers); and the standard
definition/references/hover, on by default, answered from a language server found on ``PATH``, given
way to another server attached to the buffer, and a plain message when none is installed."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.lsp_support import copy_fixture
from tests.e2e.nvim_support import run_headless
from tests.intel_tools import SEARCH_PATH, require_server
from tests.pipeline_support import choose, everyone_succeeds, reflected_workflow, write_script
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


WINDOWS_BY_FILETYPE = r"""
local function windows_by_filetype()
  local counts = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local ft = vim.bo[vim.api.nvim_win_get_buf(win)].filetype
    counts[ft ~= "" and ft or "none"] = (counts[ft ~= "" and ft or "none"] or 0) + 1
  end
  return counts
end
"""

DRY_RUN = (
    WINDOWS_BY_FILETYPE
    + r"""
once("IdedRunStarted", function(event)
  report.dry = event.data
  local buf = vim.fn.bufnr("ided://run/" .. event.data.runId)
  report.window = vim.fn.bufwinid(buf) ~= -1
  report.progress = lines(buf)
  once("IdedRunStarted", function(again)
    report.again = again.data
    report.windows = windows_by_filetype()
    report.shown = vim.api.nvim_win_get_buf(vim.fn.win_findbuf(vim.fn.bufnr("ided://run/" .. again.data.runId))[1])
      == vim.fn.bufnr("ided://run/" .. again.data.runId)
    vim.cmd("IdedSymbols Zzqqxxnothing")
  end)
  vim.cmd("IdedDryRun and what then?")
end)
once("IdedSymbolsDone", function()
  finish()
end)
vim.cmd("IdedAccept")
vim.cmd("IdedDryRun how should calc grow?")
"""
)


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
    # a second run's progress takes the window of the first: one progress window, one plan window
    assert report["again"]["runId"] != report["dry"]["runId"] and report["shown"] is True
    assert report["windows"]["idedrun"] == 1 and report["windows"]["idedplan"] == 1, report["windows"]
    said = messages(report)
    assert "ided: no run yet: start one with :IdedRun {request}" in said  # :IdedAccept before any run
    assert "ided: nothing found for symbols matching Zzqqxxnothing" in said
    assert not any("ided: ided:" in m or "for ided:" in m for m in said)


FULL_LOOP = (
    WINDOWS_BY_FILETYPE
    + r"""
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
  local id = report.started.runId
  local left = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    if name:find("ided://review/", 1, true) or name:find("ided://" .. id .. "/", 1, true) then
      table.insert(left, name)
    end
  end
  report.after_accept = { buffers = left, windows = windows_by_filetype(), tabs = vim.fn.tabpagenr("$") }
  once("IdedPlanOpened", function(plan)
    report.plan = lines(plan.data.buf)
    vim.cmd("IdedRollback")
  end)
  vim.cmd("IdedPlan")
end)
once("IdedRolledBack", function(event)
  report.rolled_back = event.data
  report.buffer_after_rollback = lines(calc)
  finish()
end)
vim.cmd("IdedRun fix add")
"""
)


async def test_run_review_in_diff_mode_feedback_accept_and_rollback(repo: Path, tmp_path: Path) -> None:
    report = await run_headless(tmp_path, repo, FULL_LOOP, *bug_fix_script(tmp_path), open_file="calc.py")

    assert report["errors"] == []
    run_id: str = report["started"]["runId"]
    assert report["started"]["workflow"] == "bug_fix" and report["started"]["status"] == "running"
    first = report["review1"]
    assert first["list"][0].startswith(f"ided review of run {run_id} (ided/run/{run_id}, 1 commit(s))")
    assert first["list"][3] == "[x] M calc.py  +1 -1"
    assert first["list"][4] == "    [x] @@ -1,2 +1,2 @@  -    return a + b"
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
    # the answered review is gone: no list with live keys, no diff tab, no scratch buffer of the run
    assert report["after_accept"]["buffers"] == [] and report["after_accept"]["tabs"] == 1
    assert "idedreview" not in report["after_accept"]["windows"]
    # the plan graph followed the run: every stage done, the fix stage twice (feedback)
    plan: list[str] = report["plan"]
    assert plan[0] == f"ided plan of run {run_id} · bug_fix · finished: succeeded"
    assert "  │ ✓ Reproduction" in [line[: len("  │ ✓ Reproduction")] for line in plan]
    assert any(line.startswith("  │ ✓ Fix · attempt 2 ") for line in plan), plan
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
  report.list_after_reject = vim.fn.bufexists("ided://review/" .. event.data.runId)
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
    assert report["list_after_reject"] == 0  # the review list closed, its keys with it
    assert (repo / "calc.py").read_text() == CALC and git(repo, "rev-parse", "HEAD") == head
    refused = report["feedback_after_reject"]  # a rejected run takes no feedback (docs/review.md)
    assert refused["method"] == "ided/run/feedback" and refused["code"] == -32803
    assert "rejected" in refused["message"]
    assert report["cancel_unknown"]["data"]["code"] == "run_not_found"
    assert any(n["message"] == "ided: " + refused["message"] and n["level"] == 4 for n in report["notes"])


PLAN = r"""
once("IdedPlanOpened", function(event)
  report.plan = lines(event.data.buf)
  report.filetype = vim.bo[event.data.buf].filetype
  finish()
end)
vim.cmd("IdedDryRun fix add")
"""

GRAPH = [
    "",
    "                    start",
    "                    │",
    "                    ▼",
    "  ┌──────────────────────────────────┐",
    "  │ ○ Reproduction                   │",
    "  └──────────────────────────────────┘",
    "                    │ success, failure",
    "                    ▼",
    "  ┌──────────────────────────────────┐",
    "  │ ○ Diagnosis                      │ ──failure──▶ ABORT",
    "  └──────────────────────────────────┘",
    "                    │ success",
    "                    ▼",
    "  ┌──────────────────────────────────┐",
    "  │ ○ Fix                            │ ──failure──▶ ABORT",
    "  └──────────────────────────────────┘",
    "                    │ success",
    "                    ▼",
    "  ┌──────────────────────────────────┐",
    "  │ ○ Regression testing             │ ──failure──▶ ABORT",
    "  └──────────────────────────────────┘ ──retry────▶ ↑ Fix",
    "                    │ success",
    "                    ▼",
    "  ╭──────────────────────────────────╮",
    "  │               DONE               │",
    "  ╰──────────────────────────────────╯",
    "",
    "  skipped Code review: scripted skip",
    "",
    "  ○ pending  ▶ running  ✓ completed  ✗ failed    q close",
]


async def test_a_dry_run_draws_its_plan_as_a_graph_with_labelled_routes(repo: Path, tmp_path: Path) -> None:
    orchestrator = {"role": "orchestrator", "answer": choose("bug_fix", "a crash report", code_review="SKIP")}
    script = write_script(tmp_path / "script.yaml", [orchestrator])
    extra = ("--set", f"pipeline.replay_script={script}", "--set", "pipeline.resilience.cache=false")
    report = await run_headless(tmp_path, repo, PLAN, *extra)

    plan: list[str] = report["plan"]
    assert re.fullmatch(r"ided plan of run \S+ · bug_fix · dry run: nothing ran", plan[0]), plan[0]
    assert plan[1:] == GRAPH, "\n".join(plan)
    assert report["filetype"] == "idedplan"


GRAPH_JUDGED = [
    "",
    "                    start",
    "                    │",
    "                    ▼",
    "  ┌──────────────────────────────────┐",
    "  │ ○ Reproduction                   │",
    "  └──────────────────────────────────┘",
    "                    │ success, failure",
    "                    ▼",
    "  ┌──────────────────────────────────┐",
    "  │ ○ Diagnosis                      │ ──failure─────▶ ABORT",
    "  └──────────────────────────────────┘",
    "                    │ success",
    "                    ▼",
    "  ┌──────────────────────────────────┐",
    "  │ ○ Fix                            │ ──failure─────▶ ABORT",
    "  └──────────────────────────────────┘",
    "                    │ success",
    "                    ▼",
    "  ┌──────────────────────────────────┐",
    "  │ ◇ Reflector                      │ ──limit───────▶ ABORT",
    "  └──────────────────────────────────┘ ──send back───▶ ↑ Fix",
    "                    │ accept fix",
    "                    ▼",
    "  ┌──────────────────────────────────┐",
    "  │ ○ Regression testing             │ ──failure─────▶ ABORT",
    "  └──────────────────────────────────┘ ──retry───────▶ ↑ Fix",
    "                    │ success",
    "                    ▼",
    "  ┌──────────────────────────────────┐",
    "  │ ◇ Evaluator                      │",
    "  └──────────────────────────────────┘",
    "                    │ scored",
    "                    ▼",
    "  ╭──────────────────────────────────╮",
    "  │               DONE               │",
    "  ╰──────────────────────────────────╯",
    "",
    "  skipped Code review: scripted skip",
    "",
    "  ○ pending  ▶ running  ✓ completed  ✗ failed    q close",
]
"""bug_fix with reflection (the fix stage) and evaluation on: the reflector after the fix, the evaluator before DONE."""


async def test_a_workflows_reflector_and_evaluator_are_drawn_as_boxes_with_their_labelled_routes(
    repo: Path, tmp_path: Path
) -> None:
    workflow = reflected_workflow(
        "bug_fix_judged", reflection={"enabled": True, "stages": ["fix"]}, evaluation={"enabled": True}
    )
    (repo / ".ided" / "workflows").mkdir(parents=True)
    (repo / ".ided" / "workflows" / "bug_fix_judged.yaml").write_text(workflow, encoding="utf-8")
    orchestrator = {"role": "orchestrator", "answer": choose("bug_fix_judged", code_review="SKIP")}
    script = write_script(tmp_path / "script.yaml", [orchestrator])
    extra = ("--set", f"pipeline.replay_script={script}", "--set", "pipeline.resilience.cache=false")
    report = await run_headless(tmp_path, repo, PLAN, *extra)

    plan: list[str] = report["plan"]
    assert re.fullmatch(r"ided plan of run \S+ · bug_fix_judged · dry run: nothing ran", plan[0]), plan[0]
    assert plan[1:] == GRAPH_JUDGED, "\n".join(plan)


OPS = [("add", "+"), ("sub", "-"), ("mul", "*")]
LONG = "".join(f"def {name}(a, b):\n    return a {op} b\n\n\n" for name, op in [*OPS, ("div", "/")]).rstrip() + "\n"
LONG_RUN = LONG.replace("return a + b", "return a + b  # checked").replace("return a / b", "return a / b if b else 0.0")
README_RUN = "# calc\n\nAdds, subtracts, multiplies, divides.\n"

PER_HUNK = r"""
local function row(buf, pattern)
  for i, line in ipairs(lines(buf)) do
    if line:find(pattern, 1, true) then
      return i
    end
  end
  error("no line with " .. pattern .. " in " .. vim.inspect(lines(buf)))
end
local function press(key)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(key, true, false, true), "mx", false)
end
once("IdedReviewOpened", function(event)
  local buf = vim.api.nvim_get_current_buf()
  report.run_id = event.data.runId
  report.before = lines(buf)
  vim.api.nvim_win_set_cursor(0, { row(buf, "@@ -11,4 +11,4 @@"), 0 })
  press("<Space>")  -- drop the second hunk of calc.py
  vim.api.nvim_win_set_cursor(0, { row(buf, "M README.md"), 0 })
  press("<Space>")  -- drop README.md whole
  report.marked = lines(buf)
  press("a")
end)
once("IdedAccepted", function(event)
  report.accepted = event.data
  report.list_left = vim.fn.bufexists("ided://review/" .. report.run_id)
  finish()
end)
vim.cmd("IdedRun fix add")
"""


async def test_the_review_keeps_or_drops_each_hunk_and_accepts_only_what_is_kept(
    tmp_path: Path, isolated_home: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"calc.py": LONG, "README.md": "# calc\n"})
    entries: list[dict[str, Any]] = [
        {"role": "orchestrator", "answer": choose("bug_fix", "a crash report", code_review="SKIP"), "repeat": True},
        {
            "role": "coder",
            "tool_calls": [
                {"name": "write_file", "args": {"path": "calc.py", "content": LONG_RUN}},
                {"name": "write_file", "args": {"path": "README.md", "content": README_RUN}},
            ],
        },
        everyone_succeeds(),
    ]
    script = write_script(tmp_path / "script.yaml", entries)
    extra = ("--set", f"pipeline.replay_script={script}", "--set", "pipeline.resilience.cache=false")
    head = git(repo, "rev-parse", "HEAD")
    report = await run_headless(tmp_path, repo, PER_HUNK, *extra)

    assert report["errors"] == []
    before: list[str] = report["before"]
    assert before[3:8] == [
        "[x] M README.md  +2 -0",
        "    [x] @@ -1 +1,3 @@  +Adds, subtracts, multiplies, divides.",
        "[x] M calc.py  +2 -2",
        "    [x] @@ -1,5 +1,5 @@  -    return a + b",
        "    [x] @@ -11,4 +11,4 @@ def mul(a, b):  -    return a / b",
    ], before
    marked: list[str] = report["marked"]
    assert marked[3:8] == [
        "[ ] M README.md  +2 -0",
        "    [ ] @@ -1 +1,3 @@  +Adds, subtracts, multiplies, divides.",
        "[~] M calc.py  +2 -2",
        "    [x] @@ -1,5 +1,5 @@  -    return a + b",
        "    [ ] @@ -11,4 +11,4 @@ def mul(a, b):  -    return a / b",
    ], marked
    assert marked[-1] == "a accepts only what is marked [x] (one commit)"

    accepted = report["accepted"]
    assert accepted["partial"] == ["calc.py"] and accepted["dropped"] == ["README.md"]
    assert (repo / "calc.py").read_text() == LONG.replace("return a + b", "return a + b  # checked")
    assert (repo / "README.md").read_text() == "# calc\n"
    assert git(repo, "rev-list", "--count", f"{head}..HEAD") == "1"
    run_id = report["run_id"]
    said = f"ided: accepted run {run_id} in part: 1 commit(s), 1 file(s); kept in part: calc.py; dropped: README.md"
    assert said in messages(report)
    assert report["list_left"] == 0


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


def _geometry_workspace(tmp_path: Path) -> tuple[Path, Path]:
    workspace = copy_fixture(tmp_path / "ws")
    geometry = workspace / "src" / "geometry.py"
    geometry.write_text(geometry.read_text() + "\n\nUNIT = hypotenuse(3.0, 4.0)\n")  # line 26
    return workspace, geometry


def _servers_on_path() -> str:
    """``PATH`` with the Python language servers scripts/install-test-tools.sh installed, as a user's
    ``uv tool install basedpyright`` would put them there (no ``intel.search_path``, no project venv)."""
    require_server("python")
    return os.pathsep.join([SEARCH_PATH[0], "/usr/bin", "/bin"])


async def test_definition_references_and_hover_through_ided_by_default_with_a_server_on_path(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace, geometry = _geometry_workspace(tmp_path)
    report = await run_headless(
        tmp_path, workspace, INTEL, "--set", "intel.ready_wait_seconds=60",
        open_file="src/geometry.py", path=_servers_on_path(),
    )  # fmt: skip

    assert report["capabilities"] == {"definition": True, "hover": True, "references": True}
    (definition,) = report["definitions"]
    assert definition["filename"] == str(geometry) and definition["lnum"] == 21
    assert sorted(item["lnum"] for item in report["references"]) == [21, 26]
    assert report["hover_error"] is None
    assert report["hover"]["kind"] == "markdown" and "def hypotenuse(" in report["hover"]["value"]
    assert "Length of the long side of a right triangle" in report["hover"]["value"]


GIVE_WAY = r"""
local attached = {}
vim.api.nvim_create_autocmd("LspAttach", {
  callback = function(event)
    local client = vim.lsp.get_client_by_id(event.data.client_id)
    attached[client.name] = true
    if not (attached.ided and attached.jedi) then
      return
    end
    local function names(method)
      local found = {}
      for _, c in ipairs(vim.lsp.get_clients({ bufnr = 0, method = method })) do
        table.insert(found, c.name)
      end
      table.sort(found)
      return found
    end
    report.definition = names("textDocument/definition")
    report.hover = names("textDocument/hover")
    report.references = names("textDocument/references")
    report.symbols = names("workspace/symbol")
    vim.api.nvim_win_set_cursor(0, { 26, 9 })
    vim.lsp.buf.definition({
      on_list = function(definitions)
        report.definitions = definitions.items
        finish()
      end,
    })
  end,
})
ided.start(0)
vim.lsp.start({ name = "jedi", cmd = { vim.fn.exepath("jedi-language-server") }, root_dir = vim.fn.getcwd() })
"""


async def test_ided_gives_way_to_another_language_server_attached_to_the_buffer(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace, geometry = _geometry_workspace(tmp_path)
    report = await run_headless(tmp_path, workspace, GIVE_WAY, open_file="src/geometry.py", path=_servers_on_path())

    assert report["definition"] == ["jedi"] and report["hover"] == ["jedi"] and report["references"] == ["jedi"]
    assert "ided" in report["symbols"]  # ided's own index symbols stay
    (definition,) = report["definitions"]  # jedi's answer alone, not doubled by ided's
    assert definition["filename"] == str(geometry) and definition["lnum"] == 21


NO_SERVER = r"""
local notify = vim.notify
vim.notify = function(message, level)
  notify(message, level)
  if message:find("no definitions, references or hover", 1, true) then
    finish()
  end
end
vim.api.nvim_create_autocmd("LspAttach", {
  once = true,
  callback = function()
    vim.api.nvim_win_set_cursor(0, { 26, 9 })
    vim.lsp.buf.definition()
  end,
})
ided.start(0)
"""


async def test_no_language_server_on_path_is_said_plainly_in_the_editor(tmp_path: Path, isolated_home: Path) -> None:
    workspace, _ = _geometry_workspace(tmp_path)
    report = await run_headless(tmp_path, workspace, NO_SERVER, open_file="src/geometry.py", path="/usr/bin:/bin")

    said = [n for n in report["notes"] if "no definitions, references or hover" in n["message"]]
    assert len(said) == 1 and said[0]["level"] == 3, report["notes"]  # WARN
    message: str = said[0]["message"]
    assert message.startswith(
        "ided: no definitions, references or hover for python files: no python language server found"
    )
    assert "basedpyright" in message and "install" in message
