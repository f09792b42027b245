-- ided for Neovim (>= 0.10): runs `ided lsp` beside your other language servers.
--
--   require("ided").setup({})       -- start ided for every buffer under a workspace root
--   :IdedSearch {query}             -- search the workspace index; hits go to the quickfix list
--   :IdedSymbols {query}            -- symbols by name (workspace/symbol) into the quickfix list
--   :IdedStatus                     -- index and daemon status
--   :IdedRun {request}              -- start a run; :IdedRun! or :IdedDryRun {request} plans only
--   :IdedPlan [run]                 -- the run's plan as a graph (stages, success/failure/retry routes)
--   :IdedReview [run]               -- the run's changed files and hunks; <CR> diff mode, <Space> keep/drop
--   :IdedAccept / :IdedReject / :IdedFeedback {text} / :IdedRollback / :IdedCancel  [run]
--
-- Definition, references and hover (vim.lsp.buf.definition(), grr, K, CTRL-]) are answered by the
-- language servers ided runs for the workspace wherever no other language server attached to the
-- buffer answers them (`intel = "auto"`, the default; true: always; false: never).
--
-- The server attaches to the workspace's ided daemon (starting it when none runs), so Neovim,
-- VS Code and agents on the same workspace share one hot index. See editors/neovim/README.md.

local M = {}

M.config = {
  -- the command that starts the server; extra `--set key=value` pairs go before "lsp"
  cmd = { "ided", "lsp" },
  -- files that mark a workspace root (the nearest parent holding one wins; else the cwd)
  root_markers = { ".ided.toml", ".git" },
  -- start the server for every normal file buffer (false: only when a command needs it)
  autostart = true,
  search = { k = 30, mode = "hybrid" },
  symbols = { limit = 50 },
  -- the progress window's height; open the review by itself when a run ends with one
  run = { height = 12, open_review = true },
  -- textDocument/definition, references and hover through ided: "auto" where no other language
  -- server attached to the buffer provides them; true: always; false: never
  intel = "auto",
}

local NAME = "ided"

local function notify(message, level)
  vim.notify("ided: " .. message, level or vim.log.levels.INFO)
end
M.notify = notify

-- Neovim 0.11 made client methods take `self` (client:request); 0.10 has client.request.
local function request(client, method, params, handler, bufnr)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end
M.request = request

local function root_for(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local source = name ~= "" and name or vim.fn.getcwd()
  return vim.fs.root(source, M.config.root_markers) or vim.fn.getcwd()
end

-- requests asked for before the server answered `initialize`, sent once it has
local pending = {}

local INTEL_METHODS = {
  ["textDocument/definition"] = true,
  ["textDocument/references"] = true,
  ["textDocument/hover"] = true,
}

--- Whether a client other than ided, attached to `bufnr`, answers `method` there.
local function served_by_another(bufnr, method)
  for _, other in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    if other.name ~= NAME then
      local ok, yes
      if vim.fn.has("nvim-0.11") == 1 then
        ok, yes = pcall(other.supports_method, other, method, bufnr)
      else
        ok, yes = pcall(other.supports_method, method, { bufnr = bufnr })
      end
      if ok and yes then
        return true
      end
    end
  end
  return false
end

--- With `intel = "auto"`, ided's client gives way on a buffer where another language server answers
--- definition, references or hover: Neovim then asks only that one (no doubled results).
local function give_way(client)
  local original = client.supports_method
  local function busy_elsewhere(method, bufnr)
    if not INTEL_METHODS[method] or bufnr == nil then
      return false
    end
    bufnr = bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
    return served_by_another(bufnr, method)
  end
  if vim.fn.has("nvim-0.11") == 1 then
    client.supports_method = function(self, method, bufnr)
      if type(bufnr) == "table" then
        bufnr = bufnr.bufnr
      end
      return not busy_elsewhere(method, bufnr) and original(self, method, bufnr)
    end
  else
    client.supports_method = function(method, opts)
      return not busy_elsewhere(method, type(opts) == "table" and opts.bufnr or nil) and original(method, opts)
    end
  end
end

local function ready(client)
  if M.config.intel == "auto" then
    give_way(client)
  end
  local queued = pending
  pending = {}
  for _, fn in ipairs(queued) do
    fn(client)
  end
end

--- Start (or reuse) the ided client for a buffer; returns the client id. A buffer that is no file
--- (the empty start buffer, a scratch buffer) starts the server without attaching it.
function M.start(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local is_file = vim.bo[bufnr].buftype == "" and vim.api.nvim_buf_get_name(bufnr) ~= ""
  local id = vim.lsp.start({
    name = NAME,
    cmd = M.config.cmd,
    root_dir = root_for(bufnr),
    init_options = { standardIntel = M.config.intel ~= false },
    on_init = ready,
    handlers = {
      ["ided/index/changed"] = function(_, params)
        vim.api.nvim_exec_autocmds("User", { pattern = "IdedIndexChanged", data = params, modeline = false })
      end,
      ["ided/run/progress"] = function(_, params)
        require("ided.runs").on_progress(params)
      end,
      -- what the server must tell the user (the daemon not reachable, no language server found for a
      -- file's language) as a notification, like the plugin's own messages (Neovim would only echo it)
      ["window/showMessage"] = function(_, params)
        local levels = { vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO, vim.log.levels.DEBUG }
        vim.notify(params.message, levels[params.type] or vim.log.levels.INFO)
        return vim.NIL
      end,
    },
  }, { bufnr = bufnr, attach = is_file })
  M.client_id = id or M.client_id
  return id
end

--- The running ided client (started for the current buffer when there is none).
function M.client()
  local known = M.client_id and vim.lsp.get_client_by_id(M.client_id)
  if known then
    return known
  end
  local clients = vim.lsp.get_clients({ name = NAME })
  if #clients > 0 then
    return clients[1]
  end
  local id = M.start(vim.api.nvim_get_current_buf())
  return id and vim.lsp.get_client_by_id(id) or nil
end

--- Call `fn(client)` once the ided server is initialized (starting it when needed).
function M.with_client(fn)
  local client = M.client()
  if not client then
    return notify("could not start `" .. table.concat(M.config.cmd, " ") .. "`", vim.log.levels.ERROR)
  end
  if client.initialized then
    return fn(client)
  end
  table.insert(pending, fn)
end

--- Quickfix items for `ided/index/search` hits (pure: used by :IdedSearch and tests).
function M.hits_to_items(hits)
  local items = {}
  for _, hit in ipairs(hits or {}) do
    local start = hit.location.range.start
    local label = hit.qualifiedName or hit.name or hit.path
    local first = (hit.signature or hit.preview or ""):match("[^\n]*") or ""
    table.insert(items, {
      filename = vim.uri_to_fname(hit.location.uri),
      lnum = start.line + 1,
      col = start.character + 1,
      text = string.format("[%s] %s  %s", hit.symbolKind, label, vim.trim(first)),
    })
  end
  return items
end

--- Quickfix items for workspace/symbol results.
function M.symbols_to_items(symbols)
  local items = {}
  for _, symbol in ipairs(symbols or {}) do
    local start = symbol.location.range.start
    local kind = vim.lsp.protocol.SymbolKind[symbol.kind] or "Symbol"
    local name = symbol.containerName and (symbol.containerName .. "." .. symbol.name) or symbol.name
    table.insert(items, {
      filename = vim.uri_to_fname(symbol.location.uri),
      lnum = start.line + 1,
      col = start.character + 1,
      text = string.format("[%s] %s", kind, name),
    })
  end
  return items
end

local function to_quickfix(title, what, items, event)
  vim.fn.setqflist({}, " ", { title = title, items = items })
  if #items > 0 then
    vim.cmd("botright copen")
  else
    notify("nothing found for " .. what, vim.log.levels.WARN)
  end
  vim.api.nvim_exec_autocmds("User", { pattern = event, data = { title = title, count = #items }, modeline = false })
end

--- Search the index; hits go to the quickfix list (then `User IdedSearchDone` fires).
function M.search(query, opts)
  opts = vim.tbl_extend("force", M.config.search, opts or {})
  local params = { query = query, k = opts.k, mode = opts.mode, kind = opts.kind, pathGlob = opts.path_glob }
  M.with_client(function(client)
    request(client, "ided/index/search", params, function(err, result)
      if err then
        notify(err.message, vim.log.levels.ERROR)
        return vim.api.nvim_exec_autocmds("User", { pattern = "IdedSearchDone", data = { error = err.message } })
      end
      to_quickfix("ided: " .. query, query, M.hits_to_items(result.hits), "IdedSearchDone")
    end)
  end)
end

--- Symbols whose name matches (workspace/symbol from the index) into the quickfix list.
function M.symbols(query)
  M.with_client(function(client)
    request(client, "workspace/symbol", { query = query }, function(err, result)
      if err then
        return notify(err.message, vim.log.levels.ERROR)
      end
      local items = M.symbols_to_items(result)
      local limited = vim.list_slice(items, 1, M.config.symbols.limit)
      to_quickfix("ided symbols: " .. query, "symbols matching " .. query, limited, "IdedSymbolsDone")
    end)
  end)
end

--- Index and daemon status, as a notification.
function M.status()
  M.with_client(function(client)
    M.status_with(client)
  end)
end

function M.status_with(client)
  request(client, "ided/index/status", vim.empty_dict(), function(err, s)
    if err then
      return notify(err.message, vim.log.levels.ERROR)
    end
    local lines = {
      string.format("workspace %s (daemon pid %d, %d client(s))", s.workspace, s.daemonPid, s.clients),
      string.format("%d files, %d chunks, %.0f%% embedded", s.filesIndexed, s.chunks, 100 * s.embeddedFraction),
      s.busy and ("busy: " .. s.busy) or (s.ready and "ready" or ("not ready: " .. tostring(s.reason))),
    }
    notify(table.concat(lines, "\n"))
    vim.api.nvim_exec_autocmds("User", { pattern = "IdedStatusDone", data = s, modeline = false })
  end)
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  vim.api.nvim_create_user_command("IdedSearch", function(args)
    M.search(args.args)
  end, { nargs = "+", desc = "ided: search the workspace index (quickfix)" })
  vim.api.nvim_create_user_command("IdedSymbols", function(args)
    M.symbols(args.args)
  end, { nargs = "+", desc = "ided: workspace symbols by name (quickfix)" })
  vim.api.nvim_create_user_command("IdedStatus", function()
    M.status()
  end, { nargs = 0, desc = "ided: index and daemon status" })
  local runs = require("ided.runs")
  vim.api.nvim_create_user_command("IdedRun", function(args)
    runs.start(args.args, { dry_run = args.bang })
  end, { nargs = "+", bang = true, desc = "ided: start a run (!: a dry run that only plans)" })
  vim.api.nvim_create_user_command("IdedDryRun", function(args)
    runs.start(args.args, { dry_run = true })
  end, { nargs = "+", desc = "ided: plan a run without running it" })
  vim.api.nvim_create_user_command("IdedPlan", function(args)
    require("ided.plan_graph").open(args.args)
  end, { nargs = "?", desc = "ided: the run's plan as a graph" })
  vim.api.nvim_create_user_command("IdedReview", function(args)
    require("ided.review").open(args.args)
  end, { nargs = "?", desc = "ided: review a run's changes (diff mode)" })
  vim.api.nvim_create_user_command("IdedAccept", function(args)
    runs.accept(args.args)
  end, { nargs = "?", desc = "ided: accept a run's changes onto your branch" })
  vim.api.nvim_create_user_command("IdedReject", function(args)
    runs.reject(args.args)
  end, { nargs = "?", desc = "ided: reject a run's changes" })
  vim.api.nvim_create_user_command("IdedFeedback", function(args)
    runs.feedback(args.args)
  end, { nargs = "+", desc = "ided: answer the current run's review with what to change" })
  vim.api.nvim_create_user_command("IdedRollback", function(args)
    runs.rollback(args.args)
  end, { nargs = "?", desc = "ided: roll an accepted run back" })
  vim.api.nvim_create_user_command("IdedCancel", function(args)
    runs.cancel(args.args)
  end, { nargs = "?", desc = "ided: cancel a run" })
  if M.config.autostart then
    vim.api.nvim_create_autocmd("FileType", {
      group = vim.api.nvim_create_augroup("ided", { clear = true }),
      callback = function(event)
        if vim.bo[event.buf].buftype == "" and vim.api.nvim_buf_get_name(event.buf) ~= "" then
          M.start(event.buf)
        end
      end,
    })
  end
end

return M
