-- Loaded by Neovim's plugin loader; does nothing until require("ided").setup() is called,
-- so the plugin costs nothing for users who install it and configure it later.
if vim.fn.has("nvim-0.10") == 0 then
  vim.notify("ided: Neovim 0.10 or later is required", vim.log.levels.WARN)
end
