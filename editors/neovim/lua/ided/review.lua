-- The review of a run in Neovim's own diff mode, file by file and hunk by hunk: `ided/run/diff` gives
-- every changed file with its text before and after and its unified diff; a list buffer names the
-- files and, under each, its hunks (the `@@` headers of its diff), each marked kept [x] or dropped
-- [ ]. <CR> on a file (or one of its hunks) opens a tab with the original and the run's version side
-- by side (`:diffthis` in both); <Space> keeps or drops the hunk (or the whole file) under the
-- cursor; `a` accepts what is kept (`ided/run/accept` with `keep` when something is dropped).
--
-- In the list: <CR> diff, <Space> keep/drop, a accept, r reject, f feedback (asks for the text),
-- q close. After an accept or a reject the list and the run's diff tabs close.
-- Fires `User IdedReviewOpened` (data: the diff), `User IdedDiffOpened` (data: { path, run_id, ... })
-- and `User IdedReviewClosed` (data: { run_id }).

local M = {}

--- run id -> the last `ided/run/diff` result
M.diffs = {}
--- run id -> path -> list of booleans (one per hunk: kept?), or { whole = bool } for a file without hunks
M.kept = {}
--- list buffer -> rows[lnum] = { file = index, hunk = index or nil }
local rows_of = {}

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

--- The hunks of a file's unified diff: { header = "@@ -1,2 +1,2 @@ ...", first = first changed line }.
function M.hunks(file)
  local found = {}
  if file.binary or type(file.diff) ~= "string" then
    return found
  end
  for line in (file.diff .. "\n"):gmatch("([^\n]*)\n") do
    if line:sub(1, 2) == "@@" then
      table.insert(found, { header = line })
    elseif #found > 0 and not found[#found].first and line:match("^[+-]%s*%S") then
      found[#found].first = line -- the hunk's first changed line that is not blank
    end
  end
  return found
end

--- Every hunk of every file kept (a new review starts so).
function M.keep_all(diff)
  local kept = {}
  for _, file in ipairs(diff.files) do
    local marks = {}
    for i = 1, #M.hunks(file) do
      marks[i] = true
    end
    kept[file.path] = #marks > 0 and marks or { whole = true }
  end
  return kept
end

local function file_state(marks)
  if marks.whole ~= nil then
    return marks.whole and "all" or "none"
  end
  local n = 0
  for _, on in ipairs(marks) do
    n = n + (on and 1 or 0)
  end
  return n == #marks and "all" or (n == 0 and "none" or "some")
end

--- The `keep` of `ided/run/accept` for what is marked (pure): nil when everything is kept (a plain
--- accept), {} when nothing is, else one entry per file kept whole or in part.
function M.keep_param(diff, kept)
  local keep, everything = {}, true
  for _, file in ipairs(diff.files) do
    local marks = kept[file.path] or { whole = true }
    local state = file_state(marks)
    everything = everything and state == "all"
    if state == "all" then
      table.insert(keep, { path = file.path })
    elseif state == "some" then
      local hunks = {}
      for i, on in ipairs(marks) do
        if on then
          table.insert(hunks, i - 1) -- 0-based among the `@@` headers of the file's diff
        end
      end
      table.insert(keep, { path = file.path, hunks = hunks })
    end
  end
  if everything then
    return nil
  end
  return keep
end

local MARK = { all = "[x]", some = "[~]", none = "[ ]" }

--- The list's lines for a diff and the marks (pure: used by `open` and tests), and what each line is:
--- rows[lnum] = { file = index, hunk = index or nil }.
function M.list_lines(diff, kept)
  kept = kept or M.keep_all(diff)
  local lines = {
    string.format("ided review of run %s (%s, %d commit(s))", diff.runId, diff.branch, #diff.commits),
    "<CR> diff  <Space> keep/drop  a accept kept  r reject  f feedback  q close",
    "",
  }
  local rows = {}
  local letters = { added = "A", modified = "M", deleted = "D", renamed = "R" }
  for index, file in ipairs(diff.files) do
    local name = file.path
    if file.oldPath and file.oldPath ~= vim.NIL and file.oldPath ~= file.path then
      name = file.oldPath .. " -> " .. file.path
    end
    local marks = kept[file.path] or { whole = true }
    table.insert(lines, string.format("%s %s %s  +%d -%d%s", MARK[file_state(marks)], letters[file.status] or "?", name,
      file.added, file.removed, file.binary and "  (binary)" or ""))
    rows[#lines] = { file = index }
    for h, hunk in ipairs(M.hunks(file)) do
      local first = hunk.first and ("  " .. vim.trim(hunk.first)) or ""
      table.insert(lines, string.format("    %s %s%s", marks[h] and "[x]" or "[ ]", hunk.header, first))
      rows[#lines] = { file = index, hunk = h }
    end
  end
  if #diff.files == 0 then
    table.insert(lines, "(no changes)")
  end
  local keep = M.keep_param(diff, kept)
  if keep ~= nil then
    table.insert(lines, "")
    table.insert(lines, #keep == 0 and "nothing kept: `a` is refused; r rejects the run"
      or "a accepts only what is marked [x] (one commit)")
  end
  return lines, rows
end

local function list_name(run_id)
  return "ided://review/" .. run_id
end

local function render(buf, id)
  local lines, rows = M.list_lines(M.diffs[id], M.kept[id])
  local cursor = vim.fn.bufwinid(buf) ~= -1 and vim.api.nvim_win_get_cursor(vim.fn.bufwinid(buf)) or nil
  scratch(list_name(id), lines, "idedreview")
  rows_of[buf] = rows
  if cursor then
    cursor[1] = math.min(cursor[1], #lines)
    vim.api.nvim_win_set_cursor(vim.fn.bufwinid(buf), cursor)
  end
end

--- Keep or drop the hunk (or the whole file) on line `lnum` of the list.
function M.toggle(buf, lnum)
  local id = vim.b[buf].ided_run
  local row = (rows_of[buf] or {})[lnum]
  local diff = M.diffs[id]
  if not row or not diff then
    return require("ided").notify("put the cursor on a file or a hunk of the list", vim.log.levels.WARN)
  end
  local file = diff.files[row.file]
  local marks = M.kept[id][file.path]
  if row.hunk then
    marks[row.hunk] = not marks[row.hunk]
  elseif marks.whole ~= nil then
    marks.whole = not marks.whole
  else
    local keep = file_state(marks) ~= "all"
    for i = 1, #marks do
      marks[i] = keep
    end
  end
  render(buf, id)
  vim.api.nvim_exec_autocmds("User", {
    pattern = "IdedReviewMarked",
    data = { run_id = id, path = file.path, kept = vim.deepcopy(marks) },
    modeline = false,
  })
end

--- The `keep` for accepting the run `id` as marked in its review (nil: all of it).
function M.keep_for(id)
  local diff, kept = M.diffs[id], M.kept[id]
  if not diff or not kept then
    return nil
  end
  return M.keep_param(diff, kept)
end

--- Open the review of a run (default: the current one): fetch its diff, show the file list.
function M.open(run_id)
  local id = (run_id and run_id ~= "") and run_id or runs().current
  if not id then
    return require("ided").notify("no run to review: start one with :IdedRun {request}", vim.log.levels.WARN)
  end
  runs().request("ided/run/diff", { runId = id }, function(diff)
    runs().current = id
    local fresh = not M.diffs[id] or M.diffs[id].headCommit ~= diff.headCommit
    M.diffs[id] = diff
    if fresh or not M.kept[id] then
      M.kept[id] = M.keep_all(diff)
    end
    local buf = scratch(list_name(id), {}, "idedreview")
    vim.b[buf].ided_run = id
    render(buf, id)
    local function map(lhs, fn, desc)
      vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, desc = desc })
    end
    map("<CR>", function()
      M.diff_at_cursor(buf)
    end, "ided: diff of this file")
    map("<Space>", function()
      M.toggle(buf, vim.api.nvim_win_get_cursor(0)[1])
    end, "ided: keep or drop this hunk (or file)")
    map("a", function()
      runs().accept(id)
    end, "ided: accept what is kept")
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
      vim.api.nvim_win_set_width(0, 60)
      vim.wo.wrap = false
    else
      vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
    end
    local first = math.huge
    for lnum, _ in pairs(rows_of[buf] or {}) do
      first = math.min(first, lnum)
    end
    first = first == math.huge and 1 or first
    vim.api.nvim_win_set_cursor(0, { math.min(first, vim.api.nvim_buf_line_count(buf)), 0 })
    vim.api.nvim_exec_autocmds("User", { pattern = "IdedReviewOpened", data = diff, modeline = false })
  end)
end

--- Close a run's review: its list and its diff tabs, their buffers (and keys) wiped.
function M.close(run_id)
  local names = { list_name(run_id) }
  local prefix = string.format("ided://%s/", run_id)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    if name:sub(1, #prefix) == prefix then
      table.insert(names, name)
    end
  end
  for _, name in ipairs(names) do
    local buf = vim.fn.bufnr(name)
    if buf ~= -1 then
      for _, win in ipairs(vim.fn.win_findbuf(buf)) do
        if #vim.api.nvim_list_wins() > 1 then
          pcall(vim.api.nvim_win_close, win, true)
        end
      end
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
      rows_of[buf] = nil
    end
  end
  M.kept[run_id] = nil
  vim.api.nvim_exec_autocmds("User", { pattern = "IdedReviewClosed", data = { run_id = run_id }, modeline = false })
end

function M.diff_at_cursor(buf)
  local id = vim.b[buf].ided_run
  local diff = M.diffs[id]
  local row = (rows_of[buf] or {})[vim.api.nvim_win_get_cursor(0)[1]]
  local file = diff and row and diff.files[row.file]
  if not file then
    return require("ided").notify("put the cursor on a file of the list", vim.log.levels.WARN)
  end
  M.show_file(id, file, row.hunk)
end

--- A tab with the file before the run (left) and after it (right), in diff mode; with `hunk`, the
--- cursor on that hunk.
function M.show_file(run_id, file, hunk)
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
  local header = hunk and M.hunks(file)[hunk]
  local start = header and tonumber(header.header:match("^@@ %-%d+,?%d* %+(%d+)"))
  if start then
    vim.api.nvim_win_set_cursor(0, { math.max(1, math.min(start, vim.api.nvim_buf_line_count(after))), 0 })
  end
  vim.api.nvim_exec_autocmds("User", {
    pattern = "IdedDiffOpened",
    data = { run_id = run_id, path = file.path, before = before, after = after },
    modeline = false,
  })
end

return M
