"""Apply commits onto the user's branch without ever overwriting their work.

The order is always: check, then write. The check compares every path the commits touch with the
user's side: commits on their branch since the reference point, staged, unstaged and untracked
changes. Only when no path overlaps are the new commits built in a private index (the user's index
and working tree are not touched while building), the branch moved with a compare-and-swap
``update-ref``, and then exactly the touched paths of the user's index and working tree brought to
the new tip. Everything else the user has (other edits, staged or not) stays as it was.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from daemon.core.review_models import ConflictFile
from daemon.errors import ErrorCode, VcsError
from daemon.vcs.git_runner import IDED_IDENTITY, GitRunner, temp_index_env

__all__ = [
    "LITERAL",
    "ApplyStep",
    "author_env",
    "build_commits",
    "committer_env",
    "find_conflicts",
    "move_branch",
    "sync_paths",
    "user_branch",
]


LITERAL: Mapping[str, str] = {"GIT_LITERAL_PATHSPECS": "1"}
"""Paths are paths, never glob patterns."""

_CHUNK = 400
_IN_PROGRESS = {
    "MERGE_HEAD": "a merge",
    "CHERRY_PICK_HEAD": "a cherry-pick",
    "REVERT_HEAD": "a revert",
    "rebase-merge": "a rebase",
    "rebase-apply": "a rebase or git am",
}


@dataclass(frozen=True, kw_only=True)
class ApplyStep:
    """One new commit: the change from ``old`` to ``new`` (two commits), with this message and author."""

    old: str
    new: str
    message: str
    author: Mapping[str, str] = field(default_factory=dict[str, str])


def _chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i : i + _CHUNK]


def user_branch(git: GitRunner, operation: str) -> str:
    """The user's current branch (``refs/heads/...``); ``VcsError`` when HEAD is detached or mid-operation."""
    markers = [arg for marker in _IN_PROGRESS for arg in ("--git-path", marker)]
    for (marker, what), where in zip(_IN_PROGRESS.items(), git.lines("rev-parse", *markers), strict=True):
        if Path(git.cwd, where).exists():
            raise VcsError(f"{git.cwd} is in the middle of {what} ({marker}): finish or abort it, then {operation}")
    if not git.ok("symbolic-ref", "-q", "HEAD"):
        raise VcsError(f"HEAD of {git.cwd} is detached: check out a branch to {operation} onto it")
    ref = git.run("symbolic-ref", "-q", "HEAD")
    if not git.ok("rev-parse", "--verify", "-q", "HEAD^{commit}"):
        raise VcsError(f"the branch {ref} of {git.cwd} has no commit yet", code=ErrorCode.NOT_A_REPOSITORY)
    return ref


def _ls_tree(git: GitRunner, commit: str, paths: Sequence[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for chunk in _chunks(paths):
        for record in git.zsplit("ls-tree", "-r", "-z", commit, "--", *chunk, env=LITERAL):
            meta, _, path = record.partition("\t")
            found[path] = meta.split()[2]
    return found


def _ls_index(git: GitRunner, paths: Sequence[str]) -> dict[str, str]:
    """Index blob per path; an unmerged path maps to ``"unmerged"``."""
    found: dict[str, str] = {}
    for chunk in _chunks(paths):
        for record in git.zsplit("ls-files", "-s", "-z", "--", *chunk, env=LITERAL):
            meta, _, path = record.partition("\t")
            _mode, sha, stage = meta.split()
            found[path] = sha if stage == "0" else "unmerged"
    return found


def _worktree_blobs(git: GitRunner, paths: Sequence[str]) -> dict[str, str]:
    present = [p for p in paths if Path(git.cwd, p).is_file()]
    found: dict[str, str] = {}
    for chunk in _chunks(present):
        found.update(zip(chunk, git.lines("hash-object", "--", *chunk), strict=True))
    return found


def _dirty_paths(git: GitRunner) -> set[str]:
    records = git.zsplit("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
    return {record[3:] for record in records if len(record) > 3}


def find_conflicts(
    git: GitRunner,
    *,
    paths: Sequence[str],
    reference: str,
    head: str,
    expected: str,
    run_side: Mapping[str, Sequence[str]],
) -> tuple[ConflictFile, ...]:
    """Paths the user changed since ``reference`` (in commits up to ``head``, or in their index/working tree).

    A path with uncommitted changes is no conflict when its working-tree content is exactly what the
    commits expect (``expected``'s version: the snapshot of uncommitted changes a run started from).
    """
    wanted = set(paths)
    conflicts: dict[str, ConflictFile] = {}

    def run_text(path: str) -> str:
        shas = run_side.get(path, ())
        return f"changed in {', '.join(s[:10] for s in shas)}" if shas else "changed"

    if reference != head:
        for path in git.zsplit("diff", "--name-only", "--no-renames", "-z", reference, head):
            if path not in wanted:
                continue
            commits = git.lines("log", "--format=%h %s", f"{reference}..{head}", "--", path, env=LITERAL)
            shown = "; ".join(commits[:3]) + (f" (+{len(commits) - 3} more)" if len(commits) > 3 else "")
            conflicts[path] = ConflictFile(
                path=path,
                user_side=f"committed since the run started: {shown or 'differs from the run start'}",
                run_side=run_text(path),
                user_commits=tuple(c.split(" ", 1)[0] for c in commits),
                run_commits=tuple(run_side.get(path, ())),
            )
    dirty = sorted(p for p in _dirty_paths(git) & wanted if p not in conflicts)
    if dirty:
        expected_blobs = _ls_tree(git, expected, dirty)
        head_blobs = _ls_tree(git, head, dirty)
        index_blobs = _ls_index(git, dirty)
        worktree_blobs = _worktree_blobs(git, dirty)
        for path in dirty:
            want = expected_blobs.get(path)
            index = index_blobs.get(path)
            if worktree_blobs.get(path) == want and index in (head_blobs.get(path), want):
                continue
            if path not in head_blobs and path not in index_blobs:
                side = "an untracked file the run would overwrite"
            elif index == "unmerged":
                side = "unmerged (a conflict of yours is in progress)"
            else:
                side = "uncommitted changes (staged or in the working tree)"
            conflicts[path] = ConflictFile(
                path=path, user_side=side, run_side=run_text(path), run_commits=tuple(run_side.get(path, ())),
                uncommitted=True,
            )  # fmt: skip
    return tuple(conflicts[p] for p in sorted(conflicts))


def _index_info(git: GitRunner, old: str, new: str) -> bytes:
    """``update-index -z --index-info`` records that turn ``old``'s version of the changed paths into ``new``'s."""
    fields = git.run("diff-tree", "-r", "--no-renames", "-z", old, new, strip=False).split("\0")
    out: list[bytes] = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(":"):
            continue
        _old_mode, new_mode, _old_sha, new_sha, status = meta[1:].split()
        if status == "D":
            out.append(f"0 {'0' * len(new_sha)}\t{path}\0".encode())
        else:
            out.append(f"{new_mode} {new_sha}\t{path}\0".encode())
    return b"".join(out)


def build_commits(git: GitRunner, *, onto: str, steps: Sequence[ApplyStep], committer: Mapping[str, str]) -> list[str]:
    """New commits on top of ``onto``, one per step, built in a private index. Refs are not moved."""
    made: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ided-apply-") as tmp:
        env = temp_index_env(Path(tmp) / "index")
        git.run("read-tree", onto, env=env)
        tip = onto
        for step in steps:
            info = _index_info(git, step.old, step.new)
            if info:
                git.run("update-index", "-z", "--index-info", env=env, stdin=info)
            tree = git.run("write-tree", env=env)
            tip = git.run(
                "commit-tree", tree, "-p", tip, "-F", "-",
                env={**env, **step.author, **committer}, stdin=step.message.encode(),
            )  # fmt: skip
            made.append(tip)
    return made


def move_branch(git: GitRunner, ref: str, new: str, old: str, reason: str) -> None:
    """Compare-and-swap: ``ref`` moves to ``new`` only if it still points at ``old``."""
    try:
        git.run("update-ref", "-m", reason, ref, new, old)
    except VcsError as exc:
        raise VcsError(f"{ref} moved while ided was applying ({reason}); nothing was changed, try again") from exc


def sync_paths(git: GitRunner, paths: Sequence[str], tip: str) -> None:
    """Bring exactly ``paths`` of the user's index and working tree to ``tip``; nothing else is touched."""
    present = set(_ls_tree(git, tip, paths))
    keep = [p for p in paths if p in present]
    gone = [p for p in paths if p not in present]
    if keep:
        git.run(
            "checkout", tip, "--pathspec-from-file=-", "--pathspec-file-nul",
            env=LITERAL, stdin=b"\0".join(p.encode() for p in keep),
        )  # fmt: skip
    if gone:
        git.run(
            "rm", "-q", "-f", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul",
            env=LITERAL, stdin=b"\0".join(p.encode() for p in gone),
        )  # fmt: skip


def author_env(git: GitRunner, sha: str) -> dict[str, str]:
    """The author of ``sha``, to keep on the commit made from it."""
    name, email, date = git.run("log", "-1", "--format=%an%x00%ae%x00%ad", "--date=raw", sha).split("\0")
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": date}


def committer_env(git: GitRunner) -> dict[str, str]:
    """The user's identity when git knows it (config), else ided's, so applying never fails for want of one."""
    if git.ok("config", "user.email") and git.ok("config", "user.name"):
        return {}
    return {k: v for k, v in IDED_IDENTITY.items() if k.startswith("GIT_COMMITTER")}
