"""Which language a workspace file is indexed as, decided from its path alone.

Language ids: ``python``, ``javascript``, ``typescript``, ``tsx``, ``go``, ``rust``, ``java``,
``c``, ``cpp`` (Tree-sitter code chunking), ``markdown``, ``rst`` (heading sections) and
``text`` (line windows). ``None`` means the file is not indexed at all.

Rules, in order:

1. Lock files, minified bundles and source maps are never indexed (``uv.lock``, ``*.min.js``, ``*.map``, ...).
2. Well-known file names (``Dockerfile``, ``Makefile``, ``README``, ``LICENSE``, ``.gitignore``, ...) are ``text``.
3. The extension, compared case-insensitively, picks the language. ``.h`` is ``c`` (the usual
   convention); C++ headers use ``.hpp``/``.hh``/``.hxx``. Source files of languages without a
   bundled grammar (Ruby, PHP, Kotlin, Swift, C#, shell, SQL, ...), config and data formats are ``text``.
4. A file name without any extension (``bin/manage``, ``AUTHORS``) is ``text``: the scanner rejects
   binaries by content before chunking. An unknown dot-file (``.coverage``) or unknown extension
   (images, archives, ``.csv``) is ``None``.
"""

from __future__ import annotations

from pathlib import PurePosixPath

__all__ = [
    "ALL_LANGUAGES",
    "CODE_LANGUAGES",
    "DOC_LANGUAGES",
    "TEXT_LANGUAGE",
    "language_for_path",
]

CODE_LANGUAGES: frozenset[str] = frozenset(
    {"python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp"}
)
"""Languages chunked into functions/classes from a Tree-sitter tree."""

DOC_LANGUAGES: frozenset[str] = frozenset({"markdown", "rst"})
"""Prose languages chunked into heading sections."""

TEXT_LANGUAGE = "text"
"""Everything else that is indexed: line windows (kind decided per file, see ``chunking.text``)."""

ALL_LANGUAGES: frozenset[str] = CODE_LANGUAGES | DOC_LANGUAGES | {TEXT_LANGUAGE}

_BY_EXTENSION: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".ipp": "cpp",
    ".tpp": "cpp",
    ".inl": "cpp",
    ".cu": "cpp",
    ".cuh": "cpp",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdown": "markdown",
    ".mkd": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".rest": "rst",
}

_TEXT_EXTENSIONS: frozenset[str] = frozenset(
    {
        # prose
        ".txt", ".text", ".adoc", ".asciidoc", ".org", ".tex", ".rtf",
        # config and data
        ".cfg", ".conf", ".config", ".toml", ".yaml", ".yml", ".json", ".jsonc", ".json5", ".ini",
        ".properties", ".env", ".xml", ".plist", ".gradle", ".cmake", ".mk", ".tf", ".tfvars", ".hcl",
        ".nix", ".proto", ".graphql", ".gql", ".dockerfile", ".editorconfig", ".in",
        # scripts and languages without a bundled grammar
        ".sh", ".bash", ".zsh", ".fish", ".ps1", ".bat", ".cmd", ".sql", ".rb", ".php", ".pl", ".pm",
        ".lua", ".r", ".jl", ".kt", ".kts", ".swift", ".cs", ".fs", ".scala", ".sc", ".groovy", ".dart",
        ".ex", ".exs", ".erl", ".hrl", ".hs", ".ml", ".mli", ".clj", ".cljs", ".elm", ".zig", ".nim",
        ".v", ".sv", ".vhd", ".m", ".mm", ".vue", ".svelte", ".astro", ".html", ".htm", ".css",
        ".scss", ".sass", ".less", ".pyx", ".pxd", ".vim", ".el", ".awk", ".sed", ".j2", ".jinja",
    }
)  # fmt: skip

_TEXT_NAMES: frozenset[str] = frozenset(
    {
        "dockerfile", "containerfile", "makefile", "gnumakefile", "justfile", "rakefile", "gemfile",
        "procfile", "vagrantfile", "brewfile", "jenkinsfile", "readme", "license", "licence", "copying",
        "notice", "authors", "contributors", "changelog", "changes", "history", "news", "todo",
        "codeowners", "manifest.in", "requirements.txt", ".gitignore", ".gitattributes",
        ".dockerignore", ".editorconfig", ".gitmodules", ".npmrc", ".nvmrc", ".python-version",
        ".flake8", ".pylintrc", ".prettierrc", ".eslintrc", ".babelrc", ".clang-format",
        ".clang-tidy", ".bashrc", ".zshrc", ".profile", ".ignore",
    }
)  # fmt: skip

_NEVER: frozenset[str] = frozenset(
    {
        "uv.lock", "poetry.lock", "pdm.lock", "pipfile.lock", "cargo.lock", "package-lock.json",
        "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "composer.lock", "gemfile.lock", "go.sum",
        "flake.lock", "npm-shrinkwrap.json",
    }
)  # fmt: skip


_MINIFIED_SUFFIXES = (".min.js", ".min.mjs", ".min.css", ".bundle.js", ".map")


def language_for_path(path: str) -> str | None:
    """The language id ``path`` (workspace-relative POSIX, or any path) is indexed as, or ``None``."""
    name = PurePosixPath(path.replace("\\", "/")).name.lower()
    if not name or name in _NEVER or name.endswith(_MINIFIED_SUFFIXES):
        return None
    if name in _TEXT_NAMES:
        return TEXT_LANGUAGE
    dot = name.rfind(".")
    if dot <= 0:
        # No extension at all (a leading dot alone marks an unknown dot-file).
        return TEXT_LANGUAGE if dot < 0 else None
    ext = name[dot:]
    language = _BY_EXTENSION.get(ext)
    if language is not None:
        return language
    if ext in _TEXT_EXTENSIONS or name.startswith(("dockerfile.", "makefile.", "readme.", "license.")):
        return TEXT_LANGUAGE
    return None
