"""Which files hold secrets: by name and by content. Pure functions over a name or bytes; no I/O.

The one rule set behind every check (the scanner, the watcher's single-path check, the per-file
content check of an index pass, and the fronts that read files for a tool). Callers apply it to
the *resolved* target of a path, and to the name of the link that led there: a link
``py/envlink.py -> ../.env`` is a secret because its target is.

By name (case-insensitive): dotenv files (``.env``, ``.env.production``, ``prod.env``; not the
``.example``/``.sample``/``.template``/``.dist`` copies), key and certificate stores (``*.pem``,
``*.key``, ``*.p12``, ``id_rsa*``...), credential data files (``credentials``,
``credentials.json|yaml|ini|...``, ``service-account*.json``; a *source* file such as
``credentials.py`` is not one), ``.netrc``/``.pgpass``/``.npmrc``/``.pypirc``/``.git-credentials``
and Terraform state.

By content: private-key blocks with key material after the header, cloud credentials (AWS
access-key ids and secret keys, GCP service-account JSON), tokens with a known prefix (GitHub,
GitLab, Slack, OpenAI/Anthropic, Stripe, Google API, npm, PyPI, Hugging Face, SendGrid) and
high-entropy literals assigned to secret-ish names (``API_KEY = "…"``, ``password: …``).
Placeholders (``EXAMPLE``, ``xxxx``, ``changeme``, ``your-…``) do not count.

``redact_secrets(text)`` blanks what the content rules would flag in a short text that is shown
rather than stored: a language server's hover of a constant defined in a secret file
(``AWS_KEY: Literal['AKIA…']``).
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections import Counter

__all__ = ["RULES_VERSION", "SECRET_NAME_PATTERNS", "redact_secrets", "secret_content", "secret_name"]

RULES_VERSION = "1"
"""Changes when the content rules do: an index made under other rules re-reads its files once."""

SECRET_NAME_PATTERNS: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.ppk",
    "*.keystore",
    "*.jks",
    "*.kdbx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "credentials",
    "*credentials*.json",
    "*credentials.yaml",
    "*credentials.yml",
    "*credentials.toml",
    "*credentials.ini",
    "*credentials.xml",
    "*credentials.cfg",
    "*credentials.conf",
    "*credentials.properties",
    "*credentials.txt",
    "*credentials.csv",
    "service-account*.json",
    "service_account*.json",
    "*-sa-key*.json",
    "secrets",
    "secrets.json",
    "secrets.yaml",
    "secrets.yml",
    "secrets.toml",
    "secrets.ini",
    "secrets.env",
    "secrets.txt",
    "*.secret",
    "*.secrets",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".htpasswd",
    "*.tfstate",
    "*.tfstate.backup",
    "*.tfvars",
)
_ALLOWED_SUFFIXES = (".example", ".sample", ".template", ".dist", ".tmpl")
_NAME_RE = re.compile("|".join(fnmatch.translate(pattern) for pattern in SECRET_NAME_PATTERNS))


def secret_name(name: str) -> bool:
    """True for a file name that usually holds credentials (the last path component, any case)."""
    lower = name.lower()
    if lower.endswith(_ALLOWED_SUFFIXES):
        return False
    return _NAME_RE.match(lower) is not None


# -- content ------------------------------------------------------------------------------------

_TOKEN_RULES: tuple[tuple[str, str], ...] = (
    ("gcp_service_account", r"\"type\"\s*:\s*\"service_account\""),
    # a key header followed by key material (a bare header string in code is not a key)
    ("private_key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:\r?\n|\\n)"
     r"(?:[\w-]+: [^\n]*(?:\r?\n|\\n))*(?:\r?\n|\\n)?[A-Za-z0-9+/=]{40}"),
    ("aws_access_key_id", r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("aws_secret_access_key", r"(?i:aws_?secret_?access_?key|aws_?secret)[\"']?\s*[:=]\s*[\"']?"
     r"[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"),
    ("github_token", r"gh[pousr]_[A-Za-z0-9]{36,}\b"),
    ("github_token", r"github_pat_[A-Za-z0-9_]{40,}\b"),
    ("gitlab_token", r"gl(?:pat|dt|rt|cbt|ptt|ft|imt|agent)-[A-Za-z0-9_-]{20,}\b"),
    ("slack_token", r"xox[abposre]-[A-Za-z0-9-]{10,}\b"),
    ("slack_webhook", r"hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{20,}"),
    ("openai_or_anthropic_key", r"sk-(?:proj-|svcacct-|admin-|ant-(?:api|admin)\d\d-)?[A-Za-z0-9_-]{32,}"),
    ("stripe_key", r"[rs]k_live_[A-Za-z0-9]{20,}\b"),
    ("google_api_key", r"AIza[0-9A-Za-z_-]{35}\b"),
    ("npm_token", r"npm_[A-Za-z0-9]{36}\b"),
    ("pypi_token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
    ("huggingface_token", r"hf_[A-Za-z0-9]{34,}\b"),
    ("sendgrid_key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"),
)  # fmt: skip
"""(rule, pattern), checked in this order. Each pattern starts with its literal prefix, so the regex
engine finds candidates by a fast literal scan (one alternation of all of them is ~7x slower); a
candidate glued to a preceding word character (``xghp_…``) does not count."""
_TOKENS = tuple((name, re.compile(pattern.encode())) for name, pattern in _TOKEN_RULES)

_SECRETISH = (
    r"(?:secret|passwd|password|passphrase|pwd|token|api_?key|apikey|access_?key|auth_?key|private_?key"
    r"|client_?secret|credentials?|signing_?key|encryption_?key)"
)
_KEYWORD_RE = re.compile(_SECRETISH.encode())
"""The secret-ish names, matched on the lower-cased text: only their lines are parsed as assignments."""
_ASSIGNMENT_RE = re.compile(
    # NAME = "literal" | NAME: 'literal' | "name": "literal" | NAME=literal (dotenv, whole line)
    rb"(?im)(?:^|[\s,{;(])[\"']?[A-Za-z0-9_.-]*" + _SECRETISH.encode() + rb"[A-Za-z0-9_.-]*[\"']?"
    rb"\s*(?::=|=|:)\s*(?:[\"']([^\"'\s]{16,200})[\"']|([A-Za-z0-9+/=_~-]{16,200})\s*$)"
)
_PLACEHOLDER_RE = re.compile(
    r"(?i)example|sample|dummy|placeholder|changeme|change_me|your[_-]|xxxx|\*\*\*|<|>|\$\{|\{\{|%\(|fake|redacted"
    r"|test|todo|insert|replace|\.\.\.|^[a-z][a-z0-9+.-]*:"  # ... an elided value; urn:, https: a URI
)
_IDENTIFIER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\)?)?$")
_MIN_ENTROPY = 3.5
"""Shannon bits per character a literal needs to look random (English words and paths stay below)."""


def _entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(value: str) -> bool:
    if _PLACEHOLDER_RE.search(value) or (_IDENTIFIER_RE.match(value) and not any(ch.isdigit() for ch in value)):
        return False
    if "/" in value and value.count("/") > 2 and not value.endswith("="):  # a path or a URL
        return False
    classes = sum((any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value)))
    return classes >= 2 and any(c.isdigit() for c in value) and _entropy(value) >= _MIN_ENTROPY


def _token_rule(data: bytes) -> str | None:
    for name, pattern in _TOKENS:
        for match in pattern.finditer(data):
            start = match.start()
            if start > 0 and (data[start - 1 : start].isalnum() or data[start - 1] == ord("_")):
                continue
            if name == "aws_access_key_id" and match.group().endswith(b"EXAMPLE"):
                continue
            if name == "gcp_service_account" and b'"private_key"' not in data:
                break
            return name
    return None


def _assignment(data: bytes) -> bool:
    lower = data.lower()
    line_end = -1
    for keyword in _KEYWORD_RE.finditer(lower):
        if keyword.start() <= line_end:
            continue  # this line was parsed already
        line_start = data.rfind(b"\n", 0, keyword.start()) + 1
        line_end = data.find(b"\n", keyword.end())
        if line_end < 0:
            line_end = len(data)
        for match in _ASSIGNMENT_RE.finditer(data, line_start, line_end):
            literal = (match.group(1) or match.group(2)).decode("utf-8", errors="replace")
            if _looks_random(literal):
                return True
    return False


def secret_content(data: bytes) -> str | None:
    """The name of the first rule the content matches (``"github_token"``...), or None when it holds no secret."""
    rule = _token_rule(data)
    if rule is not None:
        return rule
    return "secret_assignment" if _assignment(data) else None


_QUOTED_RE = re.compile(rb"([\"'])([^\"'\s]{16,200})\1")


def redact_secrets(text: str) -> str:
    """``text`` with every credential the content rules recognise replaced by ``<redacted: rule>``.

    Token-shaped values are replaced wherever they stand; a random-looking quoted literal is replaced
    when the text names something secret-ish (``API_KEY: Literal['…']``).
    """
    data = text.encode("utf-8", "replace")
    spans: list[tuple[int, int, str]] = []
    for name, pattern in _TOKENS:
        if name == "gcp_service_account":
            continue
        spans += [(m.start(), m.end(), name) for m in pattern.finditer(data)]
    if _KEYWORD_RE.search(data.lower()):
        for m in _QUOTED_RE.finditer(data):
            if _looks_random(m.group(2).decode("utf-8", "replace")):
                spans.append((m.start(2), m.end(2), "secret_assignment"))
    if not spans:
        return text
    out = bytearray()
    last = 0
    for start, end, name in sorted(spans):
        if start < last:
            continue
        out += data[last:start] + f"<redacted: {name}>".encode()
        last = end
    out += data[last:]
    return out.decode("utf-8", "replace")
