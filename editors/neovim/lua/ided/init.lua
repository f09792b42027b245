-- ided for Neovim (>= 0.10): runs `ided lsp` beside your other language servers.
--
--   require("ided").setup({})       -- start ided for every buffer under a workspace root
--   :IdedSearch {query}             -- search the workspace index; hits go to the quickfix list
--   :IdedSymbols {query}            -- symbols by name (workspace/symbol) into the quickfix list
--   :IdedStatus                     -- index and daemon status
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
}

local NAME = "ided"

local function notify(message, level)
  vim.notify("ided: " .. message, level or vim.log.levels.INFO)
end

-- Neovim 0.11 made client methods take `self` (client:request); 0.10 has client.request.
local function request(client, method, params, handler, bufnr)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function root_for(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local source = name ~= "" and name or vim.fn.getcwd()
  return vim.fs.root(source, M.config.root_markers) or vim.fn.getcwd()
end

--- Start (or reuse) the ided client for a buffer; returns the client id.
function M.start(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  return vim.lsp.start({
    name = NAME,
    cmd = M.config.cmd,
    root_dir = root_for(bufnr),
    handlers = {
      ["ided/index/changed"] = function(_, params)
        vim.api.nvim_exec_autocmds("User", { pattern = "IdedIndexChanged", data = params, modeline = false })
      end,
    },
  }, { bufnr = bufnr })
end

--- The running ided client (started for the current buffer when there is none).
function M.client()
  local clients = vim.lsp.get_clients({ name = NAME })
  if #clients > 0 then
    return clients[1]
  end
  local id = M.start(vim.api.nvim_get_current_buf())
  return id and vim.lsp.get_client_by_id(id) or nil
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

local function to_quickfix(title, items, event)
  vim.fn.setqflist({}, " ", { title = title, items = items })
  if #items > 0 then
    vim.cmd("botright copen")
  else
    notify("nothing found for " .. title, vim.log.levels.WARN)
  end
  vim.api.nvim_exec_autocmds("User", { pattern = event, data = { title = title, count = #items }, modeline = false })
end

--- Search the index; hits go to the quickfix list (then `User IdedSearchDone` fires).
function M.search(query, opts)
  opts = vim.tbl_extend("force", M.config.search, opts or {})
  local client = M.client()
  if not client then
    return notify("could not start `" .. table.concat(M.config.cmd, " ") .. "`", vim.log.levels.ERROR)
  end
  local params = { query = query, k = opts.k, mode = opts.mode, kind = opts.kind, pathGlob = opts.path_glob }
  request(client, "ided/index/search", params, function(err, result)
    if err then
      notify(err.message, vim.log.levels.ERROR)
      return vim.api.nvim_exec_autocmds("User", { pattern = "IdedSearchDone", data = { error = err.message } })
    end
    to_quickfix("ided: " .. query, M.hits_to_items(result.hits), "IdedSearchDone")
  end)
end

--- Symbols whose name matches (workspace/symbol from the index) into the quickfix list.
function M.symbols(query)
  local client = M.client()
  if not client then
    return notify("could not start the server", vim.log.levels.ERROR)
  end
  request(client, "workspace/symbol", { query = query }, function(err, result)
    if err then
      return notify(err.message, vim.log.levels.ERROR)
    end
    local items = M.symbols_to_items(result)
    to_quickfix("ided symbols: " .. query, vim.list_slice(items, 1, M.config.symbols.limit), "IdedSymbolsDone")
  end)
end

--- Index and daemon status, as a notification.
function M.status()
  local client = M.client()
  if not client then
    return notify("could not start the server", vim.log.levels.ERROR)
  end
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
