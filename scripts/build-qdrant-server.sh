#!/usr/bin/env bash
# Build the Qdrant server once from its own repository and cache the binary outside the clone.
#
#   scripts/build-qdrant-server.sh            build (or reuse) the pinned release, print the binary's path
#   scripts/build-qdrant-server.sh --path     print where the binary lives (built or not) and exit
#
# The binary lands in ${IDED_QDRANT_CACHE:-~/.cache/ided/qdrant-server}/<version>/qdrant; the tests
# (tests/integration/qdrant_server.py) and bench/store.py look for it there (IDED_QDRANT_BIN overrides).
# A binary already there is reused: delete it to rebuild.
#
# What it needs: a Rust toolchain (cargo; the release below wants rustc >= 1.94), a C/C++ compiler,
# cmake, `protoc` and libclang (Debian: apt-get install protobuf-compiler libclang-dev), and network
# access to crates.io and to the release's git dependencies on GitHub. The build runs `cargo build
# --profile $QDRANT_PROFILE --bin qdrant` under `nice`, with CARGO_BUILD_JOBS (default 2) jobs
# (docs/scale-out.md has the measured time).
#
# Environment:
#   QDRANT_VERSION     the release tag to build (default below)
#   QDRANT_PROFILE     cargo profile (default perf): Qdrant's own `perf` profile is opt-level 3 without
#                      link-time optimization; `release` adds fat LTO with one codegen unit, what
#                      Qdrant ships, a few percent faster and far slower to build on a small machine
#   QDRANT_GIT         where to clone it from (default https://github.com/qdrant/qdrant.git; a local
#                      mirror's path works)
#   QDRANT_MURMUR3_GIT the git URL of the murmur3 revision the release pins (default: the one its
#                      Cargo.toml names; any mirror holding that revision works)
#   QDRANT_MURMUR3_SHIM=1  use a local crate for murmur3 instead of Qdrant's GitHub fork (for a
#                      machine without GitHub): the server calls one function of it,
#                      murmur3_32_of_slice (MurmurHash3 x86_32, for its server-side BM25 inference,
#                      which ided does not use); the shim implements exactly that function
#   QDRANT_NO_FORKS=1  build against crates.io's tonic 0.11 and hyper 0.14 instead of Qdrant's
#                      GitHub forks (for a machine that reaches crates.io but not GitHub). The forks
#                      add one knob for the server's internal cluster channels
#                      (http2_max_local_error_reset_streams); without them that knob keeps h2's
#                      default. A single-node server, which is what ided starts, never opens those.
# Exit 3: a build tool is missing (the message names it); any other failure prints cargo's error.
set -euo pipefail

version=${QDRANT_VERSION:-v1.17.1}
cache=${IDED_QDRANT_CACHE:-$HOME/.cache/ided/qdrant-server}
bin="$cache/$version/qdrant"
src_root=${IDED_QDRANT_SRC:-$HOME/.cache/ided/qdrant-src}
src="$src_root/$version"

say() { echo "build-qdrant-server: $*" >&2; }

if [ "${1:-}" = "--path" ]; then
  echo "$bin"
  exit 0
fi
if [ -x "$bin" ]; then
  say "reusing $bin (delete it to rebuild)"
  echo "$bin"
  exit 0
fi

for tool in cargo git protoc cmake cc c++; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    case $tool in
      protoc) say "protoc is missing: apt-get install protobuf-compiler" ;;
      cargo) say "cargo is missing: install a Rust toolchain (rustup.rs)" ;;
      *) say "$tool is missing: apt-get install build-essential cmake git" ;;
    esac
    exit 3
  fi
done
if ! ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1 && [ -z "${LIBCLANG_PATH:-}" ]; then
  say "libclang is missing (bindgen needs it for RocksDB): apt-get install libclang-dev, or set LIBCLANG_PATH"
  exit 3
fi

if [ ! -f "$src/Cargo.toml" ]; then
  say "checking out $version from ${QDRANT_GIT:-https://github.com/qdrant/qdrant.git} into $src"
  rm -rf "$src.tmp"
  mkdir -p "$src.tmp"
  giturl=${QDRANT_GIT:-https://github.com/qdrant/qdrant.git}
  if git --git-dir="$giturl" rev-parse --verify -q "$version^{commit}" >/dev/null 2>&1; then
    git --git-dir="$giturl" archive "$version" | tar -x -C "$src.tmp"
  else
    git clone -q --depth 1 --branch "$version" "$giturl" "$src.tmp/clone"
    (cd "$src.tmp/clone" && git archive HEAD) | tar -x -C "$src.tmp"
    rm -rf "$src.tmp/clone"
  fi
  mv "$src.tmp" "$src"
fi

cd "$src"
if [ -n "${QDRANT_MURMUR3_GIT:-}" ]; then
  sed -i "s#git = \"https://github.com/qdrant/murmur3\"#git = \"$QDRANT_MURMUR3_GIT\"#" Cargo.toml
fi
if [ "${QDRANT_MURMUR3_SHIM:-0}" = 1 ]; then
  shim="$src_root/murmur3-shim"
  mkdir -p "$shim/src"
  cat >"$shim/Cargo.toml" <<'TOML'
[package]
name = "murmur3"
version = "0.5.2"
edition = "2021"

[workspace]
TOML
  cat >"$shim/src/lib.rs" <<'RUST'
//! MurmurHash3 x86_32 over a byte slice: the one function the Qdrant server takes from its murmur3 fork.
pub fn murmur3_32_of_slice(data: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mix = |k: u32| k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    let mut h = seed;
    let blocks = data.chunks_exact(4);
    let tail = blocks.remainder();
    for b in blocks {
        h ^= mix(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    if !tail.is_empty() {
        let mut k = 0u32;
        for (i, byte) in tail.iter().enumerate() {
            k ^= u32::from(*byte) << (8 * i);
        }
        h ^= mix(k);
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_values() {
        assert_eq!(super::murmur3_32_of_slice(b"", 0), 0);
        assert_eq!(super::murmur3_32_of_slice(b"hello", 0), 613_153_351);
        assert_eq!(super::murmur3_32_of_slice(b"The quick brown fox jumps over the lazy dog", 0), 0x2e4f_f723);
    }
}
RUST
  (cd "$shim" && cargo test -q --offline >&2) || { say "the murmur3 shim failed its known values"; exit 1; }
  sed -i "s#^murmur3 = { git = \"https://github.com/qdrant/murmur3\".*#murmur3 = { path = \"$shim\" }#" Cargo.toml
fi
if [ "${QDRANT_NO_FORKS:-0}" = 1 ]; then
  # Drop the [patch.crates-io] lines that point at the forks, and the one call only the fork has.
  sed -i '/^tonic = { git = "https:\/\/github.com\/qdrant\/tonic"/d; /^hyper = { git = "https:\/\/github.com\/qdrant\/hyper"/d' Cargo.toml
  perl -0pi -e 's/\s*\.http2_max_local_error_reset_streams\(None\)//' lib/api/src/grpc/dynamic_channel_pool.rs
fi

jobs=${CARGO_BUILD_JOBS:-2}
profile=${QDRANT_PROFILE:-perf}
say "cargo build --profile $profile --bin qdrant in $src with $jobs jobs (nice 10); this takes a while"
start=$(date +%s)
CARGO_BUILD_JOBS=$jobs CARGO_NET_GIT_FETCH_WITH_CLI=true nice -n 10 cargo build --profile "$profile" --bin qdrant
end=$(date +%s)
mkdir -p "$(dirname "$bin")"
cp "target/$profile/qdrant" "$bin.tmp"
mv "$bin.tmp" "$bin"
elapsed=$((end - start))
say "built $version ($profile profile) in ${elapsed}s ($((elapsed / 60)) min $((elapsed % 60)) s) with $jobs jobs"
echo "$bin"
