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
high-entropy literals assigned to secret-ish names (``API_KEY = "…"``, ``password: …``); any literal
assigned to a key that names a password or secret (``DB_PASSWORD = "short"``, ``password: hunter2``,
``spring.datasource.password=…``, ``clientSecret: …``), or to an upper-case key that names a token or
an API key (``DEPLOY_TOKEN=…``); a password inside a URL (``postgres://admin:pw@db/app``); JSON Web
Tokens; Docker's ``auths.*.auth`` (``.docker/config.json``) and a Kubernetes config's ``token``,
``client-key-data`` and ``password`` (``.kube/config``). Placeholders (``EXAMPLE``, ``xxxx``,
``changeme``, ``your-…``, ``${VAR}``, a value that only repeats the key's word) do not count.

``redact_secrets(text)`` blanks what the content rules would flag in a short text that is shown
rather than stored: a language server's hover of a constant defined in a secret file
(``AWS_KEY: Literal['AKIA…']``).
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections import Counter
from urllib.parse import unquote

__all__ = ["RULES_VERSION", "SECRET_NAME_PATTERNS", "redact_secrets", "secret_content", "secret_name"]

RULES_VERSION = "2"
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


def _assignment(data: bytes) -> str | None:
    """``secret_assignment`` (a random-looking literal under a secret-ish name) or ``credential_assignment``
    (any real literal under a key that names a password, a secret or, upper-case, a token), else None."""
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
                return "secret_assignment"
        if _credential_line(data[line_start:line_end]):
            return "credential_assignment"
    return None


# -- credentials by shape: a key that names one, a URL password, JWTs, Docker and Kubernetes configs ---

_CREDENTIAL_RE = re.compile(
    rb"(?:^|[\s,{;(])(?:export\s+)?[\"']?(?P<key>[A-Za-z_][A-Za-z0-9_.-]{0,80})[\"']?"
    rb"(?P<sep>\s*(?::=|=|:)\s*)"
    rb"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s\"'#;,]+)(?P<rest>[^\n]*))"
)
"""``KEY = "value"``, ``KEY: 'value'``, ``"key": "value"``, ``KEY=value`` (dotenv, ini, properties, YAML)."""
_KEY_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z0-9]+(?![a-z])")
_SECRET_LAST = frozenset({"password", "passwd", "passphrase", "secret"})
_SECRET_PAIRS = frozenset({("secret", "key"), ("client", "secret"), ("private", "key"), ("signing", "key")})
_TOKEN_LAST = frozenset({"token", "apikey"})
_TOKEN_PAIRS = frozenset({("api", "key"), ("access", "key"), ("auth", "key")})
_NOT_VALUES = frozenset(
    {"str", "bytes", "int", "none", "null", "nil", "true", "false", "optional", "secretstr", "secretbytes", "any",
     "string", "required", "undefined", "empty", "pass", "password", "passwd", "pwd", "secret", "token", "key",
     "apikey", "api_key", "hunter2_example", "redacted", "hidden", "masked"}
)  # fmt: skip
"""Values that are a type, a null, or only the key's own word again (``PASSWORD = "password"``)."""


def _key_kind(key: str) -> str | None:
    """``secret`` for a key that names a password or a secret, ``token`` for one that names a token or an
    API key, judged on its last words (``DB_PASSWORD``, ``spring.datasource.password``, ``clientSecret``)."""
    parts = [p.lower() for p in _KEY_PARTS.findall(key)]
    if not parts:
        return None
    last, pair = parts[-1], tuple(parts[-2:])
    if last in _SECRET_LAST or pair in _SECRET_PAIRS:
        return "secret"
    if last in _TOKEN_LAST or pair in _TOKEN_PAIRS:
        return "token"
    return None


_NAMES_A_FIELD = re.compile(r"(?i)pass(?:wor)?d|secret|token|api[_-]?key|^(?:my|a|an|the|some)[\s_-]|\s")
"""A value that names a field, is an example (``my-secret``, ``a secret``) or is prose, not a credential."""
_TYPE_LIKE = re.compile(r"^(?:[A-Z][A-Za-z0-9_]*|bool|float|dict|list|object|tuple|callable)$")
"""A bare value after ``:`` that is an annotation (``client_secret: ClientSecret``, ``password: bool``)."""
_COMMENT = (b"#", b"//", b"*", b">>>", b"...", b"--", b";")


def _real_value(value: str, key: str, kind: str) -> bool:
    """Whether ``value`` is a literal credential rather than a placeholder, a reference, a type or an example."""
    value = value.strip()
    if len(value) < 4 or value.lower() in _NOT_VALUES or value.lower() == key.lower():
        return False
    if _PLACEHOLDER_RE.search(value) or _NAMES_A_FIELD.search(value):
        return False
    if value.startswith(("$", "%", "<", "{", "@", "!", "&", "[")) or len(set(value)) <= 2:  # "xxxx", "****"
        return False
    if kind == "token":  # an upper-case constant naming a token often holds a marker (``MASK_TOKEN = "[MASK]"``)
        return len(value) >= 8 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    return True


def _credential_line(line: bytes) -> bool:
    if line.lstrip().startswith(_COMMENT):
        return False  # documentation and examples; a random value there is still secret_assignment's
    for match in _CREDENTIAL_RE.finditer(line):
        key = match.group("key").decode("ascii")
        kind = _key_kind(key)
        if kind is None:
            continue
        if kind == "token" and not (key.isupper() and any(c.isalpha() for c in key)):
            continue  # a lower-case ``token`` is most often a parser's; random ones are secret_assignment's
        quoted: bytes | None = match.group("dq") if match.group("dq") is not None else match.group("sq")
        if quoted is not None:
            value = quoted.decode("utf-8", "replace")
        else:
            value = match.group("bare").decode("utf-8", "replace")
            sep = match.group("sep")
            rest = match.group("rest").strip()
            if rest and not rest.startswith((b"#", b"//")):
                continue  # an expression (``password: str = ...``, ``token = next(it)``), not a value
            if b"=" in sep and sep.strip() != sep:
                continue  # ``password = value``: code assigning a variable (dotenv and ini write KEY=value)
            if any(c in value for c in "()[]{}") or (b":" in sep and _TYPE_LIKE.match(value.rsplit(".", 1)[-1])):
                continue  # a call, an index, an annotation
        if _real_value(value, key, kind):
            return True
    return False


_URL_CREDENTIALS = re.compile(
    rb"(?P<user>[^\s:/@\"'<>{}\[\]]{1,64}):(?P<password>[^\s:/@\"'<>{}\[\]]{2,128})@[A-Za-z0-9]"
)
"""What follows a URL's ``scheme://`` when it carries ``user:password@host``."""
_URL_PLACEHOLDERS = frozenset({"pass", "password", "passwd", "pwd", "secret", "token", "changeme", "xxx", "***"})
_JWT = re.compile(rb"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
_DOCKER_AUTH = re.compile(rb'"(?:auth|identitytoken)"\s*:\s*"([A-Za-z0-9+/=._-]{8,})"')
_KUBE_FIELD = re.compile(
    rb"(?m)^\s*-?\s*(?:token|client-key-data|password|id-token|refresh-token)\s*:\s*[\"']?([^\s\"'#]{8,})"
)


def _shaped_rule(data: bytes) -> str | None:
    """``url_password``, ``jwt``, ``docker_auth`` or ``kubernetes_credential`` (see the module docstring)."""
    start = data.find(b"://")
    while start > 0:
        match = _URL_CREDENTIALS.match(data, start + 3) if data[start - 1 : start].isalnum() else None
        start = data.find(b"://", start + 3)
        if match is None:
            continue
        password = unquote(match.group("password").decode("utf-8", "replace"))
        user = unquote(match.group("user").decode("utf-8", "replace"))
        if password.lower() in _URL_PLACEHOLDERS or password == user or password.startswith(("$", "%")):
            continue
        if (_PLACEHOLDER_RE.search(password) and not password.isalnum()) or _NAMES_A_FIELD.search(password):
            continue
        if re.fullmatch(r"(?i)(?:your|my|the|some)?_?(?:pass(?:word)?|secret)\d*", password):
            continue
        return "url_password"
    if b"eyJ" in data and _JWT.search(data):
        return "jwt"
    if b'"auths"' in data and _DOCKER_AUTH.search(data):
        return "docker_auth"
    if b"users:" in data and b"kind: Config" in data:
        for match in _KUBE_FIELD.finditer(data):
            if _real_value(match.group(1).decode("utf-8", "replace"), "token", "secret"):
                return "kubernetes_credential"
    return None


def secret_content(data: bytes) -> str | None:
    """The name of the first rule the content matches (``"github_token"``...), or None when it holds no secret."""
    rule = _token_rule(data) or _shaped_rule(data)
    if rule is not None:
        return rule
    return _assignment(data)


_QUOTED_RE = re.compile(rb"([\"'])([^\"'\s]{16,200})\1")
_ANY_QUOTED_RE = re.compile(rb"([\"'])([^\"'\n]{1,200})\1")


def redact_secrets(text: str) -> str:
    """``text`` with every credential the content rules recognise replaced by ``<redacted: rule>``.

    Token-shaped values and JSON Web Tokens are replaced wherever they stand, a URL's password in any
    URL; a random-looking quoted literal is replaced when the text names something secret-ish
    (``API_KEY: Literal['…']``), and any quoted literal when it names a password or a secret
    (``DB_PASSWORD: Literal['short']``).
    """
    data = text.encode("utf-8", "replace")
    spans: list[tuple[int, int, str]] = []
    for name, pattern in (*_TOKENS, ("jwt", _JWT)):
        if name == "gcp_service_account":
            continue
        spans += [(m.start(), m.end(), name) for m in pattern.finditer(data)]
    start = data.find(b"://")
    while start > 0:
        match = _URL_CREDENTIALS.match(data, start + 3)
        if match is not None:
            spans.append((match.start("password"), match.end("password"), "url_password"))
        start = data.find(b"://", start + 3)
    if _KEYWORD_RE.search(data.lower()):
        names_a_secret = any(_key_kind(k) == "secret" for k in re.findall(r"[A-Za-z_][A-Za-z0-9_.-]*", text))
        for m in _QUOTED_RE.finditer(data):
            if _looks_random(m.group(2).decode("utf-8", "replace")):
                spans.append((m.start(2), m.end(2), "secret_assignment"))
        if names_a_secret:
            for m in _ANY_QUOTED_RE.finditer(data):
                if _real_value(m.group(2).decode("utf-8", "replace"), "", "secret"):
                    spans.append((m.start(2), m.end(2), "credential_assignment"))
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
