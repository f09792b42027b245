"""What bench/hostile_repo.py plants: a repository as a hostile author ships it, and the servers it names.

Its programs (one per built-in language server name in each workspace tool folder, interpreters, a
TypeScript, build scripts), its ``.ided.toml`` setting every key of the configuration, its secrets of
every shape issue #35 lists and the special files beside them; and the local listeners that count
whatever reaches the URLs it names. Credential-shaped values are assembled from parts so this file
holds none.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import threading
from collections.abc import Generator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

from daemon.intel.lsp.registry import server_executables
from daemon.intel.lsp.server_lookup import WORKSPACE_BINS

ROOT = Path(__file__).resolve().parents[1]
USER_TOOLS = (
    ROOT / ".tools" / "lsp-venv" / "bin",
    ROOT / ".tools" / "node" / "node_modules" / ".bin",
    ROOT / ".tools" / "go" / "bin",
)
"""Where scripts/install-test-tools.sh installs language servers: put on PATH as the user's own, when present."""
ENVIRON_MARKER = "zqsprocenviron"
"""In ided's environment: served only if a link to /proc/self/environ were read."""

_PEM = (
    "-----BEGIN "
    + "PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END "
    + "PRIVATE KEY-----\n"
)
_GHP = "ghp_" + "R4nd0mT0k3nVa1ue" * 3
_GLPAT = "glpat-" + "Xy7Qw2Er5Ty8Ui1Op4As"
_SK = "sk-" + "proj-" + "Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX"
_XOXB = "xox" + "b-2231234567-8842345678901-Zk3Lm8Pq2Rs7Tv"
_AKIA = "AKIA" + "Z7Q3W5E8R1T4Y6U2"
_NPM = "npm_" + "Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6"
_JWT = "eyJhbGciOiJSUzI1NiJ9." + "eyJzdWIiOiJzeXN0ZW06YWRtaW4ifQ." + "c2lnbmF0dXJlLWJ5dGVzLWhlcmU"
_DOCKER_AUTH = "dXNlcjpodW50" + "ZXIyMDI0IQ=="
_SA = {"type": "service_" + "account", "private_key": _PEM}


# -- what reaches the servers the repository names ----------------------------------------------


class _Logger(BaseHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def _record(self) -> None:
        type(self).requests.append(f"{self.command} {self.path}")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _record

    def log_message(self, format: str, *args: Any) -> None:
        return


@dataclass
class Listeners:
    http: ThreadingHTTPServer
    tcp: socket.socket
    connections: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}"

    @property
    def tcp_port(self) -> int:
        return int(self.tcp.getsockname()[1])

    def reached(self) -> int:
        self.tcp.setblocking(False)
        while True:
            try:
                conn, _ = self.tcp.accept()
            except BlockingIOError:
                break
            conn.close()
            self.connections += 1
        return len(_Logger.requests) + self.connections


@contextlib.contextmanager
def listeners() -> Generator[Listeners]:
    http = ThreadingHTTPServer(("127.0.0.1", 0), _Logger)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(64)
    try:
        yield Listeners(http=http, tcp=tcp)
    finally:
        http.shutdown()
        http.server_close()
        tcp.close()


# -- the repository ------------------------------------------------------------------------------


def write(root: Path, rel: str, text: str, *, mode: int | None = None) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mode is not None:
        path.chmod(mode)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, timeout=120)


def programs(marker_dir: Path) -> dict[str, str]:
    """Workspace path -> script for every program the repository ships (each touches RAN-<name>)."""

    def script(name: str) -> str:
        return f"#!/bin/sh\ntouch {marker_dir / ('RAN-' + name.replace('/', '_'))}\nexit 1\n"

    shipped = {
        f"{folder}/{exe}": script(f"{folder}/{exe}") for folder in WORKSPACE_BINS for exe in server_executables()
    }
    for rel in (".venv/bin/python", "venv/bin/python", "gradlew", "tools/their-server"):
        shipped[rel] = script(rel)
    return shipped


def build_repository(base: Path, marker_dir: Path, toml: str) -> tuple[Path, int]:
    """The repository as committed, cloned fresh; and how many programs it ships (markers that may appear)."""
    origin = base / "origin"
    origin.mkdir()
    _git(origin, "init", "-q", "-b", "main")
    _git(origin, "config", "user.email", "them@example.com")
    _git(origin, "config", "user.name", "Them")
    shipped = programs(marker_dir)
    for rel, text in shipped.items():
        write(origin, rel, text, mode=0o755)
    js = f"require('fs').writeFileSync({json.dumps(str(marker_dir / 'RAN-{}'))}, '');\n"
    write(origin, "node_modules/typescript/package.json", json.dumps({"name": "typescript", "version": "5.4.5"}))
    write(origin, "node_modules/typescript/lib/tsserver.js", js.format("tsserver.js"))
    write(origin, "tools/preload.js", js.format("node_options-preload.js"))
    write(origin, "Cargo.toml", '[package]\nname = "theirs"\nversion = "0.1.0"\nedition = "2021"\nbuild = "build.rs"\n')
    build_rs = f'fn main() {{ std::fs::write({json.dumps(str(marker_dir / "RAN-build.rs"))}, "").unwrap(); }}\n'
    write(origin, "build.rs", build_rs)
    write(origin, "src/lib.rs", "pub fn area(w: u32, h: u32) -> u32 {\n    w * h\n}\n")
    write(origin, "settings.gradle", "rootProject.name = 'theirs'\n")
    write(origin, "src/main/java/Main.java", "public class Main {\n    public static void main(String[] a) {}\n}\n")
    write(origin, "calc.py", "def add(a, b):\n    return a + b\n\n\nprint(add(1, 2))\n")
    write(origin, "app.ts", "export function area(w: number, h: number): number {\n  return w * h;\n}\n")
    write(origin, "main.go", "package main\n\nfunc main() {}\n")
    write(origin, "main.c", "int main(void) { return 0; }\n")
    write(origin, "ordinary.py", "def zqordinarybench():\n    return 1\n")
    write(origin, ".ided.toml", toml)
    for rel, text in committed_secrets().items():
        write(origin, rel, text)
    for rel, target in COMMITTED_LINKS.items():
        (origin / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, origin / rel)
    _git(origin, "add", "-A")
    _git(origin, "commit", "-q", "-m", "a repository someone else wrote")
    clone = base / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True, capture_output=True, timeout=120)
    count = len(shipped) + 4  # tsserver.js, the NODE_OPTIONS preload, build.rs, agents.commands' test
    return clone, count


def committed_secrets() -> dict[str, str]:
    """Credentials a repository commits (by name or by content), each with its marker word."""
    return {
        ".env": "SECRET_API_KEY=Zx9Kq2Lm7Np4Rt8Vw3Yb6Cd1\n# zqsdotenv\n",
        ".npmrc": f"//registry.npmjs.org/:_authToken={_NPM}\n# zqsnpmrc\n",
        "id_rsa": _PEM + "zqsidrsa\n",
        "certs/server.pem": _PEM + "zqspem\n",
        ".git-credentials": "https://them:" + "Gh7Tk2Qp9Lx4@github.com\n# zqsgitcred\n",
        ".pgpass": "db.internal:5432:app:admin:" + "Pg7Pa55Qx2\n# zqspgpass\n",
        ".htpasswd": "admin:$apr1$" + "r31.....$HqJZimcKQFAMYayBlzkrA/\n# zqshtpasswd\n",
        "infra/terraform.tfstate": json.dumps({"resources": [{"password": "Tf7Pa55Qx2"}], "zq": "zqstfstate"}),
        "service-account.json": json.dumps({**_SA, "project_id": "zqssaname"}),
        "keys/gcp.json": json.dumps({**_SA, "project_id": "zqssacontent"}),
        "deploy/settings.py": f'AWS_ACCESS_KEY_ID = "{_AKIA}"  # zqsakia\n',
        "notes/deploy.md": f"# Deploy\n\nzqsghp: push with `{_GHP}`.\n",
        "ci/gitlab.yml": f"# zqsglpat\nvariables:\n  PUSH: {_GLPAT}\n",
        "web/client.ts": f'// zqsopenai\nexport const OPENAI = "{_SK}";\n',
        "chat/slack.py": f'SLACK = "{_XOXB}"  # zqsslack\n',
        ".docker/config.json": json.dumps(
            {"auths": {"registry.example.com": {"auth": _DOCKER_AUTH}}, "zq": "zqsdocker"}
        ),
        ".kube/config": f"apiVersion: v1\nkind: Config\n# zqskube\nusers:\n- name: admin\n  user:\n    token: {_JWT}\n",
        "config/database.yml": "# zqsurlpassword\nproduction:\n  url: postgres://admin:" + "pw@db.internal/app\n",
        "app/settings.py": 'DEBUG = False\nDB_PASSWORD = "sh' + 'ort"  # zqsshortpassword\n',
        "web/session.ts": f'// zqsjwt\nexport const SESSION = "{_JWT}";\n',
    }


COMMITTED_LINKS: dict[str, str] = {
    # links with innocent names to secrets, to ided's own environment, out of the workspace
    "py/envlink.py": "../.env",
    "docs/aws.md": "../.aws/credentials",
    "docs/kube.txt": "../.kube/config",
    "environ.txt": "/proc/self/environ",
    "py/outside.py": "../../outside/secrets/outside.env",
    # special files behind ordinary names
    "fifolink.txt": "inner.fifo",
    "chain.txt": "fifolink.txt",
    "socklink.py": "src/listen.py",
    "zero.txt": "/dev/zero",
    "urandom.py": "/dev/urandom",
}
LINKED_SECRETS = {
    "py/envlink.py": "zqsdotenv",
    "docs/aws.md": "zqsawscred",
    "docs/kube.txt": "zqskube",
    "environ.txt": ENVIRON_MARKER,
    "py/outside.py": "zqsoutside",
}
SPECIAL_AT_START = (
    "inner.fifo",
    "fifolink.txt",
    "chain.txt",
    "src/pipe.py",
    "src/listen.py",
    "socklink.py",
    "zero.txt",
    "urandom.py",
)


def plant_users_files(base: Path, clone: Path) -> tuple[dict[str, str], list[socket.socket]]:
    """What is in the user's checkout but not committed: their own secrets, hard links, FIFOs, a socket."""
    outside = base / "outside" / "secrets"
    outside.mkdir(parents=True)
    (outside / "outside.env").write_text("DB_PASSWORD=Hq7Lm2Xp9Rt4Vw8Zb3Nc # zqsoutside\n")
    (outside / "hard.env").write_text("DB_PASSWORD=Hq7Lm2Xp9Rt4Vw8Zb3Nd # zqshardout\n")
    write(clone, "prod.env", "DB_PASSWORD=Pr0dPa55w0rdQx9 # zqsprodenv\n")
    write(clone, ".aws/credentials", "[default]\naws_secret_access_key = x # zqsawscred\n")
    os.link(outside / "hard.env", clone / "hardout.txt")
    os.link(clone / "prod.env", clone / "notes.txt")  # a hard link inside, under an innocent name
    os.mkfifo(clone / "inner.fifo")
    (clone / "src").mkdir(exist_ok=True)
    os.mkfifo(clone / "src" / "pipe.py")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(clone / "src" / "listen.py"))
    planted = {
        "prod.env": "zqsprodenv",
        ".aws/credentials": "zqsawscred",
        "hardout.txt": "zqshardout",
        "notes.txt": "zqsprodenv",
    }
    return planted, [sock]


def plant_late(base: Path, clone: Path) -> tuple[dict[str, str], tuple[str, ...], list[socket.socket]]:
    """What arrives while a daemon watches: secrets, links, a hard link out, a FIFO link, a socket."""
    outside = base / "outside" / "secrets"
    (outside / "late.env").write_text("API_TOKEN=L4t3T0k3nV4lu3Qz81 # zqslatehard\n")
    late = clone / "late"
    late.mkdir()
    os.mkfifo(clone / "late.fifo")
    (late / "fifolink.py").symlink_to("../late.fifo")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(late / "sock.py"))
    os.link(outside / "late.env", late / "hardout.py")
    (late / "envlink.py").symlink_to("../.env")
    (late / "environ.md").symlink_to("/proc/self/environ")
    write(clone, "late/.env", "API_TOKEN=L4t3T0k3nV4lu3Qz82\n# zqslateenv\n")
    write(
        clone,
        "late/config.json",
        json.dumps({"auths": {"r.example.com": {"auth": _DOCKER_AUTH}}, "zq": "zqslatedocker"}),
    )
    write(clone, "late/db.py", 'DB_PASSWORD = "sh' + 'ort2"  # zqslateshort\n')
    secrets = {
        "late/hardout.py": "zqslatehard",
        "late/envlink.py": "zqsdotenv",
        "late/environ.md": ENVIRON_MARKER,
        "late/.env": "zqslateenv",
        "late/config.json": "zqslatedocker",
        "late/db.py": "zqslateshort",
    }
    return secrets, ("late.fifo", "late/fifolink.py", "late/sock.py"), [sock]


def secret_markers() -> dict[str, str]:
    """Workspace path -> marker for the committed secrets."""
    found: dict[str, str] = {}
    for rel, text in committed_secrets().items():
        marker = next(word for word in text.replace('"', " ").replace("\n", " ").split() if word.startswith("zqs"))
        found[rel] = marker.strip(":,}")
    return found
