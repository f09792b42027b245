"""Logging handlers: stderr or a file, never stdout (stdout carries protocols)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from daemon.config import LoggingConfig, load_config
from daemon.errors import DaemonError

__all__ = ["configure_logging", "log_as_configured"]

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(config: LoggingConfig) -> None:
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
        if isinstance(handler, logging.FileHandler):
            handler.close()  # a log file of an earlier configuration: closed, not left to the collector
    handler: logging.Handler = (
        logging.FileHandler(config.file, encoding="utf-8") if config.file else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter(_FORMAT))
    root.addHandler(handler)
    root.setLevel(config.level)


def log_as_configured(prog: str, workspace: Path | None, overrides: Mapping[str, Any]) -> bool:
    """A front's start: log as the configuration of ``workspace`` (else the current folder) says; False, with
    the reason on stderr as ``prog: ...``, when that configuration does not load."""
    try:
        config = load_config(workspace or Path.cwd(), overrides=overrides)
    except DaemonError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return False
    configure_logging(config.logging)
    return True
