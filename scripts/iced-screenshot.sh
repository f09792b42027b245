#!/usr/bin/env bash
# Screenshots of the Iced client under Xvfb on a fixture git repository, driven by ided's replay
# model (no LLM) through the real `ided acp`; the client writes its own window to PNG
# (--screenshot) and exits. One scene per call, or all of them:
#
#   prompt      calc.py open at `divide`, the request typed in the prompt box (not sent yet)
#   plan        a /dry-run prompt: the plan graph in the transcript
#   running     an editing run at work: a stage in progress, its tool calls streaming
#   review      (default) a /dry-run prompt, then an editing run whose batched diff waits for
#               review; written to docs/images/iced-client.png unless OUT is given
#   accepted    the editing run accepted: the review says so, the card offers Roll back
#   search      the Search tab's hits for `add` (the workspace daemon's index)
#   definition  F12 on `add` in tests/test_calc.py: calc.py open at its definition (a language
#               server through the daemon)
#   rollback    an editing run accepted, then `/rollback RUN`: the card says the run rolled back
#   all         every scene but rollback, each to docs/images/iced-SCENE.png (review: iced-client.png)
#
#   scripts/iced-screenshot.sh [--scene NAME] [OUT.png]
#
# Other scenes than review write to $TMPDIR/iced-SCENE.png unless OUT is given. search and
# definition attach `ided acp` to the workspace daemon (stopped afterwards) with the language
# servers scripts/install-test-tools.sh put under .tools (else those on PATH).
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
scenes="prompt plan running review accepted search definition"
if [ "$scene" = all ]; then
  for one in $scenes; do
    name="iced-$one.png"
    [ "$one" = review ] && name=iced-client.png
    bash "$0" --scene "$one" "docs/images/$name"
  done
  exit 0
fi
case "$scene" in
  review) default_out=docs/images/iced-client.png ;;
  prompt | plan | running | accepted | search | definition | rollback) default_out="${TMPDIR:-/tmp}/iced-$scene.png" ;;
  *) echo "iced-screenshot: unknown scene '$scene' ($scenes rollback all)" >&2; exit 2 ;;
esac
out="${1:-$default_out}"
CARGO_TARGET_DIR=$(bash scripts/iced-target-dir.sh)
export CARGO_TARGET_DIR
command -v xvfb-run >/dev/null || {
  echo "iced-screenshot: xvfb-run not found: the client needs an X server to draw in (Debian: apt-get install xvfb)" >&2
  exit 1
}
[ -x .venv/bin/ided ] || { echo "iced-screenshot: .venv/bin/ided missing (./dev setup)" >&2; exit 1; }
cargo build --manifest-path editors/iced/Cargo.toml --locked -j "${IDED_CARGO_JOBS:-2}" --quiet

work=$(mktemp -d)
daemon=false
case "$scene" in search | definition) daemon=true ;; esac
cleanup() {
  # search and definition started the workspace daemon: stop it (it flushes its index first)
  if [ "$daemon" = true ] && [ -d "${repo:-}" ]; then .venv/bin/ided stop -w "$repo" >/dev/null 2>&1 || true; fi
  # the daemon may still be closing its store as it exits: a few tries
  for _ in 1 2 3 4 5 6 7 8 9 10; do rm -rf "$work" 2>/dev/null && return 0; sleep 0.5; done
  echo "iced-screenshot: could not remove $work" >&2
}
trap cleanup EXIT
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
python3 - "$work/script.yaml" "$fixed" "$scene" <<'PY'
import json, sys
path, fixed, scene = sys.argv[1], sys.argv[2] + "\n", sys.argv[3]
orchestrator = {"role": "orchestrator", "answer": {"workflow": "bug_fix", "rationale": "a crash report",
    "stage_decisions": [{"stage_id": "code_review", "decision": "SKIP", "reason": "a one-line fix"}]}}
responses = [
    orchestrator,
    orchestrator,
    {"role": "coder", "tool_calls": [{"name": "write_file", "args": {"path": "calc.py", "content": fixed}}]},
]
if scene == "running":  # the coder's next turn takes a while: the screenshot catches the run at work
    responses.append({"role": "coder", "answer": {"status": "success", "summary": "guarded divide"},
                      "delay_seconds": 20})
responses.append({"role": "*", "answer": {"status": "success", "summary": "done"}, "repeat": True})
open(path, "w").write(json.dumps({"responses": responses}, indent=2))
PY

export IDED_STATE_DIR="$work/state" IDED_EMBEDDING__ENABLED=false IDED_ACP__ATTACH_DAEMON=false \
  IDED_PIPELINE__RESILIENCE__CACHE=false IDED_PIPELINE__RESILIENCE__MAX_RETRIES=0 \
  IDED_PIPELINE__REPLAY_SCRIPT="$work/script.yaml" XDG_CONFIG_HOME="$work/home" HF_HUB_OFFLINE=1 \
  GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME="Ada User" GIT_AUTHOR_EMAIL=ada@example.com \
  GIT_COMMITTER_NAME="Ada User" GIT_COMMITTER_EMAIL=ada@example.com
if [ "$daemon" = true ]; then
  servers=$(python3 -c 'import json, os, sys; print(json.dumps([p for p in sys.argv[1:] if os.path.isdir(p)]))' \
    "$PWD/.tools/lsp-venv/bin" "$PWD/.tools/node/node_modules/.bin")
  export IDED_ACP__ATTACH_DAEMON=true IDED_INTEL__SEARCH_PATH="$servers"
fi
ask="fix the crash in divide when b is 0"
case "$scene" in
  prompt) scene_args=(--open calc.py:8 --draft "$ask") ;;
  plan) scene_args=(--prompt "/dry-run $ask") ;;
  running) scene_args=(--prompt "$ask" --screenshot-while-running) ;;
  review) scene_args=(--prompt "/dry-run $ask" --prompt "$ask") ;;
  accepted) scene_args=(--prompt "$ask" --answer accept) ;;
  search) scene_args=(--search add) ;;
  definition) scene_args=(--references tests/test_calc.py:5:12 --definition tests/test_calc.py:5:12) ;;
  rollback) scene_args=(--prompt "$ask" --prompt "/rollback {run}" --answer accept) ;;
esac
# The software renderer: the same pixels on every machine.
export ICED_BACKEND="${ICED_BACKEND:-tiny-skia}"
mkdir -p "$(dirname "$out")"
abs_out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
timeout 300 xvfb-run -a -s "-screen 0 1400x860x24" \
  "$CARGO_TARGET_DIR/debug/ided-iced" "$repo" --ided "$PWD/.venv/bin/ided" \
  "${scene_args[@]}" --screenshot "$abs_out"
echo "iced-screenshot: wrote $out ($scene)" >&2
