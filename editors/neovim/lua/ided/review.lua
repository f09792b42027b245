-- The batched review of a run in Neovim's own diff mode: `ided/run/diff` gives every changed file
-- with its text before and after; a file list buffer names them, and <CR> on one opens a tab with
-- the original and the run's version side by side (`:diffthis` in both).
--
-- In the list: <CR> diff of the file, a accept, r reject, f feedback (asks for the text), q close.
-- Fires `User IdedReviewOpened` (data: the diff) and `User IdedDiffOpened` (data: { path, run_id }).

local M = {}

--- run id -> the last `ided/run/diff` result
M.diffs = {}

local HEADER = 3

local function runs()
  return require("ided.runs")
end

local function scratch(name, lines, filetype)
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
  end
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  if filetype then
    vim.bo[buf].filetype = filetype
  end
  return buf
end

local function text_lines(text)
  if text == nil or text == vim.NIL or text == "" then
    return {}
  end
  local trimmed = text:gsub("\n$", "")
  return vim.split(trimmed, "\n", { plain = true })
end

--- The file list's lines for a diff result (pure: used by `open` and tests).
function M.list_lines(diff)
  local lines = {
    string.format("ided review of run %s (%s, %d commit(s))", diff.runId, diff.branch, #diff.commits),
    "<CR> diff  a accept  r reject  f feedback  q close",
    "",
  }
  local letters = { added = "A", modified = "M", deleted = "D", renamed = "R" }
  for _, file in ipairs(diff.files) do
    local name = file.path
    if file.oldPath and file.oldPath ~= vim.NIL and file.oldPath ~= file.path then
      name = file.oldPath .. " -> " .. file.path
    end
    table.insert(lines, string.format("%s %s  +%d -%d%s", letters[file.status] or "?", name, file.added,
      file.removed, file.binary and "  (binary)" or ""))
  end
  if #diff.files == 0 then
    table.insert(lines, "(no changes)")
  end
  return lines
end

--- Open the review of a run (default: the current one): fetch its diff, show the file list.
function M.open(run_id)
  local id = (run_id and run_id ~= "") and run_id or runs().current
  if not id then
    return require("ided").notify("no run to review: start one with :IdedRun {request}", vim.log.levels.WARN)
  end
  runs().request("ided/run/diff", { runId = id }, function(diff)
    runs().current = id
    M.diffs[id] = diff
    local buf = scratch("ided://review/" .. id, M.list_lines(diff), "idedreview")
    vim.b[buf].ided_run = id
    local function map(lhs, fn, desc)
      vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, desc = desc })
    end
    map("<CR>", function()
      M.diff_at_cursor(buf)
    end, "ided: diff of this file")
    map("a", function()
      runs().accept(id)
    end, "ided: accept the run")
    map("r", function()
      runs().reject(id)
    end, "ided: reject the run")
    map("f", function()
      vim.ui.input({ prompt = "ided feedback: " }, function(text)
        if text then
          runs().feedback(text, id)
        end
      end)
    end, "ided: feedback on the run")
    map("q", "<cmd>close<cr>", "ided: close the review")
    if vim.fn.bufwinid(buf) == -1 then
      vim.cmd("topleft vsplit")
      vim.api.nvim_win_set_buf(0, buf)
      vim.api.nvim_win_set_width(0, 50)
    else
      vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
    end
    vim.api.nvim_win_set_cursor(0, { math.min(HEADER + 1, vim.api.nvim_buf_line_count(buf)), 0 })
    vim.api.nvim_exec_autocmds("User", { pattern = "IdedReviewOpened", data = diff, modeline = false })
  end)
end

function M.diff_at_cursor(buf)
  local id = vim.b[buf].ided_run
  local diff = M.diffs[id]
  local index = vim.api.nvim_win_get_cursor(0)[1] - HEADER
  local file = diff and diff.files[index]
  if not file then
    return require("ided").notify("put the cursor on a file of the list", vim.log.levels.WARN)
  end
  M.show_file(id, file)
end

--- A tab with the file before the run (left) and after it (right), in diff mode.
function M.show_file(run_id, file)
  if file.binary then
    return require("ided").notify(file.path .. " is binary: no text diff", vim.log.levels.WARN)
  end
  local filetype = vim.filetype.match({ filename = file.path })
  local before = scratch(string.format("ided://%s/original/%s", run_id, file.path), text_lines(file.oldText), filetype)
  local after = scratch(string.format("ided://%s/run/%s", run_id, file.path), text_lines(file.newText), filetype)
  vim.cmd("tabnew")
  local scratch_tab_buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_win_set_buf(0, before)
  vim.cmd("diffthis")
  vim.cmd("rightbelow vsplit")
  vim.api.nvim_win_set_buf(0, after)
  vim.cmd("diffthis")
  if vim.api.nvim_buf_is_valid(scratch_tab_buf) and scratch_tab_buf ~= before and scratch_tab_buf ~= after then
    pcall(vim.api.nvim_buf_delete, scratch_tab_buf, {})
  end
  vim.api.nvim_exec_autocmds("User", {
    pattern = "IdedDiffOpened",
    data = { run_id = run_id, path = file.path, before = before, after = after },
    modeline = false,
  })
end

return M
