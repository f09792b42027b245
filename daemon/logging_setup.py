"""Logging handlers: stderr or a file, never stdout (stdout carries protocols)."""

from __future__ import annotations

import logging
import sys

from daemon.config import LoggingConfig

__all__ = ["configure_logging"]

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
