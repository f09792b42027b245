#!/usr/bin/env bash
# Screenshots of the Iced client under Xvfb on a fixture git repository, driven by ided's replay
# model (no LLM) through the real `ided acp`; the client writes its own window to PNG
# (--screenshot) and exits. One scene per call:
#
#   review    (default) a /dry-run prompt, then an editing run whose batched diff waits for
#             review; written to docs/images/iced-client.png unless OUT is given
#   plan      a /dry-run prompt alone: the plan graph in the transcript
#   rollback  an editing run accepted, then `/rollback RUN`: the card says the run rolled back
#
#   scripts/iced-screenshot.sh [--scene review|plan|rollback] [OUT.png]
#
# Needs cargo, this checkout's .venv (./dev setup) and an X server to draw in: Xvfb's xvfb-run
# (Debian: apt-get install xvfb; scripts/install-test-tools.sh does not install it, no test
# needs it).
set -euo pipefail
cd "$(dirname "$0")/.."
scene=review
if [ "${1:-}" = --scene ]; then
  scene="${2:?--scene needs review, plan or rollback}"
  shift 2
fi
case "$scene" in
  review) default_out=docs/images/iced-client.png ;;
  plan | rollback) default_out="${TMPDIR:-/tmp}/iced-$scene.png" ;;
  *) echo "iced-screenshot: unknown scene '$scene' (review, plan, rollback)" >&2; exit 2 ;;
esac
out="${1:-$default_out}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ided/iced-target}"
command -v xvfb-run >/dev/null || {
  echo "iced-screenshot: xvfb-run not found: the client needs an X server to draw in (Debian: apt-get install xvfb)" >&2
  exit 1
}
[ -x .venv/bin/ided ] || { echo "iced-screenshot: .venv/bin/ided missing (./dev setup)" >&2; exit 1; }
cargo build --manifest-path editors/iced/Cargo.toml --locked -j "${IDED_CARGO_JOBS:-2}" --quiet

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo="$work/calc"
mkdir -p "$repo/tests"
g() { git -C "$repo" -c user.name="Ada User" -c user.email=ada@example.com -c commit.gpgsign=false "$@"; }
g init -q -b main
cat >"$repo/calc.py" <<'PY'
"""A tiny calculator."""


def add(a, b):
    return a + b


def divide(a, b):
    return a / b
PY
cat >"$repo/tests/test_calc.py" <<'PY'
from calc import add


def test_add():
    assert add(2, 3) == 5
PY
printf '# calc\n\nA tiny calculator.\n' >"$repo/README.md"
g add -A && g commit -q -m "initial"

fixed=$(cat <<'PY'
"""A tiny calculator."""


def add(a, b):
    return a + b


def divide(a, b):
    if b == 0:
        raise ZeroDivisionError("divide: b must not be 0")
    return a / b
PY
)
python3 - "$work/script.yaml" "$fixed" <<'PY'
import json, sys
path, fixed = sys.argv[1], sys.argv[2] + "\n"
orchestrator = {"role": "orchestrator", "answer": {"workflow": "bug_fix", "rationale": "a crash report",
    "stage_decisions": [{"stage_id": "code_review", "decision": "SKIP", "reason": "a one-line fix"}]}}
script = {"responses": [
    orchestrator,
    orchestrator,
    {"role": "coder", "tool_calls": [{"name": "write_file", "args": {"path": "calc.py", "content": fixed}}]},
    {"role": "*", "answer": {"status": "success", "summary": "done"}, "repeat": True},
]}
open(path, "w").write(json.dumps(script, indent=2))
PY

export IDED_STATE_DIR="$work/state" IDED_EMBEDDING__ENABLED=false IDED_ACP__ATTACH_DAEMON=false \
  IDED_PIPELINE__RESILIENCE__CACHE=false IDED_PIPELINE__RESILIENCE__MAX_RETRIES=0 \
  IDED_PIPELINE__REPLAY_SCRIPT="$work/script.yaml" XDG_CONFIG_HOME="$work/home" HF_HUB_OFFLINE=1 \
  GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME="Ada User" GIT_AUTHOR_EMAIL=ada@example.com \
  GIT_COMMITTER_NAME="Ada User" GIT_COMMITTER_EMAIL=ada@example.com
ask="fix the crash in divide when b is 0"
case "$scene" in
  review) scene_args=(--prompt "/dry-run $ask" --prompt "$ask") ;;
  plan) scene_args=(--prompt "/dry-run $ask") ;;
  rollback) scene_args=(--prompt "$ask" --prompt "/rollback {run}" --answer accept) ;;
esac
mkdir -p "$(dirname "$out")"
abs_out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
timeout 300 xvfb-run -a -s "-screen 0 1400x860x24" \
  "$CARGO_TARGET_DIR/debug/ided-iced" "$repo" --ided "$PWD/.venv/bin/ided" \
  "${scene_args[@]}" --screenshot "$abs_out"
echo "iced-screenshot: wrote $out ($scene)" >&2
