from __future__ import annotations

import os
from pathlib import Path

from daemon.core.models import SkipReason
from daemon.core.secret_rules import secret_name as is_secret_name
from daemon.index.scanner import Scanner


def _classify(path: str) -> str | None:
    suffix = path.rsplit(".", 1)[-1] if "." in path else ""
    return {"py": "python", "md": "markdown", "ts": "typescript", "txt": "text"}.get(suffix)


def _scanner(
    root: Path, *, max_file_bytes: int = 1000, extra_excludes: tuple[str, ...] = (), include_secrets: bool = False
) -> Scanner:
    return Scanner(
        root,
        classify=_classify,
        max_file_bytes=max_file_bytes,
        extra_excludes=extra_excludes,
        include_secrets=include_secrets,
    )


def _write(root: Path, rel: str, text: str = "x = 1\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_scan_lists_supported_files_sorted_with_their_language(tmp_path: Path) -> None:
    _write(tmp_path, "src/b.py")
    _write(tmp_path, "README.md", "# hi\n")
    _write(tmp_path, "src/a.ts", "let a = 1\n")
    result = _scanner(tmp_path).scan()
    assert [(f.rel_path, f.language) for f in result.files] == [
        ("README.md", "markdown"),
        ("src/a.ts", "typescript"),
        ("src/b.py", "python"),
    ]


def test_builtin_excludes_skip_dependency_vcs_and_virtualenv_folders(tmp_path: Path) -> None:
    _write(tmp_path, "node_modules/lib/index.ts")
    _write(tmp_path, ".git/hooks/x.py")
    _write(tmp_path, "myenv/pyvenv.cfg", "home = /usr\n")
    _write(tmp_path, "myenv/lib/site.py")
    _write(tmp_path, "build/gen.py")
    _write(tmp_path, "keep.py")
    result = _scanner(tmp_path).scan()
    assert [f.rel_path for f in result.files] == ["keep.py"]
    assert result.skipped[SkipReason.IGNORED] == 4


def test_gitignore_rules_apply_relative_to_their_own_directory(tmp_path: Path) -> None:
    _write(tmp_path, ".gitignore", "*.log.py\n/generated/\n")
    _write(tmp_path, "pkg/.gitignore", "local_*.py\n!local_keep.py\n")
    _write(tmp_path, "debug.log.py")
    _write(tmp_path, "generated/out.py")
    _write(tmp_path, "pkg/local_tmp.py")
    _write(tmp_path, "pkg/local_keep.py")
    _write(tmp_path, "other/local_tmp.py")
    _write(tmp_path, ".ignore", "other/\n")
    files = [f.rel_path for f in _scanner(tmp_path).scan().files]
    assert files == ["pkg/local_keep.py"]


def test_an_invalid_gitignore_line_is_skipped_and_the_files_other_rules_still_apply(tmp_path: Path) -> None:
    # a lone "!" (psf/black keeps such files as test data) made the whole pass fail
    _write(tmp_path, "pkg/.gitignore", "!\n*.gen.py\n")
    _write(tmp_path, "pkg/mod.py")
    _write(tmp_path, "pkg/out.gen.py")
    files = [f.rel_path for f in _scanner(tmp_path).scan().files]
    assert files == ["pkg/mod.py"]


def test_extra_excludes_from_config_are_gitignore_patterns(tmp_path: Path) -> None:
    _write(tmp_path, "vendor/lib.py")
    _write(tmp_path, "app.py")
    files = [f.rel_path for f in _scanner(tmp_path, extra_excludes=("vendor/",)).scan().files]
    assert files == ["app.py"]


def test_secret_bearing_files_are_skipped_unless_allowed(tmp_path: Path) -> None:
    for name in (".env", ".env.production", "id_rsa", "server.pem", "aws_credentials.json", "tls.key"):
        _write(tmp_path, name, "SECRET=1\n")
    _write(tmp_path, ".env.example", "SECRET=\n")
    result = _scanner(tmp_path).scan()
    assert result.skipped[SkipReason.SECRET] == 6
    assert is_secret_name("ID_RSA.pub")
    assert not is_secret_name(".env.example")
    allowed = _scanner(tmp_path, include_secrets=True).scan()
    assert SkipReason.SECRET not in allowed.skipped


def test_files_over_the_size_cap_are_counted_not_read(tmp_path: Path) -> None:
    _write(tmp_path, "big.py", "x" * 5000)
    _write(tmp_path, "small.py")
    result = _scanner(tmp_path, max_file_bytes=1000).scan()
    assert [f.rel_path for f in result.files] == ["small.py"]
    assert result.skipped == {SkipReason.TOO_LARGE: 1}
    assert result.examples[SkipReason.TOO_LARGE] == ["big.py"]


def test_symlinks_never_lead_out_of_the_workspace(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    ws = tmp_path / "ws"
    _write(outside, "secret_code.py")
    _write(ws, "real.py")
    (ws / "escape.py").symlink_to(outside / "secret_code.py")
    (ws / "escape_dir").symlink_to(outside, target_is_directory=True)
    (ws / "alias.py").symlink_to(ws / "real.py")
    result = _scanner(ws).scan()
    assert sorted(f.rel_path for f in result.files) == ["alias.py", "real.py"]
    assert result.skipped[SkipReason.SYMLINK_OUTSIDE] == 2


def test_a_symlink_loop_is_a_counted_skip(tmp_path: Path) -> None:
    (tmp_path / "loop_a.py").symlink_to(tmp_path / "loop_b.py")
    (tmp_path / "loop_b.py").symlink_to(tmp_path / "loop_a.py")
    (tmp_path / "dir_loop").symlink_to(tmp_path, target_is_directory=True)
    result = _scanner(tmp_path).scan()
    assert result.files == []
    assert result.skipped[SkipReason.SYMLINK_LOOP] == 2
    assert result.skipped[SkipReason.IGNORED] == 1  # a symlinked directory inside is never followed


def test_unsupported_files_are_counted(tmp_path: Path) -> None:
    _write(tmp_path, "image.png", "not really")
    _write(tmp_path, "a.py")
    result = _scanner(tmp_path).scan()
    assert result.skipped == {SkipReason.UNSUPPORTED: 1}
    assert result.seen == 2


def test_check_path_applies_the_same_rules_to_one_path(tmp_path: Path) -> None:
    _write(tmp_path, ".gitignore", "gen/\n")
    scanner = _scanner(tmp_path)
    assert scanner.check_path("src/app.py") is None
    assert scanner.check_path("gen/app.py") is SkipReason.IGNORED
    assert scanner.check_path("node_modules/x/app.py") is SkipReason.IGNORED
    assert scanner.check_path(".env") is SkipReason.SECRET
    assert scanner.check_path("logo.png") is SkipReason.UNSUPPORTED


def test_a_directory_that_vanishes_during_the_scan_is_counted(tmp_path: Path) -> None:
    _write(tmp_path, "a.py")
    scanner = _scanner(tmp_path)
    result = scanner.scan()
    os.remove(tmp_path / "a.py")
    again = scanner.scan()
    assert len(result.files) == 1
    assert again.files == []


def test_a_milestone_runs_once_when_the_scan_finds_that_many_indexable_files(tmp_path: Path) -> None:
    for i in range(5):
        _write(tmp_path, f"pkg/m{i}.py")
    _write(tmp_path, "pkg/skipped.bin")  # unsupported: not counted
    found: list[int] = []

    def scan_with_milestone_at(n: int) -> None:
        result = _scanner(tmp_path).scan(milestone=(n, lambda: found.append(n)))
        assert len(result.files) == 5

    scan_with_milestone_at(3)
    scan_with_milestone_at(5)
    scan_with_milestone_at(6)  # more than the workspace has: never runs
    assert found == [3, 5]


def test_check_path_refuses_links_out_and_to_secrets_as_the_walk_does(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    ws = tmp_path / "ws"
    _write(outside, "passwd.py", "root = 0\n")
    _write(outside, "lib/sub/stolen.py")
    _write(ws, ".env", "KEY=1\n")
    _write(ws, "real.py")
    (ws / "py").mkdir()
    (ws / "py" / "leak.py").symlink_to(outside / "passwd.py")
    (ws / "py" / "envlink.py").symlink_to("../.env")
    (ws / "py" / "outdir").symlink_to(outside / "lib", target_is_directory=True)
    (ws / "py" / "alias.py").symlink_to(ws / "real.py")
    scanner = _scanner(ws)
    assert scanner.check_path("py/leak.py") is SkipReason.SYMLINK_OUTSIDE
    assert scanner.check_path("py/outdir/sub/stolen.py") is SkipReason.SYMLINK_OUTSIDE  # through a linked parent
    assert scanner.check_path("py/envlink.py") is SkipReason.SECRET  # judged on the target's name
    assert scanner.check_path("py/alias.py") is None
    assert scanner.resolved("py/alias.py") == (ws / "real.py").resolve()
    walked = scanner.scan()
    assert walked.skipped[SkipReason.SYMLINK_OUTSIDE] == 2
    assert walked.skipped[SkipReason.SECRET] == 2  # .env and the link to it
    assert scanner.scan_dir("py/outdir/sub").files == []  # a folder reached through a link out
    (ws / "inner").symlink_to(ws / "py", target_is_directory=True)
    assert scanner.check_path("inner/alias.py") is SkipReason.IGNORED  # the walk never follows linked folders
    assert scanner.scan_dir("inner").files == []


def test_a_source_file_named_like_credentials_is_indexed(tmp_path: Path) -> None:
    _write(tmp_path, "vaults/credentials.py", "def rotate(token):\n    return token\n")
    _write(tmp_path, "vaults/secrets.py", "def load():\n    return {}\n")
    assert sorted(f.rel_path for f in _scanner(tmp_path).scan().files) == ["vaults/credentials.py", "vaults/secrets.py"]


def test_special_files_and_links_to_them_are_counted_never_listed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws, "real.py")
    os.mkfifo(ws / "inner.fifo")
    (ws / "fifolink.txt").symlink_to("inner.fifo")
    os.mkfifo(ws / "pipe.py")
    scanner = _scanner(ws)
    result = scanner.scan()
    assert [f.rel_path for f in result.files] == ["real.py"]
    assert result.skipped[SkipReason.SPECIAL_FILE] == 3
    assert scanner.check_path("fifolink.txt") is SkipReason.SPECIAL_FILE
    assert scanner.check_path("pipe.py") is SkipReason.SPECIAL_FILE


def test_a_hard_link_is_skipped_like_a_link_out(tmp_path: Path) -> None:
    outside = _write(tmp_path / "outside", "outside.env", "DB_PASSWORD=zqhard\n")
    ws = tmp_path / "ws"
    _write(ws, "real.py")
    os.link(outside, ws / "hardout.txt")
    scanner = _scanner(ws)
    result = scanner.scan()
    assert [f.rel_path for f in result.files] == ["real.py"]
    assert result.skipped[SkipReason.HARD_LINK] == 1
    assert scanner.check_path("hardout.txt") is SkipReason.HARD_LINK
