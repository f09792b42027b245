-- A run's plan drawn as a text graph in a scratch buffer (`ided://plan/<run>`): one box per planned
-- stage, top to bottom in plan order, with its status (○ pending, ▶ running, ✓ completed, ✗ failed)
-- and attempt; the routes between them as labelled arrows: straight down to the next stage
-- (`│ success, failure` then `▼`), to the side for any other target (`──failure──▶ ABORT`,
-- `──retry────▶ ↑ Fix`: ↑ an earlier stage, ↓ a later one). DONE closes the graph when a route
-- ends there; the skipped stages are listed under it with the reason. The nodes a workflow adds
-- (`◇ Reflector`, `◇ Evaluator`: `reflection:` / `evaluation:`) are boxes too, each after the last box
-- with a route into it, their routes labelled like the stages' (`accept fix`, `send back`, `scored`).
--
-- The graph comes from the `graph` of `ided/run/start` (and `ided/run/feedback`); the statuses from
-- the run's `plan` progress events. `:IdedPlan [run]` opens it; a dry run opens it by itself.

local M = {}

local ICONS = { pending = "○", in_progress = "▶", completed = "✓", failed = "✗", skipped = "–" }
local NODE_ICON = "◇"
local ORDER = { success = 1, failure = 2, retry = 3 }
local DONE, ABORT = "DONE", "ABORT"

local function width(text)
  return vim.fn.strdisplaywidth(text)
end

local function pad(text, n)
  return text .. string.rep(" ", math.max(0, n - width(text)))
end

local function center(text, n)
  local left = math.floor((n - width(text)) / 2)
  return string.rep(" ", math.max(0, left)) .. text
end

--- The text of a stage's box: icon, name, attempt (a node's: its icon and name).
local function label(stage, status)
  if stage.node then
    return NODE_ICON .. " " .. stage.name
  end
  local s = status or {}
  local text = (ICONS[s.status] or ICONS.pending) .. " " .. stage.name
  if (s.attempt or 0) > 1 then
    text = text .. " · attempt " .. s.attempt
  end
  return text
end

--- The boxes top to bottom: the planned stages, then each node the workflow adds after the last box with a
--- route into it (the reflector after the last stage it reflects, the evaluator before DONE).
local function boxes_of(graph)
  local boxes = {}
  for _, stage in ipairs(graph.stages or {}) do
    table.insert(boxes, stage)
  end
  for _, node in ipairs(graph.nodes or {}) do
    local at = #boxes
    for i, box in ipairs(boxes) do
      for _, edge in ipairs(graph.edges or {}) do
        if edge.source == box.stageId and edge.target == node.nodeId then
          at = i
        end
      end
    end
    table.insert(boxes, at + 1, { stageId = node.nodeId, name = node.name, node = true })
  end
  return boxes
end

--- The lines of the graph (pure: used by `open` and tests).
--- graph: { entry, stages = { {stageId, name} }, skipped = { {stageId, name, reason} }, edges = { {source, target, outcome} },
--- nodes = { {nodeId, name} } }; statuses: stageId -> { status, attempt }; title: the first line.
function M.render(graph, statuses, title)
  statuses = statuses or {}
  local stages = boxes_of(graph)
  local index, names = {}, { [DONE] = DONE, [ABORT] = ABORT }
  for i, stage in ipairs(stages) do
    index[stage.stageId] = i
    names[stage.stageId] = stage.name
  end
  local out = {}
  for _, edge in ipairs(graph.edges or {}) do
    out[edge.source] = out[edge.source] or {}
    table.insert(out[edge.source], edge)
  end
  local to_done = false
  for _, edge in ipairs(graph.edges or {}) do
    to_done = to_done or edge.target == DONE
  end

  local inner = 0
  for _, stage in ipairs(stages) do
    inner = math.max(inner, width(label(stage, statuses[stage.stageId])), width(label(stage, { status = "in_progress", attempt = 9 })))
  end
  inner = math.max(inner + 2, 12)
  local indent = "  "
  local box_width = inner + 2
  local axis = #indent + math.floor(box_width / 2)
  local function down(text)
    return string.rep(" ", axis) .. text
  end
  local side_width = 0
  for _, outcome in pairs({ "success", "failure", "retry" }) do
    side_width = math.max(side_width, width(outcome))
  end
  for _, edge in ipairs(graph.edges or {}) do
    side_width = math.max(side_width, width(edge.outcome))
  end
  local function side(edge, from)
    local target = edge.target
    local name = names[target] or target
    local arrow = ""
    if index[target] and index[target] <= from then
      arrow = "↑ "
    elseif index[target] and index[target] > from + 1 then
      arrow = "↓ "
    end
    return "──" .. edge.outcome .. string.rep("─", 2 + side_width - width(edge.outcome)) .. "▶ " .. arrow .. name
  end

  local lines = { title or "ided plan", "" }
  local entry = graph.entry
  if entry == (stages[1] and stages[1].stageId) then
    vim.list_extend(lines, { down("start"), down("│"), down("▼") })
  elseif entry then
    table.insert(lines, indent .. "start ──▶ " .. (names[entry] or entry))
    table.insert(lines, "")
  end
  for i, stage in ipairs(stages) do
    local edges = out[stage.stageId] or {}
    table.sort(edges, function(a, b)
      return (ORDER[a.outcome] or 9) < (ORDER[b.outcome] or 9)
    end)
    local next_id = stages[i + 1] and stages[i + 1].stageId or (to_done and DONE or nil)
    local below, aside = {}, {}
    for _, edge in ipairs(edges) do
      if edge.target == next_id then
        table.insert(below, edge.outcome)
      else
        table.insert(aside, side(edge, i))
      end
    end
    local box = {
      indent .. "┌" .. string.rep("─", inner) .. "┐",
      indent .. "│ " .. pad(label(stage, statuses[stage.stageId]), inner - 1) .. "│",
      indent .. "└" .. string.rep("─", inner) .. "┘",
    }
    local after = {}
    if #below > 0 then
      after = { down("│ " .. table.concat(below, ", ")), down("▼") }
    elseif i < #stages then
      after = { "" }
    end
    -- routes to the side: on the box's middle and bottom lines, then beside what follows
    for k, text in ipairs(aside) do
      local at = k + 1
      if at <= 3 then
        box[at] = box[at] .. " " .. text
      else
        local line = after[at - 3] or ""
        after[at - 3] = pad(line, #indent + box_width) .. " " .. text
      end
    end
    vim.list_extend(lines, box)
    vim.list_extend(lines, after)
  end
  if to_done and #stages > 0 then
    vim.list_extend(lines, {
      indent .. "╭" .. string.rep("─", inner) .. "╮",
      indent .. "│" .. pad(center(DONE, inner), inner) .. "│",
      indent .. "╰" .. string.rep("─", inner) .. "╯",
    })
  end
  if #stages == 0 then
    table.insert(lines, indent .. "(no stage planned)")
  end
  if graph.skipped and #graph.skipped > 0 then
    table.insert(lines, "")
    for _, stage in ipairs(graph.skipped) do
      local why = stage.reason and stage.reason ~= vim.NIL and (": " .. stage.reason) or ""
      table.insert(lines, indent .. "skipped " .. stage.name .. why)
    end
  end
  table.insert(lines, "")
  table.insert(lines, indent .. "○ pending  ▶ running  ✓ completed  ✗ failed    q close")
  return lines
end

local function runs()
  return require("ided.runs")
end

local function buffer_name(run_id)
  return "ided://plan/" .. run_id
end

local PHASES = { planned = "dry run: nothing ran" }

--- The graph's first line for a run's state.
local function title(run_id, state)
  local parts = { "ided plan of run " .. run_id }
  if state.workflow then
    table.insert(parts, state.workflow)
  end
  table.insert(parts, PHASES[state.phase] or state.phase or "running")
  return table.concat(parts, " · ")
end

--- Draw (again) the plan buffer of a run when it exists.
function M.refresh(run_id)
  local buf = vim.fn.bufnr(buffer_name(run_id))
  local state = runs().state[run_id]
  if buf == -1 or not state or not state.graph then
    return
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.render(state.graph, state.statuses, title(run_id, state)))
  vim.bo[buf].modifiable = false
end

--- Open the plan of a run (default: the current one) beside the current window; a window that shows
--- another run's plan shows this one instead.
function M.open(run_id)
  local id = (run_id and run_id ~= "") and run_id or runs().current
  local state = id and runs().state[id]
  if not state or not state.graph then
    return require("ided").notify(
      id and ("no plan known for run " .. id .. ": plans come with runs started in this Neovim")
        or "no run yet: start one with :IdedRun {request} or :IdedDryRun {request}",
      vim.log.levels.WARN
    )
  end
  local name = buffer_name(id)
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "hide"
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = "idedplan"
    vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = buf, nowait = true, desc = "ided: close the plan" })
  end
  M.refresh(id)
  if vim.fn.bufwinid(buf) == -1 then
    local current = vim.api.nvim_get_current_win()
    local reuse
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if vim.bo[vim.api.nvim_win_get_buf(win)].filetype == "idedplan" then
        reuse = win
      end
    end
    if reuse then
      vim.api.nvim_win_set_buf(reuse, buf)
    else
      vim.cmd("botright vsplit")
      vim.api.nvim_win_set_buf(0, buf)
      vim.wo.wrap = false
      vim.api.nvim_set_current_win(current)
    end
  end
  vim.api.nvim_exec_autocmds("User", { pattern = "IdedPlanOpened", data = { run_id = id, buf = buf }, modeline = false })
  return buf
end

return M
