"""Text screenshots of ided's Neovim plugin at each step of the loop, for docs/first-ten-minutes-neovim.md.

A headless Neovim opens a terminal (Neovim's own, libvterm) running a second Neovim with the plugin
from editors/neovim on a small git repository; that inner Neovim goes through the loop against the
real ``ided lsp`` with a scripted model (ided's replay provider, as the tests use): search, hover,
a dry run's plan graph, a run, its review hunk by hunk, a diff, the accept of what is kept, the
rollback. At each step it redraws and waits; the outer Neovim copies the terminal's screen as text
to docs/images/neovim/STEP.txt and lets it go on. The page's ``<!-- screen: STEP -->`` blocks are
then filled with those screens.

    .venv/bin/python scripts/neovim-screens.py          # or: just neovim-screens

Needs this checkout's .venv (./dev setup) and Neovim >= 0.10 (``.tools/nvim-venv`` from
scripts/install-test-tools.sh, or on PATH); the hover step needs a Python language server (the
test tools' ``.tools/lsp-venv/bin`` is put on PATH when present; otherwise your own on PATH).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.pipeline_support import choose, everyone_succeeds, write_script  # noqa: E402

SCREENS = REPO / "docs" / "images" / "neovim"
PAGE = REPO / "docs" / "first-ten-minutes-neovim.md"
COLUMNS, LINES = 118, 34
WAIT_S = 420

CALC = '''"""A tiny calculator."""


def add(a, b):
    return a + b


def divide(a, b):
    return a / b


def mean(values):
    return divide(sum(values), len(values))
'''
CALC_RUN = CALC.replace('"""A tiny calculator."""', '"""A tiny calculator that never divides by zero."""').replace(
    "    return a / b\n", '    if b == 0:\n        raise ZeroDivisionError(f"divide({a}, 0)")\n    return a / b\n'
)
README = "# calc\n\nA tiny calculator.\n"
README_RUN = "# calc\n\nA tiny calculator. `divide(a, 0)` raises ZeroDivisionError with the operands.\n"

# The inner Neovim: the loop, a snap after each step (it waits for the outer one to copy the screen).
DRIVER = r"""
local settings = vim.json.decode(table.concat(vim.fn.readfile(vim.env.IDED_SCREENS_SETTINGS), "\n"))
vim.opt.rtp:prepend(settings.plugin)
vim.o.laststatus = 2
vim.o.shortmess = vim.o.shortmess .. "I"
local ided = require("ided")
ided.setup({ cmd = settings.cmd })

local steps = {}
local function fail(message)
  vim.fn.writefile({ message }, settings.dir .. "/error")
end
local function snap(name, after)
  vim.cmd("redraw!")
  local ack = settings.dir .. "/ack-" .. name
  vim.fn.writefile({ name }, settings.dir .. "/step-" .. name)
  local timer = vim.uv.new_timer()
  timer:start(100, 100, vim.schedule_wrap(function()
    if vim.fn.filereadable(ack) == 1 then
      timer:stop()
      timer:close()
      local ok, err = pcall(after)
      if not ok then
        fail(tostring(err))
      end
    end
  end))
end
local function once(pattern, fn)
  vim.api.nvim_create_autocmd("User", {
    pattern = pattern,
    once = true,
    callback = function(event)
      local ok, err = pcall(fn, event)
      if not ok then
        fail(tostring(err))
      end
    end,
  })
end
local function line_with(buf, text)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if line:find(text, 1, true) then
      return i
    end
  end
  error("no line with " .. text)
end
local function press(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "mx", false)
end
local function main_window()
  vim.cmd("wincmd t")
end

-- 8. roll back: the file as it was
local function rollback()
  once("IdedRolledBack", function()
    snap("rollback", function()
      vim.fn.writefile({ "done" }, settings.dir .. "/done")
    end)
  end)
  vim.cmd("IdedRollback")
end

-- 5-7. the review: drop README.md, a diff, accept what is kept
local function review(event)
  local list = vim.api.nvim_get_current_buf()
  snap("review", function()
    vim.api.nvim_win_set_cursor(0, { line_with(list, "M README.md"), 0 })
    press("<Space>")
    snap("review-hunks", function()
      once("IdedDiffOpened", function()
        snap("diff", function()
          vim.cmd("tabclose")
          vim.api.nvim_set_current_win(vim.fn.bufwinid(list))
          once("IdedAccepted", function()
            snap("accepted", rollback)
          end)
          press("a")
        end)
      end)
      vim.api.nvim_win_set_cursor(0, { line_with(list, "@@ -6,"), 0 })
      press("<CR>")
    end)
  end)
end

-- 3-4. a dry run's plan, then the run
local function runs()
  once("IdedPlanOpened", function(event)
    snap("plan", function()
      vim.api.nvim_win_close(vim.fn.bufwinid(event.data.buf), true)
      main_window()
      once("IdedReviewOpened", review)
      vim.cmd("IdedRun fix the crash when divide gets a zero")
    end)
  end)
  vim.cmd("IdedDryRun fix the crash when divide gets a zero")
end

-- 2. hover through ided (needs a Python language server)
local function hover()
  main_window()
  vim.api.nvim_win_set_cursor(0, { line_with(0, "return divide("), 11 })
  local tries = 0
  local timer = vim.uv.new_timer()
  vim.lsp.buf.hover()
  timer:start(250, 250, vim.schedule_wrap(function()
    tries = tries + 1
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= "" then
        timer:stop()
        timer:close()
        return snap("hover", function()
          pcall(vim.api.nvim_win_close, win, true)
          runs()
        end)
      end
    end
    if tries % 20 == 0 then
      vim.lsp.buf.hover()
    end
    if tries > 240 then
      timer:stop()
      timer:close()
      fail("no hover window: is a Python language server installed (basedpyright, pyright, jedi-language-server)?")
    end
  end))
end

-- 1. search, once the first index pass is done
local searched = false
vim.api.nvim_create_autocmd("LspProgress", {
  callback = function(event)
    if event.data.params.value.kind == "end" and not searched then
      searched = true
      once("IdedSearchDone", function()
        snap("search", function()
          vim.cmd("cclose")
          hover()
        end)
      end)
      vim.cmd("IdedSearch divide by zero")
    end
  end,
})
"""

# The outer Neovim: a terminal with the inner one; copies its screen at each step.
OUTER = r"""
local settings = vim.json.decode(table.concat(vim.fn.readfile(vim.env.IDED_SCREENS_SETTINGS), "\n"))
vim.o.columns = settings.columns
vim.o.lines = settings.lines
vim.cmd("terminal " .. settings.inner)
local term = vim.api.nvim_get_current_buf()
local taken = {}
local timer = vim.uv.new_timer()
local function screen()
  local lines = vim.api.nvim_buf_get_lines(term, 0, -1, false)
  local out = {}
  for i = math.max(1, #lines - settings.lines + 1), #lines do
    table.insert(out, (lines[i]:gsub("%s+$", "")))
  end
  return out
end
timer:start(200, 200, vim.schedule_wrap(function()
  local dir = settings.dir
  if vim.fn.filereadable(dir .. "/error") == 1 or vim.fn.filereadable(dir .. "/done") == 1 then
    timer:stop()
    vim.fn.writefile(screen(), dir .. "/screen-last.txt")
    return vim.defer_fn(function() vim.cmd("qall!") end, 200)
  end
  for _, path in ipairs(vim.fn.glob(dir .. "/step-*", false, true)) do
    local name = vim.fn.fnamemodify(path, ":t"):sub(6)
    if not taken[name] then
      taken[name] = true
      -- the terminal follows the inner Neovim's output a moment later: let it settle, then copy
      vim.defer_fn(function()
        vim.fn.writefile(screen(), dir .. "/screen-" .. name .. ".txt")
        vim.fn.writefile({ "ok" }, dir .. "/ack-" .. name)
      end, 600)
    end
  end
end))
"""

STEPS = ("search", "hover", "plan", "review", "review-hunks", "diff", "accepted", "rollback")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Ada User", "-c", "user.email=ada@example.com", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def _nvim() -> str:
    local = REPO / ".tools" / "nvim-venv" / "bin" / "nvim"
    found = str(local) if local.exists() else shutil.which("nvim")
    if found is None:
        sys.exit("neovim-screens: Neovim >= 0.10 not found (scripts/install-test-tools.sh puts it in .tools/nvim-venv)")
    return found


def _fill_page(screens: dict[str, list[str]]) -> None:
    """Put each screen into its ``<!-- screen: NAME -->`` block of the page."""
    text = PAGE.read_text()
    for name, lines in screens.items():
        block = "\n".join(lines).rstrip("\n")
        text, count = re.subn(
            rf"(<!-- screen: {re.escape(name)} -->\n)(.*?)(<!-- /screen -->)",
            lambda m, block=block: f"{m.group(1)}```text\n{block}\n```\n{m.group(3)}",
            text,
            flags=re.S,
        )
        if count != 1:
            print(f"neovim-screens: {PAGE.name} has no block for {name}", file=sys.stderr)
    PAGE.write_text(text)


def main() -> int:
    nvim = _nvim()
    with tempfile.TemporaryDirectory(prefix="ided-screens-") as tmp:
        work = Path(tmp)
        repo = work / "calc"
        repo.mkdir()
        (repo / "calc.py").write_text(CALC)
        (repo / "README.md").write_text(README)
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "a tiny calculator")
        entries = [
            {"role": "orchestrator", "answer": choose("bug_fix", "a crash report", code_review="SKIP"), "repeat": True},
            {
                "role": "coder",
                "tool_calls": [
                    {"name": "write_file", "args": {"path": "calc.py", "content": CALC_RUN}},
                    {"name": "write_file", "args": {"path": "README.md", "content": README_RUN}},
                ],
            },
            everyone_succeeds(),
        ]
        script = write_script(work / "script.yaml", entries)
        state = work / "state"
        sets = [
            f"state_dir={state}",
            "embedding.enabled=false",
            f"pipeline.replay_script={script}",
            "pipeline.resilience.cache=false",
            "intel.ready_wait_seconds=60",
        ]
        cmd = [sys.executable, "-P", "-m", "daemon", *(a for s in sets for a in ("--set", s)), "lsp"]
        (work / "driver.lua").write_text(DRIVER)
        (work / "outer.lua").write_text(OUTER)
        inner = f"{nvim} --clean -u {work / 'driver.lua'} calc.py"
        settings = {
            "plugin": str(REPO / "editors" / "neovim"),
            "cmd": cmd,
            "dir": str(work),
            "inner": inner,
            "columns": COLUMNS,
            "lines": LINES,
        }
        (work / "settings.json").write_text(json.dumps(settings))
        path = os.environ.get("PATH", "")
        servers = REPO / ".tools" / "lsp-venv" / "bin"
        env = {
            **os.environ,
            "IDED_SCREENS_SETTINGS": str(work / "settings.json"),
            "PATH": f"{servers}{os.pathsep}{path}" if servers.is_dir() else path,
            "HF_HUB_OFFLINE": "1",
            "XDG_STATE_HOME": str(work / "xdg-state"),
            "TERM": "xterm-256color",
        }
        try:
            subprocess.run(
                [nvim, "--headless", "--clean", "-u", str(work / "outer.lua")],
                cwd=repo, env=env, timeout=WAIT_S, check=False,
            )  # fmt: skip
        finally:
            subprocess.run(
                [sys.executable, "-P", "-m", "daemon", "--set", f"state_dir={state}", "stop"],
                cwd=repo, env=env, capture_output=True, timeout=60, check=False,
            )  # fmt: skip
        if (work / "error").exists():
            last = (work / "screen-last.txt").read_text() if (work / "screen-last.txt").exists() else ""
            sys.exit(f"neovim-screens: {(work / 'error').read_text().strip()}\n{last}")
        screens: dict[str, list[str]] = {}
        for name in STEPS:
            taken = work / f"screen-{name}.txt"
            if not taken.exists():
                sys.exit(f"neovim-screens: no screen for {name} (timed out after {WAIT_S}s?)")
            lines = taken.read_text().splitlines()
            screens[name] = [line.replace(str(repo), "~/calc") for line in lines]
    SCREENS.mkdir(parents=True, exist_ok=True)
    for name, lines in screens.items():
        (SCREENS / f"{name}.txt").write_text("\n".join(lines) + "\n")
    _fill_page(screens)
    print(f"neovim-screens: {len(screens)} screens in {SCREENS.relative_to(REPO)} and {PAGE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
