"""Import parsers: other tools' export files turned into a plain intermediate form.

    parse_file(path, format="auto") -> Iterator[ImportedConversation | ParseError]

Formats: chatgpt, claude, claude_code (Claude Code session files and project folders),
openwebui, librechat, loom (socketteer/loom saves), oasst, openai_jsonl, sharegpt,
chatbot_ui; agent sessions besides Claude Code: codex (Codex CLI rollouts), pi, llm
(simonw/llm's logs.db); each a value of the registry `formats.REGISTRY` (its name,
how its content is told, its parser, an agent's session files). Each parser yields one item per conversation, so a broken
conversation becomes a ParseError while the good ones still come through (a
conversation with no messages is an EmptyConversation, the ParseError the importer
counts as skipped rather than failed); problems with the whole file (not JSON,
truncated, unknown format) raise InvalidInput.
Nothing here writes to a store: that is the importer's job, which maps
`ImportedMessage.source_id` into each node's origin to recognise re-imports.
"""

from __future__ import annotations

from .detect import FORMATS, detect, open_source, parse_file
from .model import (
    Attachment,
    EmptyConversation,
    ImportedConversation,
    ImportedMessage,
    ParseError,
)
from .stream import Input

__all__ = [
    "FORMATS",
    "Attachment",
    "EmptyConversation",
    "ImportedConversation",
    "ImportedMessage",
    "Input",
    "ParseError",
    "detect",
    "open_source",
    "parse_file",
]
