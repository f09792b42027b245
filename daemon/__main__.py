"""Composition root: ``python -m daemon`` / ``ided``."""

from __future__ import annotations

from daemon.cli.app import app

__all__ = ["main"]


def main() -> None:
    app()


if __name__ == "__main__":
    main()
