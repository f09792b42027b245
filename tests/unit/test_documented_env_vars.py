"""Every ``IDED_*`` environment variable the docs or a comment name is used by some code: issue 39 found
scripts/install-test-tools.sh saying the language servers are found through ``IDED_LSP_PATH``, which
nothing read. Settings' variables (``IDED_SECTION__KEY``, read generically by the config loader) are
left out."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NAME = re.compile(r"\bIDED_[A-Z0-9]+(?:_[A-Z0-9]+)*\b")
CODE = (".py", ".sh", ".rs", ".lua", ".ts", ".mjs", ".js", ".toml", ".yaml", ".yml")
COMMENT = ("#", "//", "--", "*", "/*")


def _named_and_used() -> tuple[dict[str, str], set[str]]:
    """Each variable named only in prose (Markdown, comments) with a file naming it, and those used."""
    listed = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    named: dict[str, str] = {}
    used: set[str] = set()
    for name in listed.split():
        if not (name.endswith((*CODE, ".md")) or name in ("justfile", "dev")):
            continue
        path = REPO / name
        if not path.is_file():
            continue
        for line in path.read_text(errors="replace").splitlines():
            found = [n for n in NAME.findall(line) if "__" not in n]
            prose = name.endswith(".md") or line.strip().startswith(COMMENT)
            for variable in found:
                if prose:
                    named.setdefault(variable, name)
                else:
                    used.add(variable)
    return named, used


def test_every_environment_variable_the_docs_name_is_used_by_code() -> None:
    named, used = _named_and_used()
    assert named, "the docs name some IDED_ variables"
    unused = {variable: where for variable, where in named.items() if variable not in used}
    assert unused == {}, f"named in prose but read by nothing (variable: a file naming it): {unused}"
