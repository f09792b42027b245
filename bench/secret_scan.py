"""The secret content check on a real tree: files flagged (all false positives on published packages) and speed.

    python bench/secret_scan.py [ROOT] [--glob '**/*.py'] [--every N]

ROOT defaults to the venv's site-packages: published libraries hold no credentials, so every file
flagged there is a false positive. Prints files, MB, files flagged (with their rule), seconds and
MB/s of :func:`daemon.core.secret_rules.secret_content` plus the name rule. See docs/indexing.md#secrets.
"""

from __future__ import annotations

import argparse
import sysconfig
import time
from pathlib import Path

from daemon.core.secret_rules import secret_content, secret_name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", nargs="?", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    parser.add_argument("--glob", default="**/*.py")
    parser.add_argument("--every", type=int, default=1, help="take every N-th file (a sample)")
    args = parser.parse_args()
    files = sorted(p for p in args.root.glob(args.glob) if p.is_file())[:: args.every]
    data = [p.read_bytes() for p in files]
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
    for path, rule in flagged:
        print(f"  {rule:28} {path.relative_to(args.root)}")
    per_file_ms = seconds / max(1, len(files)) * 1e3
    print(f"seconds   {seconds:.2f}  ({megabytes / seconds:.1f} MB/s, {per_file_ms:.2f} ms/file)")


if __name__ == "__main__":
    main()
