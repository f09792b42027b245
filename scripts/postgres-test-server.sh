#!/usr/bin/env bash
# A throw-away PostgreSQL cluster on 127.0.0.1 for the tests (and for trying runs.database_url).
#
#   scripts/postgres-test-server.sh start [DIR]   initdb in DIR (default: a new temp folder), start the
#                                                 server on a free loopback port, create database
#                                                 ided_test, print its URL on stdout
#   scripts/postgres-test-server.sh stop DIR      stop that server and remove DIR
#
# The binaries come from Debian's `postgresql` package (/usr/lib/postgresql/<version>/bin; PG_BIN
# overrides, else initdb on PATH). Postgres refuses to run as root: as root the cluster belongs to
# the `postgres` system user the package creates (commands run through runuser), and DIR must be
# reachable by that user (a fresh folder under /tmp is). The cluster trusts loopback connections and
# runs with fsync off: it is for tests, never for data you keep (docs/scale-out.md sets up a real one).
# Exit 3: no PostgreSQL binaries here (the caller may skip); any other failure prints the server log.
set -euo pipefail

say() { echo "postgres-test-server: $*" >&2; }

pg_bin() {
  if [ -n "${PG_BIN:-}" ]; then
    [ -x "$PG_BIN/initdb" ] || return 1
    echo "$PG_BIN"
    return
  fi
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then echo "$dir"; return; fi
  if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return; fi
  return 1
}

# Run a PostgreSQL command as the cluster's owner (the postgres user when we are root).
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
  local bin dir port url
  if ! bin=$(pg_bin); then
    say "no PostgreSQL binaries (initdb) in ${PG_BIN:-/usr/lib/postgresql/*/bin or on PATH}: apt-get install postgresql"
    exit 3
  fi
  dir=${1:-$(mktemp -d "${TMPDIR:-/tmp}/ided-pg-XXXXXX")}
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then
    if ! id postgres >/dev/null 2>&1; then
      say "running as root and there is no 'postgres' user to own the cluster (Debian's package creates it)"
      exit 3
    fi
    chown postgres: "$dir"
  fi
  chmod 700 "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_owner "$bin/initdb" -D "$dir/data" -U ided --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
      cat "$dir/initdb.log" >&2
      exit 1
    }
  fi
  for _ in 1 2 3 4 5; do
    port=$(free_port)
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=200" start >/dev/null 2>&1; then
      url="postgresql://ided@127.0.0.1:$port/ided_test"
      as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U ided ided_test
      echo "$url" >"$dir/url"
      echo "$url"
      [ -n "${1:-}" ] || say "stop it with: $0 stop $dir"
      return
    fi
    # another process took the port between the probe and the start: try another
    grep -q "could not bind\|Address already in use" "$dir/server.log" 2>/dev/null || break
  done
  say "the server did not start; its log:"
  cat "$dir/server.log" >&2 || true
  exit 1
}

stop() {
  local bin dir=${1:?usage: $0 stop DIR}
  if [ -f "$dir/data/postmaster.pid" ] && bin=$(pg_bin); then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start) shift; start "$@" ;;
  stop) shift; stop "$@" ;;
  *)
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
