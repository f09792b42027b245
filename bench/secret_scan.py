"""The secret content check on a real tree: files flagged (all false positives on published packages) and speed.

    python bench/secret_scan.py [ROOT] [--glob '**/*.py'] [--every N] [--text] [--quiet]

ROOT defaults to the venv's site-packages: published libraries hold no credentials, so every file
flagged there is a false positive. Prints files, MB, files flagged (with their rule; ``--quiet``: the
counts per rule only), seconds and MB/s of :func:`daemon.core.secret_rules.secret_content` plus the
name rule. ``--text``: every file the index would read (any name, at most 1 MB, no NUL byte in its
first 8 KiB, UTF-8), not only ``--glob``. See docs/indexing.md#secrets.
"""

from __future__ import annotations

import argparse
import sysconfig
import time
from collections import Counter
from pathlib import Path

from daemon.core.secret_rules import secret_content, secret_name


def _text(data: bytes) -> bool:
    if len(data) > 1_000_000 or b"\x00" in data[:8192]:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", nargs="?", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    parser.add_argument("--glob", default="**/*.py")
    parser.add_argument("--every", type=int, default=1, help="take every N-th file (a sample)")
    parser.add_argument("--text", action="store_true", help="every text file the index would read (any name)")
    parser.add_argument("--quiet", action="store_true", help="counts per rule, not every file flagged")
    args = parser.parse_args()
    pattern = "**/*" if args.text else args.glob
    files = sorted(p for p in args.root.glob(pattern) if p.is_file() and not p.is_symlink())[:: args.every]
    data = [p.read_bytes() for p in files]
    if args.text:
        kept = [(p, d) for p, d in zip(files, data, strict=True) if _text(d)]
        files, data = [p for p, _ in kept], [d for _, d in kept]
    flagged: list[tuple[Path, str]] = []
    started = time.perf_counter()
    for path, content in zip(files, data, strict=True):
        rule = "name" if secret_name(path.name) else secret_content(content)
        if rule is not None:
            flagged.append((path, rule))
    seconds = time.perf_counter() - started
    megabytes = sum(map(len, data)) / 1e6
    print(f"root      {args.root}")
    print(f"files     {len(files):,} ({megabytes:.1f} MB)")
    print(f"flagged   {len(flagged)}")
    for rule, count in sorted(Counter(rule for _, rule in flagged).items()):
        print(f"  {rule:28} {count}")
    if not args.quiet:
        for path, rule in flagged:
            print(f"  {rule:28} {path.relative_to(args.root)}")
    per_file_ms = seconds / max(1, len(files)) * 1e3
    print(f"seconds   {seconds:.2f}  ({megabytes / seconds:.1f} MB/s, {per_file_ms:.2f} ms/file)")


if __name__ == "__main__":
    main()
