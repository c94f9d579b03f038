-- Drives a headless Neovim that loaded editors/nvim/botbin.lua (the documented 0.7 snippet) with a note open:
-- waits for the first index, presses K (hover), asks workspace/symbol, appends a line, saves, and searches
-- for it. Writes what it saw as JSON to $BOTBIN_NVIM_RESULT, then quits. Every wait is bounded.
local out = {}
local started = vim.loop.hrtime()

local function seconds()
  return (vim.loop.hrtime() - started) / 1e9
end

local function finish(err)
  out.error = err
  out.seconds = seconds()
  local file = io.open(os.getenv("BOTBIN_NVIM_RESULT"), "w")
  file:write(vim.fn.json_encode(out))
  file:close()
  vim.cmd("qall!")
end

local function client()
  return vim.lsp.get_active_clients({ name = "botbin" })[1]
end

local function request(method, params)
  local answers = vim.lsp.buf_request_sync(0, method, params, 30000)
  for _, answer in pairs(answers or {}) do
    if answer.err then
      return nil, vim.inspect(answer.err)
    end
    return answer.result
  end
  return nil, "no answer to " .. method
end

local function symbols(query)
  local result = request("workspace/symbol", { query = query }) or {}
  local found = {}
  for _, item in ipairs(result) do
    table.insert(found, { path = item.containerName, name = item.name, line = item.location.range.start.line })
  end
  return found
end

local function run()
  if not vim.wait(60000, function() return client() ~= nil and client().initialized end, 100) then
    return finish("the botbin client did not start")
  end
  local ready = vim.wait(300000, function()
    local status = client().request_sync("botbin/status", {}, 10000, 0)
    local result = status and status.result
    return result ~= nil and not result.indexing and result.chunks > 0
  end, 500)
  if not ready then
    return finish("the first index did not finish")
  end
  out.status = client().request_sync("botbin/status", {}, 10000, 0).result
  out.mapping = vim.fn.maparg("K", "n", false, true).desc
  -- K on the paragraph under the cursor (line 20 of MEMORY.md: the project overview) opens a float.
  vim.api.nvim_win_set_cursor(0, { 20, 0 })
  local float_text
  vim.api.nvim_feedkeys("K", "mx", false)
  vim.wait(30000, function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= "" then
        float_text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), "\n")
        return true
      end
    end
    return false
  end, 100)
  out.hover = float_text
  out.symbols = symbols("why did we stop shipping Windows builds of the agent")
  -- Save, then search: the new words are found once the note is synced.
  vim.api.nvim_buf_set_lines(0, -1, -1, false, { "", "The quokka mascot sticker budget was approved by Ingrid." })
  vim.cmd("write")
  local saved = vim.loop.hrtime()
  vim.wait(60000, function()
    out.after_save = symbols("quokka mascot sticker budget")
    return #out.after_save > 0 and out.after_save[1].path == "MEMORY.md"
  end, 250)
  out.save_to_search_s = (vim.loop.hrtime() - saved) / 1e9
  finish(nil)
end

vim.defer_fn(function()
  local ok, err = pcall(run)
  if not ok then
    finish(tostring(err))
  end
end, 10)
