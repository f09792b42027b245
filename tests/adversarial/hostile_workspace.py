"""A hostile workspace: symlinks out of it, secrets under many names and in many contents, one decoy.

Every planted thing carries a marker word that BM25 finds (``zqout...`` outside the workspace,
``zqsecret...`` in a secret), so a leak is a search hit, an AST or symbol answer, or a read that
contains one. ``Tally`` counts what was tried and what got through, for the report line each test
prints. Credentials are assembled from parts so this file itself holds none.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["AWS_KEY_ID", "USES_SETTINGS", "HostileWorkspace", "Tally", "build_hostile_workspace", "plant_late_attacks"]

# Credential-shaped values, built from parts (see the module docstring).
_GHP = "ghp_" + "R4nd0mT0k3nVa1ue" * 3
_SK = "sk-" + "proj-" + "Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX"
_XOXB = "xox" + "b-2231234567-8842345678901-Zk3Lm8Pq2Rs7Tv"
_AKIA = "AKIA" + "Z7Q3W5E8R1T4Y6U2"
AWS_KEY_ID = _AKIA
USES_SETTINGS = "from deploy.settings import AWS_ACCESS_KEY_ID\n\n\ndef client():\n    return AWS_ACCESS_KEY_ID\n"
"""``py/uses_settings.py``: line 5, column 12 is a use of the secret file's constant."""
_PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"
_PEM = "-----BEGIN " + "PRIVATE KEY-----\n" + _PEM_BODY + "\n-----END " + "PRIVATE KEY-----\n"
_API_VALUE = "Zx9Kq2Lm7Np4Rt8Vw3Yb6Cd1"
_JWT = "eyJhbGciOiJSUzI1NiJ9." + "eyJzdWIiOiJzeXN0ZW06YWRtaW4ifQ." + "c2lnbmF0dXJlLWJ5dGVzLWhlcmU"


@dataclass
class Tally:
    """Escapes tried / refused and secrets planted / leaked, for one front."""

    front: str
    escapes_tried: int = 0
    escapes_refused: int = 0
    secrets_planted: int = 0
    secrets_leaked: int = 0
    leaks: list[str] = field(default_factory=list[str])

    def escape(self, refused: bool, what: str) -> None:
        self.escapes_tried += 1
        self.escapes_refused += refused
        if not refused:
            self.leaks.append(f"escape: {what}")

    def secret(self, leaked: bool, what: str) -> None:
        self.secrets_planted += 1
        self.secrets_leaked += leaked
        if leaked:
            self.leaks.append(f"secret: {what}")

    def line(self) -> str:
        return (
            f"[adversarial] {self.front}: escapes tried {self.escapes_tried}, refused {self.escapes_refused}; "
            f"secrets planted {self.secrets_planted}, leaked {self.secrets_leaked}"
        )


@dataclass(frozen=True)
class HostileWorkspace:
    root: Path
    outside: Path
    escapes: dict[str, str]
    """Workspace path of a symlink leading out -> the marker word its target holds."""
    secrets: dict[str, str]
    """Workspace path of a secret (or a link to one) -> the marker word it holds."""
    decoy: str = "vaults/credentials.py"
    decoy_marker: str = "zqvaultrotation"
    """Ordinary code under a credential-ish name: must be indexed and served."""

    @property
    def markers(self) -> list[str]:
        return sorted({*self.escapes.values(), *self.secrets.values()})


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _link(root: Path, rel: str, target: str | Path) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def build_hostile_workspace(base: Path) -> HostileWorkspace:
    root = base / "ws"
    outside = base / "outside"
    _write(outside, "passwd.txt", "zqoutpasswd root:x:0:0:root:/root:/bin/bash\n")
    _write(outside, "shadow.md", "# zqoutshadow\n\nroot:$6$salt$hash:19000:0:99999:7:::\n")
    _write(outside, "lib/stolen.py", "def zqoutdir():\n    return 'outside'\n")
    _write(root, "py/app.py", "def ordinary_function():\n    return 1\n")
    # ordinary code that uses a value from a secret file: language-server answers must not quote it
    _write(root, "py/uses_settings.py", USES_SETTINGS)
    _write(
        root,
        "vaults/credentials.py",
        "class Vault:\n"
        "    def zqvaultrotation(self, store):\n"
        "        token = self.fetch_token()\n"
        "        password = store.password_for(token)\n"
        "        return self.rotate(password)\n",
    )
    escapes = {
        "py/leak.py": "zqoutpasswd",  # absolute link to a file outside
        "py/shadow.md": "zqoutshadow",
        "py/dotdot.py": "zqoutpasswd",  # relative link climbing out
        "py/outdir": "zqoutdir",  # a folder outside
    }
    _link(root, "py/leak.py", outside / "passwd.txt")
    _link(root, "py/shadow.md", outside / "shadow.md")
    _link(root, "py/dotdot.py", "../../outside/passwd.txt")
    _link(root, "py/outdir", outside / "lib")
    secrets = {
        ".env": "zqsecretenv",
        "py/envlink.py": "zqsecretenv",  # a link with an innocent name to .env
        "config/prod.env": "zqsecretprodenv",
        "service-account.json": "zqsecretsa",
        "keys/gcp.json": "zqsecretgcp",  # a service account under another name: by content
        "deploy/settings.py": "zqsecretaws",
        "notes/deploy.md": "zqsecretghp",
        "web/client.ts": "zqsecretsk",
        "py/signing.py": "zqsecretpem",
        "chat/slack.py": "zqsecretslack",
        "docs/readme.md": "zqsecretprodenv",  # a link to config/prod.env
        "id_rsa": "zqsecretidrsa",
        # the shapes issue #35 found served: Docker and Kubernetes credentials, a URL password, a short password
        ".docker/config.json": "zqsecretdocker",
        ".kube/config": "zqsecretkube",
        "config/database.yml": "zqsecreturl",
        "app/settings.py": "zqsecretshort",
        # the rest of the shapes issue #35 lists
        ".npmrc": "zqsecretnpmrc",
        ".aws/credentials": "zqsecretawscred",
        ".git-credentials": "zqsecretgitcred",
        ".pgpass": "zqsecretpgpass",
        ".htpasswd": "zqsecrethtpasswd",
        "infra/terraform.tfstate": "zqsecrettfstate",
        "certs/server.pem": "zqsecretpemfile",
        "ci/gitlab.yml": "zqsecretglpat",
        "web/session.ts": "zqsecretjwt",
    }
    _write(root, ".env", f"SECRET_API_KEY={_API_VALUE}\n# zqsecretenv\n")
    _link(root, "py/envlink.py", "../.env")
    _write(root, "config/prod.env", "DB_PASSWORD=Pr0dDbPa55w0rdQ9x7\n# zqsecretprodenv\n")
    account = {"type": "service_" + "account", "project_id": "zqsecretsa", "private_key": _PEM}
    _write(root, "service-account.json", json.dumps(account))
    _write(root, "keys/gcp.json", json.dumps({**account, "project_id": "zqsecretgcp"}))
    _write(root, "deploy/settings.py", f'AWS_ACCESS_KEY_ID = "{_AKIA}"  # zqsecretaws\n')
    _write(root, "notes/deploy.md", f"# Deploy\n\nzqsecretghp: push with `{_GHP}`.\n")
    _write(root, "web/client.ts", f'// zqsecretsk\nexport const OPENAI = "{_SK}";\n')
    _write(root, "py/signing.py", f'# zqsecretpem\nKEY = """{_PEM}"""\n')
    _write(root, "chat/slack.py", f'SLACK = "{_XOXB}"  # zqsecretslack\n')
    _link(root, "docs/readme.md", "../config/prod.env")
    _write(root, "id_rsa", _PEM + "zqsecretidrsa\n")
    auth = "dXNlcjpodW50" + "ZXIyMDI0IQ=="  # base64 of user:password
    _write(
        root,
        ".docker/config.json",
        json.dumps({"auths": {"registry.example.com": {"auth": auth}}, "zq": "zqsecretdocker"}),
    )
    _write(
        root,
        ".kube/config",
        "apiVersion: v1\nkind: Config\n# zqsecretkube\nusers:\n- name: admin\n  user:\n    token: " + _JWT + "\n",
    )
    _write(root, "config/database.yml", "# zqsecreturl\nproduction:\n  url: postgres://admin:" + "pw@db.internal/app\n")
    _write(root, "app/settings.py", 'DEBUG = False\nDB_PASSWORD = "sh' + 'ort"  # zqsecretshort\n')
    _write(
        root,
        ".npmrc",
        "//registry.npmjs.org/:_authToken=npm_" + "Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6\n# zqsecretnpmrc\n",
    )
    _write(root, ".aws/credentials", "[default]\naws_secret_access_key = x  # zqsecretawscred\n")
    _write(root, ".git-credentials", "https://them:" + "Gh7Tk2Qp9Lx4@github.com\n# zqsecretgitcred\n")
    _write(root, ".pgpass", "db.internal:5432:app:admin:" + "Pg7Pa55Qx2\n# zqsecretpgpass\n")
    _write(root, ".htpasswd", "admin:$apr1$" + "r31.....$HqJZimcKQFAMYayBlzkrA/\n# zqsecrethtpasswd\n")
    _write(
        root,
        "infra/terraform.tfstate",
        json.dumps({"resources": [{"password": "Tf7Pa55Qx2"}], "zq": "zqsecrettfstate"}),
    )
    _write(root, "certs/server.pem", _PEM + "zqsecretpemfile\n")
    _write(root, "ci/gitlab.yml", "# zqsecretglpat\nvariables:\n  PUSH: glpat-" + "Xy7Qw2Er5Ty8Ui1Op4As\n")
    _write(root, "web/session.ts", '// zqsecretjwt\nexport const SESSION = "' + _JWT + '";\n')
    return HostileWorkspace(root=root, outside=outside, escapes=escapes, secrets=secrets)


def plant_late_attacks(ws: HostileWorkspace) -> tuple[dict[str, str], dict[str, str], str]:
    """What arrives while a daemon watches: (escapes, secrets, the workspace path of a benign file)."""
    escapes = {"late/leak.py": "zqoutpasswd", "late/shadow.md": "zqoutshadow", "late/outdir": "zqoutdir"}
    secrets = {
        "late/envlink.py": "zqsecretenv",
        "late/prod.env": "zqsecretlateenv",
        "late/settings.py": "zqsecretlateghp",
        "late/service-account.json": "zqsecretlatesa",
    }
    _write(ws.root, "late/ok.py", "def zqlatebenign():\n    return 2\n")
    _link(ws.root, "late/leak.py", ws.outside / "passwd.txt")
    _link(ws.root, "late/shadow.md", ws.outside / "shadow.md")
    _link(ws.root, "late/outdir", ws.outside / "lib")
    _link(ws.root, "late/envlink.py", "../.env")
    _write(ws.root, "late/prod.env", "API_TOKEN=L4t3T0k3nV4lu3Qz81\n# zqsecretlateenv\n")
    _write(ws.root, "late/settings.py", f'GITHUB = "{_GHP}"  # zqsecretlateghp\n')
    account = {"type": "service_" + "account", "project_id": "zqsecretlatesa", "private_key": _PEM}
    _write(ws.root, "late/service-account.json", json.dumps(account))
    return escapes, secrets, "late/ok.py"
