"""A prompt's content blocks as the run's request text and attachments.

Text blocks are the request. A ``resource_link`` becomes a ``link`` attachment (a ``file`` one
when it names a workspace file), an embedded text resource a ``file`` attachment with the
client's text (unsaved edits included), or a ``selection`` when its URI ends in a line range
(``#L10-20``, ``#L10:20``, ``#L10``). Images, audio and binary resources are not advertised and
are refused with a message that says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from daemon.core.run_models import Attachment
from daemon.errors import ErrorCode, InvalidToolInput

__all__ = ["PromptBlock", "PromptContent", "read_prompt"]


PromptBlock = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)

_LINES = re.compile(r"^L(\d+)(?:[-:]L?(\d+))?$")


@dataclass(frozen=True, kw_only=True)
class PromptContent:
    text: str
    attachments: tuple[Attachment, ...]


def _workspace_path(uri: str, root: Path) -> tuple[str | None, tuple[int | None, int | None]]:
    """(workspace-relative path or None, (first line, last line)) of a ``file://`` URI."""
    parsed = urlparse(uri)
    lines: tuple[int | None, int | None] = (None, None)
    if match := _LINES.match(parsed.fragment):
        start = int(match.group(1))
        end = int(match.group(2)) if match.group(2) else start
        lines = (max(start, 1), max(end, start, 1))
    if parsed.scheme != "file":
        return None, lines
    path = Path(unquote(parsed.path))
    try:
        return path.resolve().relative_to(root.resolve()).as_posix(), lines
    except ValueError:
        return None, lines


def read_prompt(blocks: Sequence[PromptBlock], root: Path) -> PromptContent:
    """Request text and attachments; ``InvalidToolInput`` for content ided does not take."""
    texts: list[str] = []
    attachments: list[Attachment] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            texts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            path, (start, end) = _workspace_path(block.uri, root)
            attachments.append(
                Attachment(
                    kind="file" if path is not None else "link",
                    uri=block.uri,
                    path=path,
                    start_line=start,
                    end_line=end,
                    mime_type=block.mime_type,
                )
            )
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if not isinstance(resource, TextResourceContents):
                raise InvalidToolInput(
                    f"embedded resource {resource.uri} is binary; ided takes text resources only",
                    code=ErrorCode.INVALID_TOOL_INPUT,
                )
            path, (start, end) = _workspace_path(resource.uri, root)
            attachments.append(
                Attachment(
                    kind="selection" if start is not None else ("file" if path is not None else "text"),
                    uri=resource.uri,
                    path=path,
                    text=resource.text,
                    start_line=start,
                    end_line=end,
                    mime_type=resource.mime_type,
                )
            )
        else:
            raise InvalidToolInput(
                f"{block.type} content is not supported (ided advertises text, resource links and embedded text)",
                code=ErrorCode.INVALID_TOOL_INPUT,
            )
    return PromptContent(text="\n".join(t.strip() for t in texts if t.strip()), attachments=tuple(attachments))
