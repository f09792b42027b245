"""The secret content check on a real tree: files flagged (all false positives on published packages) and speed.

    python bench/secret_scan.py [ROOT] [--glob '**/*.py'] [--every N] [--text] [--quiet] [--before REV]

ROOT defaults to the venv's site-packages: published libraries hold no credentials, so every file
flagged there is a false positive. Prints files, MB, files flagged (with their rule; ``--quiet``: the
counts per rule only), seconds and MB/s of :func:`daemon.core.secret_rules.secret_content` plus the
name rule. ``--text``: every file the index would read (any name, at most 1 MB, no NUL byte in its
first 8 KiB, UTF-8), not only ``--glob``. ``--before REV``: the same files through the rules of
``daemon/core/secret_rules.py`` as it was at git revision REV too, in the same run, and the files
each flags that the other does not (``--before 6cae077^``: the rules before issue #35's new shapes).
See docs/indexing.md#secrets.
"""

from __future__ import annotations

import argparse
import subprocess
import sysconfig
import time
import types
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from daemon.core import secret_rules

ROOT = Path(__file__).resolve().parents[1]
Rule = Callable[[Path, bytes], "str | None"]
"""(path, contents) -> the rule that flags the file ("name", or a content rule), or None."""


def _text(data: bytes) -> bool:
    if len(data) > 1_000_000 or b"\x00" in data[:8192]:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _rules(module: types.ModuleType) -> Rule:
    name: Callable[[str], bool] = module.secret_name
    content: Callable[[bytes], str | None] = module.secret_content
    return lambda path, data: "name" if name(path.name) else content(data)


def _rules_at(revision: str) -> Rule:
    """The rules of ``daemon/core/secret_rules.py`` at ``revision`` (a pure module: it imports nothing of ided)."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{revision}:daemon/core/secret_rules.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType(f"secret_rules_at_{revision}")
    exec(compile(source, f"{revision}:daemon/core/secret_rules.py", "exec"), module.__dict__)
    return _rules(module)


def _scan(rule: Rule, files: list[Path], data: list[bytes]) -> tuple[list[tuple[Path, str]], float]:
    flagged: list[tuple[Path, str]] = []
    started = time.perf_counter()
    for path, content in zip(files, data, strict=True):
        hit = rule(path, content)
        if hit is not None:
            flagged.append((path, hit))
    return flagged, time.perf_counter() - started


def _show(flagged: list[tuple[Path, str]], root: Path, *, quiet: bool) -> None:
    for rule, count in sorted(Counter(rule for _, rule in flagged).items()):
        print(f"  {rule:28} {count}")
    if not quiet:
        for path, rule in flagged:
            print(f"  {rule:28} {path.relative_to(root)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", nargs="?", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    parser.add_argument("--glob", default="**/*.py")
    parser.add_argument("--every", type=int, default=1, help="take every N-th file (a sample)")
    parser.add_argument("--text", action="store_true", help="every text file the index would read (any name)")
    parser.add_argument("--quiet", action="store_true", help="counts per rule, not every file flagged")
    parser.add_argument("--before", metavar="REV", help="also the rules at this git revision, in the same run")
    args = parser.parse_args()
    root: Path = args.root
    pattern = "**/*" if args.text else args.glob
    files = sorted(p for p in root.glob(pattern) if p.is_file() and not p.is_symlink())[:: args.every]
    data = [p.read_bytes() for p in files]
    if args.text:
        kept = [(p, d) for p, d in zip(files, data, strict=True) if _text(d)]
        files, data = [p for p, _ in kept], [d for _, d in kept]
    megabytes = sum(map(len, data)) / 1e6
    print(f"root      {root}")
    print(f"files     {len(files):,} ({megabytes:.1f} MB)")
    runs: list[tuple[str, list[tuple[Path, str]]]] = []
    if args.before is not None:
        before, seconds = _scan(_rules_at(args.before), files, data)
        print(f"flagged   {len(before)} by the rules at {args.before} ({megabytes / seconds:.1f} MB/s)")
        _show(before, root, quiet=True)
        runs.append((args.before, before))
    flagged, seconds = _scan(_rules(secret_rules), files, data)
    print(f"flagged   {len(flagged)}" + (" by the rules now" if runs else ""))
    _show(flagged, root, quiet=args.quiet or bool(runs))
    per_file_ms = seconds / max(1, len(files)) * 1e3
    print(f"seconds   {seconds:.2f}  ({megabytes / seconds:.1f} MB/s, {per_file_ms:.2f} ms/file)")
    for revision, before in runs:
        was, now = {p for p, _ in before}, {p for p, _ in flagged}
        print(f"flagged now, not at {revision}: {len(now - was)}")
        _show([(p, r) for p, r in flagged if p not in was], root, quiet=False)
        print(f"flagged at {revision}, not now: {len(was - now)}")
        _show([(p, r) for p, r in before if p not in now], root, quiet=False)


if __name__ == "__main__":
    main()
