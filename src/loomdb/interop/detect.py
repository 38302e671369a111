"""Finding an export's format from its structure, and opening it (plain file or zip).

`open_source` looks inside the file rather than trusting its name: the first record
of an array or of a JSONL file, or the top-level keys of a single object (read as a
stream and stopped as soon as one key decides). Export zips are opened at their
`conversations.json` (ChatGPT and Claude) or their only JSON/JSONL file. A folder is a
Claude Code project folder (or the projects folder holding them) when its session
files' lines say so.
`parse_file` ties it together: path in, conversations (or ParseErrors) out.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..jsondepth import TooDeep
from ..limits import DEFAULT, Limits
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
from .events import walk
from .files import BESIDE, Beside
from .model import ImportedConversation, ParseError
from .stream import Input, first_char, json_stream, loads
from .values import read_values

Parser = Callable[[Input], Iterator[ImportedConversation | ParseError]]

FORMATS: dict[str, Parser] = {
    chatgpt.FORMAT: chatgpt.parse,
    claude.FORMAT: claude.parse,
    claude_code.FORMAT: claude_code.parse,
    openwebui.FORMAT: openwebui.parse,
    librechat.FORMAT: librechat.parse,
    loom.FORMAT: loom.parse,
    oasst.FORMAT: oasst.parse,
    openai_jsonl.FORMAT: openai_jsonl.parse,
    sharegpt.FORMAT: sharegpt.parse,
    codex.FORMAT: codex.parse,
    pi.FORMAT: pi.parse,
    llm_logs.FORMAT: llm_logs.parse,
    chatbot_ui.FORMAT: chatbot_ui.parse,
}
#: top-level keys that name a format on their own
_DECISIVE = {
    "mapping": chatgpt.FORMAT,
    "chat_messages": claude.FORMAT,
    "chat": openwebui.FORMAT,
    "history": openwebui.FORMAT,
    "conversationId": librechat.FORMAT,
    "root": loom.FORMAT,
    "message_tree_id": oasst.FORMAT,
    "conversations": sharegpt.FORMAT,
    "preferred_output": openai_jsonl.FORMAT,
}


def parse_file(
    path: str | os.PathLike[str], format: str = "auto", *,
    files: Path | Beside | None = BESIDE, limits: Limits = DEFAULT,
) -> Iterator[ImportedConversation | ParseError]:
    """Every conversation of an export file, as ImportedConversation or ParseError.
    `files`: where files it names may be read from (see `loomdb.interop.files`)."""
    if format == "auto":
        fmt, inp = open_source(path, files=files, limits=limits)
    elif format in FORMATS:
        fmt, inp = format, _document(Path(path), files, limits)
    else:
        raise InvalidInput(
            "format", f"unknown format {format!r}; supported: auto, {', '.join(FORMATS)}"
        )
    return FORMATS[fmt](inp)


def open_source(
    path: str | os.PathLike[str], *, files: Path | Beside | None = BESIDE,
    limits: Limits = DEFAULT,
) -> tuple[str, Input]:
    """(format name, the document to parse) for an export file, judged by its content."""
    inp = _document(Path(path), files, limits)
    return detect(inp), inp


def detect(inp: Input) -> str:
    if inp.member is None and inp.path.is_dir():
        return _detect_folder(inp)
    head = inp.peek()
    if head.startswith(llm_logs.MAGIC):
        return llm_logs.FORMAT
    kind = first_char(head)
    if not kind:
        raise InvalidInput(inp.name, "the file is empty")
    if kind == "{":
        agent = _agent_session(inp)
        if agent is not None:
            return agent
    if _is_jsonl(inp, head):
        found = _classify(_first_line(head, inp), jsonl=True)
    elif kind == "[":
        found = _classify(_first_item(inp), jsonl=False)
    elif kind == "{":
        found = _classify(_top_keys(inp), jsonl=False)
    else:
        raise InvalidInput(inp.name, "not JSON or JSONL; " + _supported())
    if found is None:
        raise InvalidInput(inp.name, "unknown export format; " + _supported())
    return found


#: the most read of a file's first value to tell whether it is an agent session
_SESSION_HEAD = 4 * 1024 * 1024


def _agent_session(inp: Input) -> str | None:
    """Codex or pi, judged by a session file's first value (which may span lines)."""
    for _line, value in read_values(inp, max_value=_SESSION_HEAD):
        if codex.looks_like(value):
            return codex.FORMAT
        if pi.looks_like(value):
            return pi.FORMAT
        return None
    return None




def _supported() -> str:
    return "supported formats: " + ", ".join(FORMATS)


def _document(path: Path, files: Path | Beside | None = BESIDE,
              limits: Limits = DEFAULT) -> Input:
    shown = str(path) if len(str(path)) <= 200 else str(path)[:200] + "..."
    try:
        found, folder = path.exists(), path.is_dir()
    except OSError as exc:  # a name too long for the system, a loop of links
        raise InvalidInput(shown, f"cannot be read ({exc.strerror or exc})") from None
    if not found:
        raise InvalidInput(shown, "no such file")
    if folder:
        return Input(path, None, files, limits)  # a folder of session files (see `_detect_folder`)
    if not zipfile.is_zipfile(path):
        return Input(path, None, files, limits)
    try:
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if not n.endswith("/")]
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise InvalidInput(path.name, f"cannot read the zip: {exc}") from None
    exports = sorted((n for n in names if os.path.basename(n) == "conversations.json"), key=len)
    documents = [
        n
        for n in names
        if n.endswith((".json", ".jsonl")) and not os.path.basename(n).startswith(".")
    ]
    if exports:
        return Input(path, exports[0], files, limits)
    if len(documents) == 1:
        return Input(path, documents[0], files, limits)
    raise InvalidInput(
        path.name, "the zip holds no conversations.json (nor a single JSON/JSONL file)"
    )


def _detect_folder(inp: Input) -> str:
    """The format of a folder of session files: a Claude Code project folder (or the
    projects folder holding them), else Codex rollouts or pi sessions, told by the first
    session file whose first value says so."""
    path = inp.path
    if claude_code.is_project_folder(path) or claude_code.is_projects_folder(path):
        return claude_code.FORMAT
    for found_path in codex.session_files(path, "*.jsonl"):
        found = _agent_session(Input(found_path, limits=inp.limits))
        if found is not None:
            return found
    raise InvalidInput(str(path), "is a directory holding no session files it can read; "
                       "give an export file, or a Claude Code project folder, a Codex "
                       "sessions folder or a pi sessions folder")


def _is_jsonl(inp: Input, head: bytes) -> bool:
    if (inp.member or inp.path.name).endswith(".jsonl"):
        return True
    lines = [line for line in head.split(b"\n") if line.strip()]
    if len(lines) < 2 or not lines[1].lstrip().startswith(b"{"):
        return False
    try:
        return isinstance(loads(lines[0], inp.limits), dict)
    except ValueError:
        return False


def _first_line(head: bytes, inp: Input) -> Any:
    for line in head.split(b"\n"):
        if line.strip():
            try:
                return loads(line, inp.limits)
            except TooDeep:
                raise
            except ValueError:
                return None
    return None


def _first_item(inp: Input) -> dict[str, Any] | None:
    """A stand-in for the first item of a top-level array (see `_top_keys`); None when
    it is not an object."""
    return _keys_at(inp, ("item",))


def _top_keys(inp: Input) -> dict[str, Any]:
    """A stand-in for one big object: its top-level keys, with `messages` holding the
    first message's keys. Streamed, and stopped at the first key that decides."""
    return _keys_at(inp, ()) or {}


def _keys_at(inp: Input, at: tuple[str, ...]) -> dict[str, Any] | None:
    """The keys of the object at path `at`, with `messages` holding the first message's
    keys: all `_classify` reads. Nothing is built (any input may come here before its
    format is known: memory stays bounded, see `events`), and reading stops at the
    first key that decides or at the end of that object."""
    target, n = list(at), len(at)
    keys: dict[str, Any] = {}
    first: dict[str, None] = {}
    first_done = started = False
    stream = json_stream()
    with inp.open() as fh:
        try:
            for path, event, value in walk(inp.reader(fh, deep=True)):
                if not started:
                    if len(path) == n and path == target and event != "end_array":
                        if event != "start_map":
                            return None
                        started = True
                    elif event == "end_array" and len(path) < n:
                        return None  # the array ended before an item
                    continue
                inside = len(path) > n and path[:n] == target
                if (inside and len(path) == n + 1 and path[n] == "history"
                        and event in ("start_array", "start_map")):
                    keys["history"] = [] if event == "start_array" else {}  # Chatbot UI: a list
                    break
                if event == "map_key" and len(path) == n + 1 and inside:
                    keys[value] = None
                    if value in _DECISIVE and value != "history":
                        break
                elif (inside and len(path) >= n + 2 and path[n] == "messages"
                      and path[n + 1] == "item" and not first_done):
                    if event == "map_key" and len(path) == n + 3:
                        first[value] = None
                    elif event == "end_map" and len(path) == n + 2:
                        first_done = True
                elif event == "end_map" and len(path) == n:
                    break  # the object ended
        except stream.JSONError as exc:
            reason = str(exc).splitlines()[0]
            raise InvalidInput(inp.name, f"JSON is malformed or truncated ({reason})") from None
    if not started:
        return None
    if "messages" in keys:
        keys["messages"] = [first] if first else []
    return keys


def _classify(record: Any, *, jsonl: bool) -> str | None:
    """The format one record (a conversation, tree or line) belongs to."""
    if not isinstance(record, dict):
        return None
    if jsonl and claude_code.looks_like(record):
        return claude_code.FORMAT
    if chatbot_ui.looks_like(record):
        return chatbot_ui.FORMAT
    for key, fmt in _DECISIVE.items():
        if key in record:
            return fmt
    if "message_id" in record and ("parent_id" in record or "replies" in record):
        return oasst.FORMAT
    messages = record.get("messages")
    first = (
        messages[0]
        if isinstance(messages, list) and messages and isinstance(messages[0], dict)
        else {}
    )
    if "messageId" in first:
        return librechat.FORMAT
    if "parentId" in first or "childrenIds" in first:
        return openwebui.FORMAT
    if "from" in first:
        return sharegpt.FORMAT
    if "role" in first or isinstance(messages, list):
        return openai_jsonl.FORMAT if jsonl else sharegpt.FORMAT
    return None
