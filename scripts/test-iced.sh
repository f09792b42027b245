#!/usr/bin/env bash
# Builds and tests the Iced client (editors/iced) when cargo is present: clippy with -D warnings,
# then `cargo test` (reducer, simulator, and end-to-end tests against this checkout's ided).
# Skips with the reason when there is no cargo, or when IDED_SKIP_ICED=1.
#
# Cargo's target directory lives outside the clone, one per checkout (scripts/iced-target-dir.sh;
# CARGO_TARGET_DIR overrides it), so repeated runs are incremental. IDED_CARGO_JOBS (default 2)
# bounds the build's parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${IDED_SKIP_ICED:-0}" = 1 ]; then
  echo "test-iced: SKIPPED: IDED_SKIP_ICED=1" >&2
  exit 0
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "test-iced: SKIPPED: cargo not found (install Rust 1.88+ to build and test editors/iced)" >&2
  exit 0
fi

CARGO_TARGET_DIR=$(bash scripts/iced-target-dir.sh)
export CARGO_TARGET_DIR
# The end-to-end tests drive this checkout's ided (they skip, saying so, when there is none).
if [ -z "${IDED_BIN:-}" ] && [ -x .venv/bin/ided ]; then
  export IDED_BIN="$PWD/.venv/bin/ided"
fi
manifest=editors/iced/Cargo.toml
jobs="${IDED_CARGO_JOBS:-2}"

echo "test-iced: cargo clippy + cargo test (target dir $CARGO_TARGET_DIR)" >&2
start=$(date +%s)
cargo clippy --manifest-path "$manifest" --locked -j "$jobs" --all-targets --quiet -- -D warnings
cargo test --manifest-path "$manifest" --locked -j "$jobs" --quiet
echo "test-iced: passed in $(($(date +%s) - start)) s" >&2
