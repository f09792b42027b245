-- ided runs in Neovim: start a run (or a dry run), follow its `ided/run/progress` notifications in a
-- scratch window, answer its review (accept / reject / feedback), roll an accepted run back.
--
-- Every request goes to the `ided lsp` client of require("ided"); each outcome fires a `User`
-- autocmd (IdedRunStarted, IdedRunProgress, IdedRunFinished, IdedAccepted, IdedRejected,
-- IdedRolledBack, IdedRunError) whose data is the server's answer, for statuslines and tests.

local M = {}

--- The run the commands act on when none is named: the last one started or reviewed here.
M.current = nil
--- run id -> { buf = progress buffer, review = true once a review event arrived, graph = the plan's
--- graph (from ided/run/start), statuses = stage id -> { status, attempt }, workflow, phase }
M.state = {}

local function ided()
  return require("ided")
end

local function fire(pattern, data)
  vim.api.nvim_exec_autocmds("User", { pattern = pattern, data = data, modeline = false })
end

local function fail(method, err)
  ided().notify(err.message, vim.log.levels.ERROR)
  fire("IdedRunError", { method = method, message = err.message, code = err.code, data = err.data })
end

--- Send an `ided/run/*` request to the ided client; `on_result` gets the result, errors are shown.
function M.request(method, params, on_result)
  ided().with_client(function(client)
    ided().request(client, method, params, function(err, result)
      if err then
        return fail(method, err)
      end
      on_result(result)
    end)
  end)
end

local function run_id_or_current(run_id)
  local id = (run_id and run_id ~= "") and run_id or M.current
  if not id then
    ided().notify("no run yet: start one with :IdedRun {request}", vim.log.levels.WARN)
  end
  return id
end

-- -- the progress window ---------------------------------------------------------------------------

local function progress_buffer(run_id)
  local state = M.state[run_id] or {}
  M.state[run_id] = state
  if state.buf and vim.api.nvim_buf_is_valid(state.buf) then
    return state.buf
  end
  local name = "ided://run/" .. run_id
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
  end
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = "idedrun"
  state.buf = buf
  return buf
end

--- Show a run's progress buffer in a split at the bottom (once; later lines scroll it). A window
--- that shows another run's progress shows this one instead: progress windows do not pile up.
function M.show(run_id)
  local buf = progress_buffer(run_id)
  if vim.fn.bufwinid(buf) == -1 then
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if vim.bo[vim.api.nvim_win_get_buf(win)].filetype == "idedrun" then
        vim.api.nvim_win_set_buf(win, buf)
        return buf
      end
    end
    local current = vim.api.nvim_get_current_win()
    vim.cmd("botright " .. ided().config.run.height .. "split")
    vim.api.nvim_win_set_buf(0, buf)
    vim.api.nvim_set_current_win(current)
  end
  return buf
end

local function append(run_id, lines)
  local buf = progress_buffer(run_id)
  local flat = {}
  for _, line in ipairs(lines) do
    for part in (line .. "\n"):gmatch("([^\n]*)\n") do
      table.insert(flat, part)
    end
  end
  vim.bo[buf].modifiable = true
  local empty = vim.api.nvim_buf_line_count(buf) == 1 and vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ""
  vim.api.nvim_buf_set_lines(buf, empty and 0 or -1, -1, false, flat)
  vim.bo[buf].modifiable = false
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
  end
end

local function first_line(text)
  return vim.trim(((text or ""):match("[^\n]*")) or "")
end

--- One progress event as the lines the window shows (pure: used by the handler and tests).
function M.format_event(params)
  local e = params.event or {}
  local kind = params.kind
  local stage = e.stage_name or e.node or "?"
  if kind == "run_started" then
    return { string.format("run %s started: %s (%s)", params.runId, e.workflow, table.concat(e.planned_stages or {}, ", ")) }
  elseif kind == "run_resumed" then
    return { "run resumed" }
  elseif kind == "node_started" then
    return { string.format("> %s%s", stage, e.attempt and e.attempt > 1 and (" (attempt " .. e.attempt .. ")") or "") }
  elseif kind == "node_finished" then
    return { string.format("  %s: %s", stage, e.status) }
  elseif kind == "tool_call" then
    return { "    " .. (e.title or "tool call") }
  elseif kind == "tool_call_update" then
    return e.tool_status == "failed" and { "    failed: " .. first_line(e.output) } or {}
  elseif kind == "agent_message" or kind == "thought" then
    local text = first_line(e.text)
    return text ~= "" and { "    " .. (e.agent_id and (e.agent_id .. ": ") or "") .. text } or {}
  elseif kind == "routing_decision" then
    return e.summary and { "  -> " .. first_line(e.summary) } or {}
  elseif kind == "review" then
    local files = e.changes and e.changes.files or {}
    return {
      string.format("review: %d file(s) changed on %s", #files, e.changes and e.changes.branch or "the run branch"),
      "  :IdedReview to look (keep or drop each hunk), then :IdedAccept, :IdedReject or :IdedFeedback {what to change}",
    }
  elseif kind == "run_finished" then
    return { string.format("run finished: %s%s", e.status, e.summary and (": " .. first_line(e.summary)) or "") }
  elseif kind == "plan" then
    return {}
  end
  return { kind }
end

local function note_status(state, params)
  local e = params.event or {}
  state.statuses = state.statuses or {}
  if params.kind == "plan" then
    for _, entry in ipairs(e.plan or {}) do
      state.statuses[entry.stage_id] = { status = entry.status, attempt = entry.attempt }
    end
  elseif params.kind == "node_started" and e.node then
    state.statuses[e.node] = { status = "in_progress", attempt = e.attempt or 1 }
  elseif params.kind == "node_finished" and e.node then
    local known = state.statuses[e.node] or {}
    local status = e.status == "succeeded" and "completed" or (e.status == "failed" and "failed" or known.status)
    state.statuses[e.node] = { status = status, attempt = known.attempt or e.attempt }
  elseif params.kind == "run_finished" then
    state.phase = "finished: " .. tostring(e.status)
  elseif params.kind == "run_started" or params.kind == "run_resumed" then
    state.phase = "running"
  end
end

--- The `ided/run/progress` handler.
function M.on_progress(params)
  local lines = M.format_event(params)
  if #lines > 0 then
    append(params.runId, lines)
  end
  local state = M.state[params.runId] or {}
  M.state[params.runId] = state
  note_status(state, params)
  require("ided.plan_graph").refresh(params.runId)
  if params.kind == "review" then
    state.review = true
  end
  fire("IdedRunProgress", params)
  if params.kind == "run_finished" then
    fire("IdedRunFinished", params)
    if state.review and ided().config.run.open_review then
      require("ided.review").open(params.runId)
    end
  end
end

-- -- commands ------------------------------------------------------------------------------------

--- Start a run of `request` (`opts.dry_run`: plan only; `opts.mode`: "code" or "ask").
function M.start(request, opts)
  opts = opts or {}
  if vim.trim(request or "") == "" then
    return ided().notify("say what you want done: :IdedRun {request}", vim.log.levels.WARN)
  end
  local params = { request = request, dryRun = opts.dry_run or false, mode = opts.mode or "code" }
  if opts.workflow then
    params.workflow = opts.workflow
  end
  M.request("ided/run/start", params, function(result)
    M.current = result.runId
    local state = M.state[result.runId] or {}
    M.state[result.runId] = state
    state.graph = result.graph ~= vim.NIL and result.graph or nil
    state.workflow = result.workflow ~= vim.NIL and result.workflow or nil
    state.phase = state.phase or result.status
    M.show(result.runId)
    local lines = {
      string.format("%s %s: %s", opts.dry_run and "dry run" or "run", result.runId, request),
      string.format("workflow %s; stages: %s", result.workflow or "?", table.concat(result.stages, ", ")),
    }
    if #result.skipped > 0 then
      table.insert(lines, "skipped: " .. table.concat(result.skipped, ", "))
    end
    for _, note in ipairs(result.notes) do
      table.insert(lines, "note: " .. note)
    end
    if state.graph then
      table.insert(lines, ":IdedPlan draws the plan as a graph")
    end
    append(result.runId, lines)
    if opts.dry_run and state.graph then
      require("ided.plan_graph").open(result.runId)
    end
    fire("IdedRunStarted", result)
  end)
end

function M.feedback(text, run_id)
  local id = run_id_or_current(run_id)
  if not id then
    return
  end
  if vim.trim(text or "") == "" then
    return ided().notify("say what to change: :IdedFeedback {text}", vim.log.levels.WARN)
  end
  M.request("ided/run/feedback", { runId = id, text = text }, function(result)
    M.current = result.runId
    local state = M.state[result.runId] or {}
    state.review = false
    state.graph = result.graph ~= vim.NIL and result.graph or state.graph
    M.state[result.runId] = state
    M.show(result.runId)
    append(result.runId, { "feedback: " .. text })
    fire("IdedFeedbackStarted", result)
  end)
end

function M.cancel(run_id)
  local id = run_id_or_current(run_id)
  if id then
    M.request("ided/run/cancel", { runId = id }, function(result)
      append(id, { "cancel requested: " .. result.status })
      fire("IdedRunCancelled", result)
    end)
  end
end

--- Reload the unmodified buffers of files a run changed on disk; warn about modified ones.
function M.reload(root, files)
  for _, path in ipairs(files or {}) do
    local buf = vim.fn.bufnr(vim.fs.joinpath(root, path))
    if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) then
      if vim.bo[buf].modified then
        ided().notify(path .. " changed on disk but its buffer has unsaved edits (:e! loads the file)", vim.log.levels.WARN)
      else
        vim.api.nvim_buf_call(buf, function()
          vim.cmd("silent edit!")
        end)
      end
    end
  end
end

local function root()
  local client = ided().client()
  return client and (client.root_dir or client.config.root_dir) or vim.fn.getcwd()
end

--- The accept's message: whole, or in part (what was kept in part, what was dropped).
function M.accepted_text(id, result)
  local text = string.format("accepted run %s: %d commit(s), %d file(s)", id, #result.commits, #result.files)
  local partial = result.partial ~= vim.NIL and result.partial or {}
  local dropped = result.dropped ~= vim.NIL and result.dropped or {}
  if #partial > 0 or #dropped > 0 then
    text = string.format("accepted run %s in part: %d commit(s), %d file(s)", id, #result.commits, #result.files)
    if #partial > 0 then
      text = text .. "; kept in part: " .. table.concat(partial, ", ")
    end
    if #dropped > 0 then
      text = text .. "; dropped: " .. table.concat(dropped, ", ")
    end
  end
  return text
end

--- Accept a run: what its review keeps (every hunk unless some were dropped in the review list).
function M.accept(run_id)
  local id = run_id_or_current(run_id)
  if not id then
    return
  end
  local params = { runId = id }
  local keep = require("ided.review").keep_for(id)
  if keep ~= nil and #keep == 0 then
    return ided().notify("nothing is kept in the review of run " .. id .. ": keep a hunk, or :IdedReject", vim.log.levels.WARN)
  end
  params.keep = keep
  M.request("ided/run/accept", params, function(result)
    require("ided.review").close(id)
    M.reload(root(), result.files)
    ided().notify(M.accepted_text(id, result))
    fire("IdedAccepted", result)
  end)
end

function M.reject(run_id)
  local id = run_id_or_current(run_id)
  if id then
    M.request("ided/run/reject", { runId = id }, function(result)
      require("ided.review").close(id)
      ided().notify(string.format("rejected run %s: your files are untouched (%s kept until cleanup)", id, result.branch))
      fire("IdedRejected", result)
    end)
  end
end

function M.rollback(run_id)
  local id = run_id_or_current(run_id)
  if id then
    M.request("ided/run/rollback", { runId = id }, function(result)
      M.reload(root(), result.files)
      ided().notify(string.format("rolled back run %s: %d file(s) restored", id, #result.files))
      fire("IdedRolledBack", result)
    end)
  end
end

return M
