# ided developer recipes. First time: `./dev setup` (installs uv, the venv and `just` itself).
set shell := ["bash", "-euo", "pipefail", "-c"]
set export
HF_HUB_OFFLINE := "1"

default: lint type test

# install/refresh the environment from uv.lock
sync:
    uv sync --frozen

# format and auto-fix
fmt:
    uv run --frozen ruff check --fix-only .
    uv run --frozen ruff format .

lint:
    uv run --frozen ruff check .
    uv run --frozen ruff format --check .

type:
    uv run --frozen pyright

# the whole suite, as CI runs it
test *ARGS:
    ./dev test {{ARGS}}

# quick: everything but end-to-end tests
unit *ARGS:
    uv run --frozen pytest -m "not e2e" {{ARGS}}

# regenerate the published JSON Schemas
schema:
    uv run --frozen ided config schema > docs/config.schema.json

schema-check: schema
    git diff --exit-code docs/config.schema.json

# index benchmark (see bench/README.md); ROOT defaults to the venv's site-packages
bench-index *ARGS:
    uv run --frozen python bench/index.py {{ARGS}}

# Qdrant Edge vs a real Qdrant server (scripts/build-qdrant-server.sh builds it), e.g. --n 100000 --team 4 --tenancy 20
bench-store *ARGS:
    uv run --frozen python bench/store.py {{ARGS}}

# build the Qdrant server once (cargo; cached under ~/.cache/ided/qdrant-server) for the server tests and bench-store
build-qdrant-server *ARGS:
    bash scripts/build-qdrant-server.sh {{ARGS}}

bench-rerank *ARGS:
    uv run --frozen python bench/rerank.py {{ARGS}}

bench-embedding *ARGS:
    uv run --frozen python bench/embedding.py {{ARGS}}

bench-chunking *ARGS:
    uv run --frozen python bench/chunking.py {{ARGS}}

bench-intel *ARGS:
    uv run --frozen python bench/intel.py {{ARGS}}

# ided mcp against Serena, jCodeMunch and code-index-mcp (installed from PyPI under ~/.cache/ided/bench-peers)
bench-peers *ARGS:
    uv run --frozen python bench/peers.py {{ARGS}}

bench-daemon *ARGS:
    uv run --frozen python bench/daemon_latency.py {{ARGS}}

bench-budget *ARGS:
    uv run --frozen python -P bench/request_budget.py {{ARGS}}

bench-pipeline *ARGS:
    uv run --frozen python bench/pipeline.py {{ARGS}}

bench-runs *ARGS:
    uv run --frozen python bench/run_store.py {{ARGS}}

# file/function localization on the SWE-bench-Lite dev set (../shared/swebench-dev) against BM25
bench-localization *ARGS:
    uv run --frozen python bench/localization.py {{ARGS}}

# the localization golden set (20 real issues over a committed scikit-learn snapshot) against its baseline
eval-localization:
    uv run --frozen ided eval --localization tests/golden/localization.yaml

# the larger localization set: 79 dev-set issues over their own checkouts (materialize.sh writes them)
eval-localization-devset *ARGS:
    uv run --frozen ided eval --localization tests/golden/localization_devset.yaml --checkouts "${SWEBENCH_DEV_REPOS:-/tmp/swebench-dev-repos}" {{ARGS}}

# short questions (docstring sentences, titles, identifiers) on repositories the learned ranker never saw: BM25 vs ided
bench-short-questions *ARGS:
    uv run --frozen python bench/short_questions.py {{ARGS}}

# the learned ranker from scratch: mine pairs from MIRRORS (<owner>+<name>/repo git dirs), featurize, train
train-ranker MIRRORS OUT="${XDG_CACHE_HOME:-$HOME/.cache}/ided/ranker":
    nice -n 10 uv run --frozen python bench/mine_pairs.py --mirrors {{MIRRORS}} --out {{OUT}}/pairs --epoch 250 --epochs 3
    nice -n 10 uv run --frozen python bench/ranker_data.py --mirrors {{MIRRORS}} --pairs {{OUT}}/pairs --out {{OUT}}/rows
    uv sync --frozen --group train
    uv run --frozen --group train python bench/train_ranker.py --rows {{OUT}}/rows --out daemon/index/models/ranker-v1.json

# the learned ranker's golden sets (issue texts and their titles alone over the committed scikit-learn snapshot)
eval-ranker:
    uv run --frozen ided eval --localization tests/golden/localization_learned.yaml
    uv run --frozen ided eval --localization tests/golden/localization_titles.yaml

bench-retrieval *ARGS:
    uv run --frozen python bench/retrieval_quality.py {{ARGS}}

bench-acp *ARGS:
    uv run --frozen python bench/acp_latency.py {{ARGS}}

bench-vcs *ARGS:
    uv run --frozen python bench/vcs_overhead.py {{ARGS}}

bench-agents *ARGS:
    uv run --frozen python bench/agents_overhead.py {{ARGS}}

# the long JSON-RPC fuzz of the stdio fronts (MCP, LSP, ACP): per front, frames sent / survived / unanswered / deaths
fuzz *ARGS:
    uv run --frozen python scripts/fuzz_fronts.py {{ARGS}}

# the Iced client (editors/iced; cargo's target dir outside the clone, one per checkout: scripts/iced-target-dir.sh)
iced:
    CARGO_TARGET_DIR="$(bash scripts/iced-target-dir.sh)" cargo build --manifest-path editors/iced/Cargo.toml --locked -j 2

# start the Iced client on WORKSPACE (it spawns this checkout's `ided acp`)
iced-run WORKSPACE=".":
    CARGO_TARGET_DIR="$(bash scripts/iced-target-dir.sh)" IDED_BIN="${IDED_BIN:-$PWD/.venv/bin/ided}" cargo run --manifest-path editors/iced/Cargo.toml --locked -j 2 -- {{WORKSPACE}}

# clippy + the Iced client's tests (also part of ./dev test)
iced-test:
    bash scripts/test-iced.sh

# screenshots of the Iced client under Xvfb: `--scene all` regenerates every one in docs/images
iced-screenshot *ARGS:
    bash scripts/iced-screenshot.sh {{ARGS}}

# regenerate docs/images/vscode/*.png: the code-server end-to-end test (one pass of the loop) with its screenshots kept
vscode-screenshots:
    IDED_VSCODE_SCREENSHOTS=docs/images/vscode uv run --frozen pytest -q -p no:cacheprovider tests/e2e/test_vscode_code_server.py

# the Iced client's benchmarks (first frame, update-to-screen latency, RSS)
bench-iced *ARGS:
    bash bench/iced_client.sh {{ARGS}}

# run the workspace daemon in the foreground (editors and agents attach with `ided lsp` / `ided mcp`)
serve WORKSPACE=".":
    uv run --frozen ided daemon -w {{WORKSPACE}}

check: lint type schema-check test

# regenerate the Neovim screens (docs/images/neovim/*.txt) and docs/first-ten-minutes-neovim.md's screen blocks
neovim-screens:
    uv run --frozen python scripts/neovim-screens.py
