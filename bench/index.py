"""Index benchmark: see ``index_pass`` for what it prints and how to read it.

    uv run --frozen python bench/index.py --limit 10000 --embed-sample 0

The work is in ``bench/index_pass.py``, imported inside ``main``: an index pass's forkserver
workers re-run the main script's top level, so this one stays as light as ``ided``'s, or every
worker would pay the benchmark's imports (about a second at the start of each pass) and the pass
would look slower than the product is.
"""

from __future__ import annotations


def main() -> None:
    from index_pass import main as run_benchmark

    run_benchmark()


if __name__ == "__main__":
    main()
