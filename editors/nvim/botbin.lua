-- botbin for Neovim 0.7-0.9 (Debian stable ships 0.7.2): start one `botbin lsp` per notes folder and attach
-- every markdown buffer under it. `K` shows related memories; :lua vim.lsp.buf.workspace_symbol("query")
-- searches by meaning. Neovim 0.10+ can use the shorter snippet of docs/neovim.md.
local markers = { "MEMORY.md", "botbin.toml", ".git" }
local clients = {} -- root folder -> client id

local function root_of(path)
  local dir = vim.fn.fnamemodify(path, ":p:h")
  while true do
    for _, marker in ipairs(markers) do
      if vim.loop.fs_stat(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      return nil
    end
    dir = parent
  end
end

vim.api.nvim_create_autocmd("FileType", {
  pattern = "markdown",
  callback = function(args)
    local root = root_of(vim.api.nvim_buf_get_name(args.buf))
    if root == nil then
      return
    end
    if clients[root] == nil then
      clients[root] = vim.lsp.start_client({
        name = "botbin",
        cmd = { "botbin", "lsp" },
        root_dir = root,
        workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
        init_options = { top_k = 10 }, -- any botbin.toml key
      })
    end
    vim.lsp.buf_attach_client(args.buf, clients[root])
    vim.keymap.set("n", "K", vim.lsp.buf.hover, { buffer = args.buf, desc = "botbin: related memories" })
  end,
})
