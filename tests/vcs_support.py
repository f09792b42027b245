"""Helpers for run-branch tests: real git repositories in temp dirs, driven by the real git binary."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["git", "make_repo", "write"]

USER_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Ada User",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada User",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
}


def git(repo: Path, *args: str) -> str:
    """Run git as the user would; returns stdout without the trailing newline."""
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=60, check=False, env=_env())
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout.rstrip("\n")


def _env() -> dict[str, str]:
    return {**os.environ, **USER_ENV}


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_repo(root: Path, files: dict[str, str] | None = None) -> Path:
    """A repository on branch ``main`` with one commit of ``files`` and a local user identity."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Ada User")
    git(root, "config", "user.email", "ada@example.com")
    git(root, "config", "commit.gpgsign", "false")
    for rel, text in (files or {"README.md": "# demo\n", "src/app.py": "def main():\n    return 1\n"}).items():
        write(root, rel, text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root
