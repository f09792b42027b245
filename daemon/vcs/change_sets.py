"""A run's change set: its commits after the base (or snapshot) and every file they changed, as one diff."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import cast

from git import Repo
from git.objects import Blob, Tree

from daemon.core.review_models import ChangeSet, CommitInfo, FileChange, FileStatus, RunBranch
from daemon.errors import VcsError
from daemon.vcs.git_runner import GitRunner

__all__ = ["MAX_TEXT_BYTES", "build_change_set", "changed_paths", "parse_commit_message", "run_commit_message"]

logger = logging.getLogger(__name__)

MAX_TEXT_BYTES = 2_000_000
"""Files larger than this are shown by their diff only (``old_text``/``new_text`` are left out)."""

_MESSAGE = re.compile(r"^ided run (?P<run>\S+): (?P<stage>\S+) attempt (?P<attempt>\d+) by (?P<agents>.*)$")
_STATUS: dict[str, FileStatus] = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "R": "renamed",
    "T": "modified",
    "C": "added",
}
_DIFF_OPTS = ("--no-ext-diff", "--no-color", "--no-textconv", "-M", "--src-prefix=a/", "--dst-prefix=b/")


def run_commit_message(run_id: str, stage_id: str, attempt: int, agent_ids: tuple[str, ...], summary: str) -> str:
    """``ided run <id>: <stage> attempt <n> by <agents>`` plus the summary as the body."""
    agents = ", ".join(agent_ids) or "unknown agent"
    subject = f"ided run {run_id}: {stage_id} attempt {attempt} by {agents}"
    body = summary.strip()
    return f"{subject}\n\n{body}\n" if body else f"{subject}\n"


def parse_commit_message(sha: str, message: str) -> CommitInfo:
    subject = message.split("\n", 1)[0]
    match = _MESSAGE.match(subject)
    if match is None:
        return CommitInfo(sha=sha, message=message.strip())
    agents = tuple(a.strip() for a in match["agents"].split(",") if a.strip() and a.strip() != "unknown agent")
    return CommitInfo(
        sha=sha, message=message.strip(), stage_id=match["stage"], attempt=int(match["attempt"]), agents=agents
    )


def changed_paths(git: GitRunner, old: str, new: str) -> list[str]:
    """Every path that differs between two commits (renames as a delete and an add)."""
    return git.zsplit("diff-tree", "-r", "--no-renames", "--name-only", "-z", old, new)


@dataclass(frozen=True, kw_only=True)
class _Entry:
    status: FileStatus
    path: str
    old_path: str | None


def _name_status(git: GitRunner, start: str, head: str) -> list[_Entry]:
    fields = git.zsplit("diff", *_DIFF_OPTS, "--name-status", "-z", start, head)
    entries: list[_Entry] = []
    i = 0
    while i < len(fields):
        code = fields[i][0]
        if code in ("R", "C"):
            entries.append(_Entry(status=_STATUS[code], old_path=fields[i + 1], path=fields[i + 2]))
            i += 3
        else:
            entries.append(_Entry(status=_STATUS.get(code, "modified"), old_path=None, path=fields[i + 1]))
            i += 2
    return entries


def _numstat(git: GitRunner, start: str, head: str) -> list[tuple[int, int, bool]]:
    """(added, removed, binary) per file, in the same order as the name-status listing."""
    out = git.run("diff", *_DIFF_OPTS, "--numstat", "-z", start, head, strip=False)
    stats: list[tuple[int, int, bool]] = []
    parts = out.split("\0")
    i = 0
    while i < len(parts):
        record = parts[i]
        if not record:
            i += 1
            continue
        added, removed, rest = record.split("\t", 2)
        binary = added == "-"
        stats.append((0 if binary else int(added), 0 if binary else int(removed), binary))
        i += 3 if rest == "" else 1  # a rename: the two paths follow as their own fields
    return stats


def _patches(git: GitRunner, start: str, head: str, entries: list[_Entry]) -> list[str]:
    text = git.run("diff", *_DIFF_OPTS, "--full-index", start, head, strip=False)
    pieces = [p for p in re.split(r"(?m)^(?=diff --git )", text) if p]
    if len(pieces) == len(entries):
        return pieces
    logger.warning("the combined diff of %s..%s did not split per file: asking git per file", start, head)
    return [
        git.run(
            "diff", *_DIFF_OPTS, "--full-index", start, head, "--", *filter(None, (e.old_path, e.path)), strip=False
        )
        for e in entries
    ]


def _text(tree: Tree, path: str | None) -> str | None:
    if path is None:
        return None
    try:
        item = tree / path
    except KeyError:
        return None
    if not isinstance(item, Blob) or item.size > MAX_TEXT_BYTES:
        return None
    data = cast("bytes", item.data_stream.read())
    if b"\0" in data[:8000]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _commits(git: GitRunner, start: str, head: str) -> tuple[CommitInfo, ...]:
    out = git.run("log", "--reverse", "--format=%H%x00%B%x1e", f"{start}..{head}", strip=False)
    infos: list[CommitInfo] = []
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        sha, _, message = record.partition("\0")
        infos.append(parse_commit_message(sha, message))
    return tuple(infos)


def build_change_set(git: GitRunner, branch: RunBranch) -> ChangeSet:
    """The change set of ``branch``: its commits after ``start_commit`` and one diff from there to its tip."""
    if not git.ok("rev-parse", "--verify", "-q", f"refs/heads/{branch.branch}"):
        raise VcsError(
            f"the branch {branch.branch} of run {branch.run_id} is gone"
            + (" (removed by cleanup)" if branch.cleaned_at else "")
        )
    head = git.run("rev-parse", f"refs/heads/{branch.branch}^{{commit}}")
    start = branch.start_commit
    entries = _name_status(git, start, head)
    stats = _numstat(git, start, head)
    if len(stats) != len(entries):
        raise VcsError(f"git gave {len(stats)} diff stats for {len(entries)} files of run {branch.run_id}")
    patches = _patches(git, start, head, entries) if entries else []
    files: list[FileChange] = []
    with Repo(str(git.cwd)) as repo:
        old_tree = repo.commit(start).tree
        new_tree = repo.commit(head).tree
        for entry, (added, removed, binary), patch in zip(entries, stats, patches, strict=True):
            before = entry.old_path or (None if entry.status == "added" else entry.path)
            after = None if entry.status == "deleted" else entry.path
            files.append(
                FileChange(
                    path=entry.path,
                    status=entry.status,
                    old_path=entry.old_path,
                    old_text=None if binary else _text(old_tree, before),
                    new_text=None if binary else _text(new_tree, after),
                    diff=patch,
                    added=added,
                    removed=removed,
                    binary=binary,
                )
            )
    return ChangeSet(
        run_id=branch.run_id,
        branch=branch.branch,
        base_commit=branch.base_commit,
        start_commit=start,
        head_commit=head,
        review=branch.review,
        commits=_commits(git, start, head),
        files=tuple(files),
    )
