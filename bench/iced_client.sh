#!/usr/bin/env bash
# The Iced client's figures (release build, a private Xvfb server unless DISPLAY is set):
#   - start to first frame (5 runs: in-process from main(), and wall time from exec);
#   - update-to-screen latency: 5,000 synthetic ACP updates at 1,000/s, each from its arrival
#     to the next frame (p50/p95/max), the transcript growing to thousands of entries;
#   - RSS idle, and with a 10,000-line file's diff (~12,000 diff lines) open in the review pane.
# Each figure per renderer: ICED_BACKEND=wgpu (here: Mesa's software Vulkan) and tiny-skia.
#   bench/iced_client.sh [RUNS]      (needs cargo; Xvfb from Debian: apt-get install xvfb)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
CARGO_TARGET_DIR=$(bash scripts/iced-target-dir.sh)
export CARGO_TARGET_DIR
cargo build --manifest-path editors/iced/Cargo.toml --release --locked -j "${IDED_CARGO_JOBS:-2}" --quiet
bin="$CARGO_TARGET_DIR/release/ided-iced"
ws=$(mktemp -d)
xvfb_pid=""
cleanup() {
  if [ -n "$xvfb_pid" ]; then kill "$xvfb_pid" 2>/dev/null || true; fi
  rm -rf "$ws"
}
trap cleanup EXIT
if [ -z "${DISPLAY:-}" ]; then
  command -v Xvfb >/dev/null || { echo "bench: no DISPLAY and no Xvfb (apt-get install xvfb)" >&2; exit 1; }
  display=":$((100 + RANDOM % 800))"
  Xvfb "$display" -screen 0 1400x860x24 -nolisten tcp >/dev/null 2>&1 &
  xvfb_pid=$!
  export DISPLAY="$display"
  for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; [ -e "/tmp/.X11-unix/X${display#:}" ] && break; sleep 0.1; done
fi
export RUST_LOG=error
printf '# %s, %s cores, load %s\n' "$(uname -sr)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
for backend in wgpu tiny-skia; do
  export ICED_BACKEND=$backend
  echo "## renderer: $backend"
  for i in $(seq "$runs"); do
    start=$(date +%s%3N)
    line=$("$bin" "$ws" --bench first-frame 2>/dev/null | tail -1)
    unix=${line##*first_frame_unix_ms=}
    echo "first-frame run $i: ${line%% *} wall_ms=$((unix - start))"
  done
  "$bin" "$ws" --bench stream 2>/dev/null | grep -v '^first_frame' | sed 's/^/stream: /'
  "$bin" "$ws" --bench rss 2>/dev/null | grep -v '^first_frame' | sed 's/^/rss: /'
done
