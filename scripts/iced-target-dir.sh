#!/usr/bin/env bash
# Prints the cargo target directory of this checkout's Iced client (editors/iced): $CARGO_TARGET_DIR
# when it is set, else one per checkout outside the clone,
#   ${XDG_CACHE_HOME:-~/.cache}/ided/iced-targets/<checkout folder>-<hash of its path>
# so rebuilds are incremental and two checkouts never share one: with a shared directory,
# target/debug/ided-iced is whichever checkout built last (the screenshot and bench scripts run
# that binary), and each build waits on the other's lock. Each checkout builds its dependencies
# once (a cold debug build: about 3 min on 2 cores, ~6 GB). Used by scripts/test-iced.sh,
# scripts/iced-screenshot.sh, bench/iced_client.sh and the justfile's iced recipes.
set -euo pipefail
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
  printf '%s\n' "$CARGO_TARGET_DIR"
  exit 0
fi
root=$(cd "$(dirname "$0")/.." && pwd -P)
if command -v sha256sum >/dev/null 2>&1; then sum=(sha256sum); else sum=(shasum -a 256); fi  # macOS: shasum
hash=$(printf '%s' "$root" | "${sum[@]}" | cut -c1-12)
printf '%s\n' "${XDG_CACHE_HOME:-$HOME/.cache}/ided/iced-targets/$(basename "$root")-$hash"
