"""The formats `loomdb import` reads: one registry, each format a value.

    Format(name, reads, parse, sniff, keys=(), knows=None, sessions=None)

`sniff(head) -> confidence` (0 to 1) judges a file's start (`sniff.Head`); detection
(`detect`) runs every format's sniff and takes the most confident (the first in the
registry on a tie). `keys` are top-level keys that name the format on their own (a
record holding one scores `DECISIVE`); `knows(record)` says a record is one of the
format's own lines (agent session files), so detection passes over leading records
of types no format knows. An agent's format also says how it finds its session files
in a folder (`sessions`), which folder detection and `loomdb watch --format` use.

The command line's help, the docs' format lists (held by a test) and the fuzz tests'
list of importers all come from `REGISTRY`: a new format is one entry here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from . import (
    chatbot_ui,
    chatgpt,
    claude,
    claude_code,
    codex,
    librechat,
    llm_logs,
    loom,
    oasst,
    openai_jsonl,
    openwebui,
    pi,
    sharegpt,
)
from .model import ImportedConversation, ParseError
from .sniff import Head
from .stream import Input

Parser = Callable[[Input], Iterator[ImportedConversation | ParseError]]
#: the confidence of a record that holds one of a format's own `keys`
DECISIVE = 0.8
#: how many of a folder's session files folder detection reads per format
FOLDER_SAMPLE = 20


@dataclass(frozen=True)
class Format:
    """One format loomdb imports (see the module docstring)."""

    name: str
    reads: str  # what it reads, in a few words (help and docs)
    parse: Parser
    sniff: Callable[[Head], float]
    keys: tuple[str, ...] = ()
    knows: Callable[[Any], bool] | None = None
    sessions: Callable[[Path], list[Path]] | None = None

    @property
    def cli(self) -> str:
        """The name on the command line (dashes: `openai-jsonl`)."""
        return self.name.replace("_", "-")

    def confidence(self, head: Head) -> float:
        record = head.record
        if record is not None and any(key in record for key in self.keys):
            return max(DECISIVE, self.sniff(head))
        return self.sniff(head)


def _none(_head: Head) -> float:
    return 0.0


def _claude_code(head: Head) -> float:
    return 1.0 if head.jsonl and claude_code.looks_like(head.value) else 0.0


def _chatbot_ui(head: Head) -> float:
    return 0.9 if chatbot_ui.looks_like(head.record) else 0.0


def _oasst(head: Head) -> float:
    record = head.record or {}
    return 0.6 if "message_id" in record and ("parent_id" in record or "replies" in record) else 0.0


def _librechat(head: Head) -> float:
    return 0.5 if "messageId" in head.first_message() else 0.0


def _openwebui(head: Head) -> float:
    first = head.first_message()
    return 0.4 if "parentId" in first or "childrenIds" in first else 0.0


def _sharegpt(head: Head) -> float:
    if "from" in head.first_message():
        return 0.3
    return 0.1 if not head.jsonl and isinstance((head.record or {}).get("messages"), list) else 0.0


def _openai_jsonl(head: Head) -> float:
    record = head.record or {}
    if head.jsonl and ("role" in head.first_message() or isinstance(record.get("messages"), list)):
        return 0.2
    return 0.0


def _agent(looks_like: Callable[[Any], bool]) -> Callable[[Head], float]:
    return lambda head: 1.0 if looks_like(head.value) else 0.0


def _llm(head: Head) -> float:
    return 1.0 if head.raw.startswith(llm_logs.MAGIC) else 0.0


def _claude_code_sessions(folder: Path) -> list[Path]:
    """A project folder's session files, or those of a projects folder's projects."""
    files = claude_code.session_files(folder)
    return files or [f for p in claude_code.projects(folder) for f in claude_code.session_files(p)]


def _walk(pattern: str) -> Callable[[Path], list[Path]]:
    return lambda folder: list(codex.session_files(folder, pattern))


def _claude_code_parse(inp: Input) -> Iterator[ImportedConversation | ParseError]:
    return claude_code.parse(inp, limits=inp.limits)


REGISTRY: tuple[Format, ...] = (
    Format(chatgpt.FORMAT, "ChatGPT export (conversations.json or its zip)", chatgpt.parse,
           _none, keys=("mapping",)),
    Format(claude.FORMAT, "claude.ai export", claude.parse, _none, keys=("chat_messages",)),
    Format(claude_code.FORMAT, "Claude Code session file, project folder or projects folder",
           _claude_code_parse, _claude_code, knows=claude_code.looks_like,
           sessions=_claude_code_sessions),
    Format(openwebui.FORMAT, "Open WebUI export", openwebui.parse, _openwebui,
           keys=("chat", "history")),
    Format(librechat.FORMAT, "LibreChat export", librechat.parse, _librechat,
           keys=("conversationId",)),
    Format(loom.FORMAT, "socketteer/loom save", loom.parse, _none, keys=("root",)),
    Format(oasst.FORMAT, "OpenAssistant trees or messages", oasst.parse, _oasst,
           keys=("message_tree_id",)),
    Format(sharegpt.FORMAT, "ShareGPT conversations", sharegpt.parse, _sharegpt,
           keys=("conversations",)),
    Format(openai_jsonl.FORMAT, "OpenAI fine-tuning JSONL", openai_jsonl.parse, _openai_jsonl,
           keys=("preferred_output",)),
    Format(chatbot_ui.FORMAT, "Chatbot UI export", chatbot_ui.parse, _chatbot_ui),
    Format(codex.FORMAT, "Codex CLI rollout or sessions folder", codex.parse,
           _agent(codex.looks_like), knows=codex.looks_like, sessions=_walk("rollout-*.jsonl")),
    Format(pi.FORMAT, "pi session file or sessions folder", pi.parse, _agent(pi.looks_like),
           knows=pi.looks_like, sessions=_walk("*.jsonl")),
    Format(llm_logs.FORMAT, "simonw/llm logs.db", llm_logs.parse, _llm),
)
BY_NAME: dict[str, Format] = {f.name: f for f in REGISTRY}
#: format name -> its parser (kept for callers of the earlier mapping)
FORMATS: dict[str, Parser] = {f.name: f.parse for f in REGISTRY}
#: every key that names a format on its own (a streamed read of keys stops at one)
DECISIVE_KEYS = frozenset(key for f in REGISTRY for key in f.keys)
#: formats with session files in folders (coding agents)
AGENTS: tuple[Format, ...] = tuple(f for f in REGISTRY if f.sessions is not None)


def knows(record: Any) -> bool:
    """Is this a record some format knows (a session format's line, or a decisive key)?"""
    if any(f.knows is not None and f.knows(record) for f in REGISTRY):
        return True
    return isinstance(record, dict) and any(key in record for key in DECISIVE_KEYS)


def get(name: str, *, agents_only: bool = False) -> Format:
    """The format of a registry or command-line name (`openai-jsonl`), else InvalidInput."""
    found = BY_NAME.get(name.strip().lower().replace("-", "_"))
    pool = AGENTS if agents_only else REGISTRY
    if found is None or found not in pool:
        raise InvalidInput("--format", f"unknown format {name!r}; supported: "
                           f"{', '.join(['auto', *(f.cli for f in pool)])}")
    return found


def usage(extra: tuple[str, ...] = (), pool: tuple[Format, ...] = REGISTRY) -> str:
    """`auto|chatgpt|...` for a usage line, with `extra` names at the end."""
    return "|".join(["auto", *(f.cli for f in pool), *extra])
