-- cudalint's language server in Neovim 0.7 and later.
--
--   require("cudalint").setup({ settings = { cudalint = { nixpkgs = "25.11" } } })
--
-- On 0.11+ this is `vim.lsp.config("cudalint", ...)` + `vim.lsp.enable("cudalint")`; on 0.8-0.10
-- a FileType autocmd calling `vim.lsp.start`; on 0.7 the same autocmd with `vim.lsp.start_client`
-- and `vim.lsp.buf_attach_client`. Other Nix servers (nil, nixd) attach alongside.
local M = {}

M.name = "cudalint"

-- Files that mark a project root: cudalint reads its configuration from there.
M.root_markers = { "cudalint.toml", ".cudalint.toml", "pyproject.toml", "flake.nix", ".git" }

-- The client configuration, for every Neovim version. `settings.cudalint` holds the config
-- file's keys (`select`, `ignore`, `extend-select`, `nixpkgs`, `cuda`, `unsafe-fixes`); unset
-- keys leave the project's cudalint.toml in charge.
M.default_config = {
  cmd = { "cudalint", "server" },
  filetypes = { "nix" },
  root_markers = M.root_markers,
  settings = { cudalint = vim.empty_dict() },
}

local function has(version)
  return vim.fn.has("nvim-" .. version) == 1
end

--- The root directory for a buffer: the nearest directory holding a root marker, else the
--- file's own directory.
function M.root_dir(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local start = name ~= "" and vim.fn.fnamemodify(name, ":p:h") or vim.fn.getcwd()
  for _, marker in ipairs(M.root_markers) do
    local found = vim.fn.findfile(marker, start .. ";")
    if found == "" then
      found = vim.fn.finddir(marker, start .. ";")
    end
    if found ~= "" then
      return vim.fn.fnamemodify(found, ":p:h"):gsub("/%.git$", "")
    end
  end
  return start
end

local function merged(user)
  return vim.tbl_deep_extend("force", vim.deepcopy(M.default_config), user or {})
end

-- The server reads its settings from `initializationOptions` first, then asks for them.
local function init_options(config)
  return config.init_options or (config.settings or {}).cudalint
end

-- Neovim 0.11+: the native configuration; `lsp/cudalint.lua` on the runtimepath holds the same.
local function setup_config(config)
  config.init_options = init_options(config)
  vim.lsp.config(M.name, config)
  vim.lsp.enable(M.name)
end

-- Start (or reuse) a client for each Nix buffer as its filetype is set.
local function on_filetype(config, attach)
  vim.api.nvim_create_autocmd("FileType", {
    group = vim.api.nvim_create_augroup("cudalint", { clear = true }),
    pattern = config.filetypes,
    callback = function(event)
      attach(event.buf)
    end,
  })
end

local function client_config(config, root)
  return {
    name = M.name,
    cmd = config.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    settings = config.settings,
    init_options = init_options(config),
    on_attach = config.on_attach,
    capabilities = config.capabilities,
  }
end

-- Neovim 0.8-0.10: vim.lsp.start reuses a running client with the same name and root.
local function setup_start(config)
  on_filetype(config, function(bufnr)
    vim.lsp.start(client_config(config, M.root_dir(bufnr)), { bufnr = bufnr })
  end)
end

-- Neovim 0.7: one client per root, started by hand and attached to each Nix buffer.
local function setup_start_client(config)
  local clients = {}
  on_filetype(config, function(bufnr)
    local root = M.root_dir(bufnr)
    local id = clients[root]
    if id == nil or vim.lsp.get_client_by_id(id) == nil then
      id = vim.lsp.start_client(client_config(config, root))
      clients[root] = id
    end
    if id ~= nil then
      vim.lsp.buf_attach_client(bufnr, id)
    end
  end)
end

M.strategies = { config = setup_config, start = setup_start, start_client = setup_start_client }

--- The strategy this Neovim supports best.
function M.default_strategy()
  if has("0.11") then
    return "config"
  elseif has("0.8") then
    return "start"
  end
  return "start_client"
end

--- Start cudalint for Nix buffers. `opts` overrides `default_config` (cmd, settings,
--- on_attach, capabilities, ...); `opts.strategy` picks the API ("config", "start",
--- "start_client") when the default for this version is not wanted.
function M.setup(opts)
  opts = opts or {}
  local strategy = opts.strategy or M.default_strategy()
  opts.strategy = nil
  local setup = M.strategies[strategy]
  if setup == nil then
    error(("cudalint: unknown strategy %q (config, start or start_client)"):format(strategy))
  end
  if vim.fn.executable(merged(opts).cmd[1]) == 0 then
    vim.notify(
      "cudalint: `" .. merged(opts).cmd[1] .. "` not found: install it (`pipx install git+https://github.com/cudalint/cudalint` or "
        .. "`nix profile install github:cudalint/cudalint`) or set `cmd`",
      vim.log.levels.WARN
    )
  end
  setup(merged(opts))
end

--- nvim-lspconfig's older registration table (`require("lspconfig.configs").cudalint = ...`).
M.lspconfig = {
  default_config = {
    cmd = M.default_config.cmd,
    filetypes = M.default_config.filetypes,
    root_dir = function(fname)
      local ok, util = pcall(require, "lspconfig.util")
      if ok then
        return util.root_pattern(unpack(M.root_markers))(fname) or vim.fn.fnamemodify(fname, ":p:h")
      end
      return vim.fn.fnamemodify(fname, ":p:h")
    end,
    settings = M.default_config.settings,
  },
  docs = {
    description = "cudalint: diagnostics and quick fixes for Nix expressions that use NVIDIA CUDA packages",
  },
}

return M
