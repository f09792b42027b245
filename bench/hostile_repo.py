"""A hostile repository, cloned fresh and served untrusted: what it ships must not run, reach or leak.

Builds, in a temporary folder, a git repository as a hostile author would ship it and clones it:

* programs: an executable (exec bit committed) for every built-in language server name in each of
  ``.venv/bin``, ``venv/bin`` and ``node_modules/.bin``, the interpreters ``.venv/bin/python`` and
  ``venv/bin/python``, ``node_modules/typescript/lib/tsserver.js``, a Gradle wrapper, a Cargo build
  script, and, named by its ``.ided.toml``, a server command, a ``NODE_OPTIONS`` script and an
  ``agents.commands`` test command. Each leaves a marker file when run;
* an ``.ided.toml`` that sets every key of the configuration (``daemon.repository_settings``): the
  URLs at a local HTTP server and a TCP listener that count what reaches them, paths outside the
  workspace, the filters loosened, the limits raised; every other key to a valid value not its default;
* planted credentials of every shape issue #35 lists, each holding a marker word: by name (``.env``,
  ``prod.env``, ``.npmrc``, ``id_rsa``, ``*.pem``, ``.aws/credentials``, ``.git-credentials``,
  ``.pgpass``, ``.htpasswd``, ``terraform.tfstate``, a service account), by content (known token
  prefixes, a service account under another name, ``DB_PASSWORD = "short"``, a URL password, a JWT,
  Docker ``auths.*.auth``, a Kubernetes ``token``), symbolic links with innocent names to them, a link
  to ``/proc/self/environ`` (the marker is in ided's environment), hard links to a secret outside the
  workspace and inside it, and a link to a secret outside;
* special files: FIFOs, a Unix socket, links to them (``fifolink.txt -> inner.fifo``, committed), a
  link to a link to a FIFO, links to ``/dev/zero`` and ``/dev/urandom``.

Then, untrusted, with the user's language servers on ``PATH``: ``ided index``, ``ided search``,
``ided status``; ``ided daemon --detach`` (servers prestarted), a second wave of secrets, hard links
and FIFO links planted while it watches, ``ided search``/``status`` through it, ``ided stop``. Every
command runs under a timeout: one that does not answer is counted as hung. Prints:

    programs shipped that ran untrusted (must be 0)
    secrets planted / served (0 served)
    repository keys tried / refused (and taken by decision; a refused key whose value took effect: 0)
    requests and connections that reached the servers the repository named (0)
    special files tried / commands hung (0 hung)

and, as the check that these counts can move, the same programs in a trusted clone (they run) and the
same keys loaded trusted (they take effect). Exits 1 when a must-be-0 figure is not 0.

    uv run --frozen python -P bench/hostile_repo.py [--timeout 120] [--keep] [--no-trusted-check]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.hostile_repo_build import (
    ENVIRON_MARKER,
    LINKED_SECRETS,
    ROOT,
    SPECIAL_AT_START,
    USER_TOOLS,
    build_repository,
    listeners,
    plant_late,
    plant_users_files,
    secret_markers,
    write,
)
from daemon.trust import TrustStore
from tests.adversarial.hostile_settings import check_keys, repository_keys, toml_of

# -- running ided ----------------------------------------------------------------------------------


@dataclass
class Runner:
    repo: Path
    env: dict[str, str]
    timeout: float
    hung: list[str] = field(default_factory=list[str])
    failed: list[str] = field(default_factory=list[str])
    commands: int = 0

    def ided(self, *args: str) -> subprocess.CompletedProcess[str] | None:
        self.commands += 1
        try:
            done = subprocess.run(
                [sys.executable, "-P", "-m", "daemon", *args],
                cwd=self.repo,
                env=self.env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            self.hung.append(" ".join(args))
            return None
        if done.returncode != 0:
            self.failed.append(f"ided {' '.join(args)}: rc {done.returncode}: {done.stderr.strip()[-300:]}")
        return done

    def json(self, *args: str) -> dict[str, Any] | None:
        done = self.ided(*args, "--json")
        if done is None or done.returncode != 0:
            return None
        try:
            return cast("dict[str, Any]", json.loads(done.stdout))
        except json.JSONDecodeError:
            self.failed.append(f"ided {' '.join(args)}: not JSON: {done.stdout[:200]}")
            return None

    def served(self, markers: Mapping[str, str]) -> set[str]:
        """The markers a search for all of them returns in a hit's text."""
        words = sorted(set(markers.values()))
        body = self.json("search", " ".join(words), "-k", "200", "--mode", "lexical")
        if body is None:
            return set()
        texts = [str(h["chunk"]["text"]) for h in body["hits"]]
        return {w for w in words if any(w in t for t in texts)}

    def wait(self, ready: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any] | None:
        """Poll ``ided status --json`` until ``ready(status)``; None when it never is within the timeout."""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            status = self.json("status")
            if status is not None and ready(status):
                return status
            time.sleep(0.5)
        self.hung.append(f"waiting for {what}")
        return None


def _first_pass_done(status: dict[str, Any]) -> bool:
    index = status.get("index", status)
    return index.get("last_update") is not None and status.get("busy") is None and "pid" in status


def _servers_settled(status: dict[str, Any]) -> bool:
    states = [s["state"] for s in status.get("servers", [])]
    return _first_pass_done(status) and not any(s in ("starting", "restarting", "not_started") for s in states)


def base_env(home: Path, state: Path, *, embed: bool) -> dict[str, str]:
    """The user's environment: their own servers on PATH, a fresh home (trust store), ided's state aside."""
    path = os.pathsep.join([*(str(d) for d in USER_TOOLS if d.is_dir()), os.environ.get("PATH", os.defpath)])
    env = {k: v for k, v in os.environ.items() if not k.startswith("IDED_")}
    env.update(
        PATH=path,
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        IDED_STATE_DIR=str(state),
        HF_HUB_OFFLINE="1",
        BENCH_ENVIRON=ENVIRON_MARKER,
    )
    if not embed:
        env["IDED_EMBEDDING__ENABLED"] = "false"
    return env


_KNOWN_KEYS = """
import json, sys
from daemon.config import Config
known = []
for key, value in json.load(sys.stdin).items():
    tree, node = {}, None
    node = tree
    *parents, last = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    try:
        Config.model_validate(tree)
    except Exception:
        continue
    known.append(key)
print(json.dumps(known))
"""


def known_keys(checkout: Path, keys: Mapping[str, Any]) -> dict[str, Any]:
    """The keys ``checkout``'s configuration schema accepts (an older ided knows fewer; an unknown key would make
    the whole file ``config_invalid`` there and hide everything else)."""
    done = subprocess.run(
        [sys.executable, "-P", "-c", _KNOWN_KEYS],
        input=json.dumps(keys),
        env={**os.environ, "PYTHONPATH": str(checkout)},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    known = set(cast("list[str]", json.loads(done.stdout)))
    return {key: value for key, value in keys.items() if key in known}


def _at(body: Mapping[str, Any], *keys: str) -> Any:
    node: Any = body
    for key in keys:
        node = cast("dict[str, Any]", node).get(key) if isinstance(node, dict) else None
    return node


def ran(marker_dir: Path) -> list[str]:
    return sorted(p.name.removeprefix("RAN-") for p in marker_dir.glob("RAN-*"))


def run_daemon(runner: Runner) -> dict[str, Any]:
    """``ided daemon --detach``, its first pass and prestarted servers; the status then."""
    runner.ided("daemon", "--detach")
    return runner.wait(_servers_settled, "the daemon's first pass and its language servers") or {}


def trusted_programs(base: Path, args: argparse.Namespace) -> list[str]:
    """The same programs in a trusted clone (without the .ided.toml): the check that the count can move."""
    marker_dir = base / "markers"
    marker_dir.mkdir()
    clone, _ = build_repository(base, marker_dir, "")
    (clone / ".ided.toml").unlink()
    env = base_env(base / "home", base / "state", embed=args.embed)
    TrustStore.default(env).add(clone)
    runner = Runner(clone, env, args.timeout)
    run_daemon(runner)
    runner.ided("stop")
    return ran(marker_dir)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds each command may take before it counts as hung"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (printed)")
    parser.add_argument("--embed", action="store_true", help="compute dense vectors too (slower)")
    parser.add_argument("--no-trusted-check", dest="trusted_check", action="store_false", help="skip the trusted runs")
    parser.add_argument(
        "--checkout",
        type=Path,
        help="run the ided commands of another checkout (PYTHONPATH), e.g. one from before the fixes; the keys "
        "are still checked with this checkout's loader",
    )
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="ided-hostile-"))
    sockets: list[socket.socket] = []
    failing: list[str] = []
    try:
        with listeners() as listen:
            marker_dir = base / "markers"
            marker_dir.mkdir()
            outside = base / "outside"
            repo_path = base / "clone"
            keys = repository_keys(listen.url, listen.tcp_port, repo_path, outside, marker_dir)
            if args.checkout is not None:
                keys = known_keys(args.checkout.resolve(), keys)
            clone, shipped = build_repository(base, marker_dir, toml_of(keys))
            users, socks = plant_users_files(base, clone)
            sockets += socks
            env = base_env(base / "home", base / "state", embed=args.embed)
            if args.checkout is not None:
                env["PYTHONPATH"] = str(args.checkout.resolve())
            report = check_keys(clone, keys, env, trusted_check=args.trusted_check)

            secrets = {**secret_markers(), **LINKED_SECRETS, **users}
            runner = Runner(clone, env, args.timeout)
            t0 = time.monotonic()
            runner.ided("index")
            served = runner.served(secrets)
            if runner.served({"ordinary.py": "zqordinarybench"}) != {"zqordinarybench"}:
                failing.append("the ordinary file was not served: the search check saw nothing")
            status = runner.json("status") or {}
            skipped: dict[str, int] = _at(status, "last_report", "skipped") or {}
            unused: list[str] = _at(status, "trust", "unused_programs") or []

            daemon_status = run_daemon(runner)
            listed: list[dict[str, Any]] = _at(daemon_status, "servers") or []
            servers = [f"{s['name']}:{s['state']}" for s in listed if s.get("command")]
            late, late_special, socks = plant_late(base, clone)
            sockets += socks
            write(clone, "late/zz_benign.py", "def zqlatebenign():\n    return 2\n")
            deadline = time.monotonic() + args.timeout
            while time.monotonic() < deadline and runner.served({"late/zz_benign.py": "zqlatebenign"}) != {
                "zqlatebenign"
            }:
                time.sleep(0.5)
            if time.monotonic() >= deadline:
                runner.hung.append("the watcher never indexed a file planted after start")
            served |= runner.served({**secrets, **late})
            runner.json("status")
            runner.ided("stop")
            seconds = time.monotonic() - t0
            reached = listen.reached()
            ran_untrusted = ran(marker_dir)

        trusted_ran: list[str] = []
        if args.trusted_check:
            (base / "trusted").mkdir()
            trusted_ran = trusted_programs(base / "trusted", args)

        planted = len(secrets) + len(late)
        special = len(SPECIAL_AT_START) + len(late_special)
        print(f"hostile repository at {base}" if args.keep else "hostile repository (temporary)")
        print(f"ided commands from {args.checkout.resolve() if args.checkout else ROOT}")
        print(f"programs shipped {shipped}, ran untrusted {len(ran_untrusted)} {ran_untrusted or ''}".rstrip())
        print(f"  the workspace's programs ided said it left unused: {len(unused)}")
        print(f"  language servers the daemon ran instead (the user's PATH): {', '.join(servers) or 'none found'}")
        print(
            f"secrets planted {planted} (at start {len(secrets)}, while watched {len(late)}), "
            f"served {len(served)} {sorted(served) or ''}".rstrip()
        )
        print(
            f"repository keys tried {report.tried}, refused {len(report.refused)}, "
            f"taken by decision {len(report.taken)}; "
            f"refused yet in effect {len(report.refused_but_effective)} {report.refused_but_effective or ''}".rstrip()
        )
        print(f"  roots (yours alone) set by the repository: config_invalid {'yes' if report.roots_refused else 'NO'}")
        print(f"  taken: {', '.join(report.taken)}")
        print(f"requests and connections that reached the servers the repository named: {reached}")
        print(
            f"special files tried {special} (at start {len(SPECIAL_AT_START)}, while watched {len(late_special)}), "
            f"commands hung {len(runner.hung)} of {runner.commands} {runner.hung or ''}".rstrip()
        )
        print(f"  skipped by the first pass: {json.dumps(skipped, sort_keys=True)}")
        print(f"seconds {seconds:.1f} (index, search, status, daemon, watcher, stop)")
        if args.trusted_check:
            print(
                f"check that the counts can move: trusted, programs ran {len(trusted_ran)} {trusted_ran}; "
                f"refused keys in effect once trusted {report.taken_when_trusted} of {len(report.refused) - 1}"
            )
        for problem in dict.fromkeys(runner.failed):
            print(f"  note: {problem}")
        failing += [
            what
            for what, bad in (
                ("programs ran untrusted", ran_untrusted),
                ("secrets served", served),
                ("refused keys in effect", report.refused_but_effective),
                ("servers reached", reached),
                ("commands hung", runner.hung),
                ("roots taken", not report.roots_refused),
            )
            if bad
        ]
        if failing:
            print(f"FAILED: {', '.join(failing)}")
        return 1 if failing else 0
    finally:
        for sock in sockets:
            sock.close()
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
