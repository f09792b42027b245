"""A reviewer's selection of a run's changes as one commit: the reviewed commit of a selective accept.

``reviewed_commit`` builds, in a private index, the tree of the run's start (base or snapshot) with
exactly the kept changes: each kept file whole (the run's version), some of its hunks (applied to the
start's text from the file's diff in the change set), or a text the reviewer made. It is committed
on top of the run's tip, so on the run's branch it drops what was not kept; its change from the
start is what accept applies. ``VcsError`` for a selection that names a file the run did not change,
splits a binary file, or keeps nothing. Synchronous (git); nothing here moves a ref.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from daemon.core.review_models import AcceptSelection, ChangeSet, FileChange, KeptFile
from daemon.errors import VcsError
from daemon.vcs.applying import LITERAL
from daemon.vcs.git_runner import IDED_IDENTITY, GitRunner, temp_index_env

__all__ = ["ReviewedCommit", "apply_hunks", "hunk_count", "reviewed_commit"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_EMPTY_BLOB = "0" * 40


@dataclass(frozen=True, kw_only=True)
class _Hunk:
    old_start: int
    old_count: int
    new_lines: list[str]


@dataclass(frozen=True, kw_only=True)
class ReviewedCommit:
    """The reviewed commit and what the selection did with each of the run's files."""

    sha: str
    kept: tuple[str, ...]
    partial: tuple[str, ...]
    dropped: tuple[str, ...]


def _hunks(diff: str) -> list[_Hunk]:
    """The hunks of one file's unified diff (git's format), each with its new side's lines (ends kept)."""
    hunks: list[_Hunk] = []
    new: list[str] = []
    last: str | None = None  # the previous body line's kind: " ", "+" or "-"
    for line in diff.split("\n"):
        header = _HUNK.match(line)
        if header:
            new = []
            start, count = int(header[1]), 1 if header[2] is None else int(header[2])
            hunks.append(_Hunk(old_start=start, old_count=count, new_lines=new))
            last = None
            continue
        if not hunks or not line:
            continue
        kind, body = line[0], line[1:] + "\n"
        if kind == "\\":  # "\ No newline at end of file": the previous line has none
            if last in (" ", "+") and new:
                new[-1] = new[-1].removesuffix("\n")
            continue
        if kind in (" ", "+"):
            new.append(body)
        if kind in (" ", "+", "-"):
            last = kind
    return hunks


def hunk_count(change: FileChange) -> int:
    """How many hunks the file's diff has (the ids a selection names are ``0 .. hunk_count - 1``)."""
    return len(_hunks(change.diff))


def apply_hunks(old_text: str, diff: str, keep: Sequence[int]) -> str:
    """``old_text`` with the hunks of ``diff`` whose index is in ``keep`` applied (the others left as they were)."""
    old = old_text.splitlines(keepends=True)
    wanted = set(keep)
    out: list[str] = []
    at = 0
    for index, hunk in enumerate(_hunks(diff)):
        start = hunk.old_start - 1 if hunk.old_count else hunk.old_start  # an insertion goes after old_start
        out.extend(old[at:start])
        out.extend(hunk.new_lines if index in wanted else old[start : start + hunk.old_count])
        at = start + hunk.old_count
    out.extend(old[at:])
    return "".join(out)


def _blob(git: GitRunner, text: str) -> str:
    return git.run("hash-object", "-w", "--stdin", stdin=text.encode("utf-8"))


def _entry(git: GitRunner, commit: str, path: str) -> tuple[str, str] | None:
    """(mode, blob) of ``path`` in ``commit``, None when absent."""
    out = git.run("ls-tree", "-z", commit, "--", path, env=LITERAL, strip=False).rstrip("\0")
    if not out:
        return None
    meta, _, _ = out.partition("\t")
    mode, _kind, sha = meta.split()
    return mode, sha


def _kept_text(change: FileChange, kept: KeptFile) -> str:
    """The text a partly kept file gets."""
    if kept.text is not None:
        return kept.text
    assert kept.hunks is not None
    count = hunk_count(change)
    if change.old_text is None and change.status != "added":
        raise VcsError(f"{change.path} is not shown as text (too large or not UTF-8): keep it whole or drop it")
    text = apply_hunks(change.old_text or "", change.diff, kept.hunks)
    if change.new_text is not None and apply_hunks(change.old_text or "", change.diff, range(count)) != change.new_text:
        raise VcsError(f"the diff of {change.path} does not rebuild the run's text: keep it whole or drop it")
    return text


def reviewed_commit(git: GitRunner, changes: ChangeSet, selection: AcceptSelection) -> ReviewedCommit:
    """The commit, on top of the run's tip, whose tree is the run's start with exactly ``selection``'s changes."""
    by_path = {f.path: f for f in changes.files}
    chosen: dict[str, KeptFile] = {}
    for kept in selection.files:
        if kept.path not in by_path:
            raise VcsError(f"run {changes.run_id} did not change {kept.path}: a selection names files of its diff")
        if kept.text is not None and kept.hunks is not None:
            raise VcsError(f"{kept.path}: keep it by hunks or by text, not both")
        chosen[kept.path] = kept
    # (path, mode, blob): the index entries to set; blob _EMPTY_BLOB removes the path
    entries: list[tuple[str, str, str]] = []
    kept_paths: list[str] = []
    partial: list[str] = []
    for change in changes.files:
        kept = chosen.get(change.path)
        if kept is None or kept.hunks == ():
            continue
        count = hunk_count(change)
        bad = sorted(h for h in kept.hunks or () if not 0 <= h < count)
        if bad:
            raise VcsError(f"{change.path} has {count} hunk(s) in the run's diff (0..{count - 1}): no hunk {bad[0]}")
        whole = kept.text is None and (kept.hunks is None or set(kept.hunks) >= set(range(count)))
        if change.binary and not whole:
            raise VcsError(f"{change.path} is binary: keep it whole or drop it")
        kept_paths.append(change.path)
        if change.old_path:  # a rename: the old path goes either way
            entries.append((change.old_path, "0", _EMPTY_BLOB))
        head = _entry(git, changes.head_commit, change.path)
        if whole:
            entries.append((change.path, *head) if head else (change.path, "0", _EMPTY_BLOB))
            continue
        partial.append(change.path)
        start = _entry(git, changes.start_commit, change.old_path or change.path)
        mode = (head or start or ("100644", ""))[0]
        entries.append((change.path, mode, _blob(git, _kept_text(change, kept))))
    dropped = tuple(f.path for f in changes.files if f.path not in kept_paths)
    with tempfile.TemporaryDirectory(prefix="ided-review-") as tmp:
        env = temp_index_env(Path(tmp) / "index")
        git.run("read-tree", changes.start_commit, env=env)
        info = "".join(f"{mode} {sha}\t{path}\0" for path, mode, sha in entries).encode()
        if info:
            git.run("update-index", "-z", "--index-info", env=env, stdin=info)
        tree = git.run("write-tree", env=env)
    if tree == git.run("rev-parse", f"{changes.start_commit}^{{tree}}"):
        raise VcsError(f"the selection keeps nothing of run {changes.run_id}: reject it instead")
    message = _message(changes.run_id, kept_paths, partial, dropped)
    sha = git.run(
        "commit-tree", tree, "-p", changes.head_commit, "-F", "-", env=dict(IDED_IDENTITY), stdin=message.encode()
    )
    return ReviewedCommit(sha=sha, kept=tuple(kept_paths), partial=tuple(partial), dropped=dropped)


def _message(run_id: str, kept: Sequence[str], partial: Sequence[str], dropped: Sequence[str]) -> str:
    lines = [f"ided run {run_id}: reviewed, {len(kept)} of {len(kept) + len(dropped)} file(s) kept", ""]
    lines += [f"kept: {p}" + (" (in part)" if p in partial else "") for p in kept]
    lines += [f"dropped: {p}" for p in dropped]
    return "\n".join(lines) + "\n"
