"""Secrets are recognised by name and by content; ordinary source and placeholders are not."""

from __future__ import annotations

import pytest

from daemon.core.secret_rules import redact_secrets, secret_content, secret_name

# Built from parts so that this file itself does not look like it holds the credentials it tests.
_GH = "ghp_" + "a1B2c3D4" * 5
_PAT = "github_pat_" + "11ABCDEFG0" * 5
_KEY_BODY = "MIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HecJdw"
_PEM = "-----BEGIN RSA " + "PRIVATE KEY-----\n" + _KEY_BODY + "\n-----END RSA " + "PRIVATE KEY-----\n"


@pytest.mark.parametrize(
    "name",
    [".env", ".env.production", "prod.env", ".envrc", "id_rsa", "server.pem", "tls.key", "credentials",
     "credentials.json", "aws_credentials.json", "credentials.yaml", "service-account.json",
     "service_account_prod.json", "secrets.yaml", ".netrc", ".pypirc", ".git-credentials", "terraform.tfstate"],
)  # fmt: skip
def test_names_that_hold_credentials_are_secret(name: str) -> None:
    assert secret_name(name)
    assert secret_name(name.upper())


@pytest.mark.parametrize(
    "name", ["credentials.py", "secrets.py", "secret_rules.py", ".env.example", "prod.env.sample", "keys.ts", "env.py"]
)
def test_source_files_and_example_copies_are_not_secret_by_name(name: str) -> None:
    assert not secret_name(name)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        (_PEM, "private_key"),
        (
            '{"type": "service_'
            + 'account", "private_key": "-----BEGIN '
            + "PRIVATE KEY-----\\n"
            + _KEY_BODY
            + '\\n"}',
            "gcp_service_account",
        ),
        ('{"type": "service_' + 'account", "client_email": "a@b", "private_key": ""}', "gcp_service_account"),
        ("aws_access_key_id = AKIA" + "QWERTYUIOPASDFGH\n", "aws_access_key_id"),
        ("aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQWERTYKEY\n", "aws_secret_access_key"),
        (f"TOKEN = '{_GH}'\n", "github_token"),
        (f"x = '{_PAT}'\n", "github_token"),
        ("SLACK=xox" + "b-1234567890-abcdefghijABCD\n", "slack_token"),
        ('OPENAI_API_KEY="sk-' + "proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" + '"\n', "openai_or_anthropic_key"),
        ("glp" + "at-Xy7_zK2-pQ9rT4vW1mN8\n", "gitlab_token"),
        ("SECRET_API_KEY=" + "Zx9Kq2Lm7Np4Rt8Vw3Yb6Cd1\n", "secret_assignment"),
        ("db:\n  password: '" + "Tr0ub4dor3xyzQ9kLm2" + "'\n", "secret_assignment"),
        ('API_KEY = "' + "q8Fz3LmN0pR7sT2vW9xY4bC6" + '"\n', "secret_assignment"),
        # a key that names a password or a secret holds one, however short (issue #35)
        ('DB_PASSWORD = "short"\n', "credential_assignment"),
        ("DB_PASSWORD=hunter2\n", "credential_assignment"),
        ("spring.datasource.password=Welcome1\n", "credential_assignment"),
        ("db:\n  password: 'hunter2'\n", "credential_assignment"),
        ('{"clientSecret": "abcd1234"}', "credential_assignment"),
        ("export DEPLOY_TOKEN=a1b2c3d4e5\n", "credential_assignment"),
        ("DATABASE_URL=postgres://admin:" + "pw@db.internal:5432/app\n", "url_password"),
        ("url = 'https://deploy:" + "S3cr3tPa55@git.example.org/repo.git'\n", "url_password"),
        ('{"auths": {"registry.example.com": {"auth": "' + "dXNlcjpodW50ZXIy" + '"}}}', "docker_auth"),
        (
            "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: " + "abcdef.0123456789abcdef\n",
            "kubernetes_credential",
        ),
        ("token: eyJhbGciOiJSUzI1NiJ9." + "eyJzdWIiOiJzeXN0ZW06c2EifQ." + "c2lnbmF0dXJlLWJ5dGVz\n", "jwt"),
    ],
)
def test_content_with_a_credential_names_its_rule(text: str, rule: str) -> None:
    assert secret_content(text.encode()) == rule


@pytest.mark.parametrize(
    "text",
    [
        # the vaults/credentials.py false positive: code about credentials, no credential in it
        "class Vault:\n    def credentials(self):\n        token = self.fetch_token()\n"
        "        password = os.environ['PASSWORD']\n        return token\n",
        "AWS_KEY=AKIA" + "IOSFODNN7EXAMPLE\n",  # the documented example key
        'HEADER = b"-----BEGIN OPENSSH ' + 'PRIVATE KEY-----"\n',  # a header constant, no key material
        'sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"\n',
        'API_KEY = "your-api-key-goes-here-1234"\n',
        'verify_token="eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9..."\n',
        '_TOKEN_TYPE = "urn:example:params:oauth:token-type:x509"\n',
        "first_token_latency_s = accelerator_times[0]\n",
        # what the credential rules must not take (each seen in published packages)
        "self.key_password = key_password\n",
        "username, password = credentials\n",
        "    client_secret: ClientSecret\n",
        "    private_key: x25519.X25519PrivateKey\n",
        "password: bool = False\n",
        'PASSWORD = "password"\n',
        'MASK_TOKEN = "[MASK]"\n',
        'GRANT_TYPE_REFRESH_TOKEN = "refresh_token"\n',
        '_OPENAI_API_KEY = "OPENAI_API_KEY"\n',
        'httpx.URL(username="jo@gmail.com", password="a secret")\n',
        'client_secret="my-client-secret",\n',
        "# DB_PASSWORD=hunter2 in your .env\n",
        "DB_PASSWORD=${DB_PASSWORD}\n",
        'SECRET_KEY = os.environ["SECRET_KEY"]\n',
        "postgres://user:" + "password@localhost/db\n",
        "postgres://{user}:" + "{password}@{host}/db\n",
        '{"auths": {}}',
    ],
)
def test_ordinary_code_and_placeholders_hold_no_secret(text: str) -> None:
    assert secret_content(text.encode()) is None


def test_redaction_blanks_credentials_in_a_shown_text_and_keeps_the_rest() -> None:
    akia = "AKIA" + "Z7Q3W5E8R1T4Y6U2"
    assert redact_secrets(f"(constant) AWS_KEY: Literal['{akia}']") == (
        "(constant) AWS_KEY: Literal['<redacted: aws_access_key_id>']"
    )
    value = "q8Fz3LmN0pR7sT2vW9xY4bC6"
    assert redact_secrets(f'API_KEY: Literal["{value}"]') == 'API_KEY: Literal["<redacted: secret_assignment>"]'
    assert redact_secrets("def rotate(token: str) -> str") == "def rotate(token: str) -> str"
    assert (
        redact_secrets("DB_PASSWORD: Literal['short']") == "DB_PASSWORD: Literal['<redacted: credential_assignment>']"
    )
    assert redact_secrets('URL = "postgres://admin:' + 'pw@db/app"') == (
        'URL = "postgres://admin:<redacted: url_password>@db/app"'
    )
    assert redact_secrets('FIELD = "password"') == 'FIELD = "password"'
