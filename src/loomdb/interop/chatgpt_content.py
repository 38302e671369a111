"""ChatGPT message content (`content.content_type`) turned into loomdb content blocks.

ChatGPT stores one typed payload per message: text parts, multimodal parts mixing
strings with image/audio asset pointers, code, tool output, browsing results, quotes,
errors, reasoning and the hidden custom-instruction context. Each becomes blocks plus
a few metadata entries (language, url, ...), so nothing the source shows is lost.
Asset pointers become blocks whose `ref` is an attachment key; the bytes come from the
export zip when it holds the file (its name starts with the file id), else stay None.
"""

from __future__ import annotations

import json
import mimetypes
import posixpath
import re
from collections import OrderedDict
from typing import Any

from ..errors import TooLarge
from . import budget
from .model import AttachmentSet, as_str, expect, text_block
from .stream import Input

#: content types that ChatGPT never shows in the conversation
HIDDEN_TYPES = frozenset({"user_editable_context", "model_editable_context"})
_FILE_ID = re.compile(r"^(file[-_][A-Za-z0-9]+)")
_UNKNOWN_MIME = "application/octet-stream"

Blocks = list[dict[str, Any]]
Meta = dict[str, Any]


class AssetIndex:
    """Files of a ChatGPT export zip, found by the file id their names start with.

    Each member is decompressed at most once per import while it fits the cache
    (`limits.blob` bytes of decoded members, least recently used out first): an export
    that points at one file many times reads it once. What is decompressed in all
    (a member pushed out of the cache and pointed at again counts again) is bounded by
    `limits.zip_total`, past which the rest is refused (TooLarge)."""

    def __init__(self, inp: Input) -> None:
        self._inp = inp
        self._by_id: dict[str, str] = {}
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cached = 0
        self.decoded = 0  # bytes decompressed so far (repeats included)
        self.decodes = 0  # member reads so far
        for name in inp.zip_names():
            match = _FILE_ID.match(posixpath.basename(name))
            if match:
                self._by_id.setdefault(match.group(1), name)

    def find(self, file_id: str) -> tuple[str | None, bytes | None]:
        member = self._by_id.get(file_id)
        if member is None:
            return None, None
        return posixpath.basename(member), self._read(member)

    def _read(self, member: str) -> bytes:
        data = self._cache.get(member)
        if data is not None:
            self._cache.move_to_end(member)
            return data
        budget.check()
        limits = self._inp.limits
        if self.decoded >= limits.zip_total:
            raise TooLarge(f"{self._inp.path.name}:{member}",
                           f"the export's files decompressed past the zip_total limit of "
                           f"{limits.zip_total} bytes; nothing more was read")
        data = self._inp.read_zip_member(member)
        self.decodes += 1
        self.decoded += len(data)
        self._cache[member] = data
        self._cached += len(data)
        while self._cached > limits.blob and len(self._cache) > 1:
            _, old = self._cache.popitem(last=False)
            self._cached -= len(old)
        return data


class ContentBuilder:
    """Blocks for one message, adding the files it points at to the conversation's set."""

    def __init__(self, assets: AssetIndex, attachments: AttachmentSet, msg_meta: Meta) -> None:
        self._assets = assets
        self._attachments = attachments
        self._meta = msg_meta
        listed = msg_meta.get("attachments")
        self._known = (
            {a.get("id"): a for a in listed if isinstance(a, dict)}
            if isinstance(listed, list)
            else {}
        )
        self._used: set[str] = set()

    def build(self, content: dict[str, Any], where: str) -> tuple[Blocks, Meta]:
        kind = content.get("content_type", "text")
        meta: Meta = {"content_type": kind}
        handler = _HANDLERS.get(kind)
        blocks = handler(self, content, where, meta) if handler else self._unknown(content, meta)
        return blocks + self._listed_attachments(), meta

    # ------------------------------------------------------------ per content type

    def _text(self, content: dict[str, Any], where: str, meta: Meta) -> Blocks:
        return self._parts(content, where, meta)

    def _parts(self, content: dict[str, Any], where: str, meta: Meta) -> Blocks:
        parts = expect(content.get("parts"), list, f"{where}.parts") or []
        blocks: Blocks = []
        for i, part in enumerate(parts):
            if isinstance(part, str):
                if part:
                    blocks.append(text_block(part))
            elif isinstance(part, dict):
                blocks.extend(self._part(part, f"{where}.parts[{i}]", meta))
            elif part is not None:
                blocks.append(text_block(json.dumps(part)))
        return blocks

    def _part(self, part: dict[str, Any], where: str, meta: Meta) -> Blocks:
        kind = part.get("content_type")
        if kind == "image_asset_pointer":
            return [self._image(part, where)]
        if kind == "audio_asset_pointer":
            return [self._audio(part, where)]
        if kind == "real_time_user_audio_video_asset_pointer" and isinstance(
            part.get("audio_asset_pointer"), dict
        ):
            return [self._audio(part["audio_asset_pointer"], where)]
        if isinstance(part.get("text"), str):
            return [text_block(part["text"])] if part["text"] else []
        meta.setdefault("dropped_parts", []).append(kind or "unknown")
        return []

    def _code(self, content: dict[str, Any], where: str, meta: Meta) -> Blocks:
        code = expect(content.get("text"), str, f"{where}.text") or ""
        language = content.get("language")
        if isinstance(language, str):
            meta["language"] = language
        tag = language if isinstance(language, str) and language != "unknown" else ""
        return [text_block(f"```{tag}\n{code}\n```")]

    def _execution(self, content: dict[str, Any], where: str, meta: Meta) -> Blocks:
        output = expect(content.get("text"), str, f"{where}.text") or ""
        return ([text_block(output)] if output else []) + self._displayed_images()

    def _browsing(self, content: dict[str, Any], where: str, meta: Meta) -> Blocks:
        result = expect(content.get("result"), str, f"{where}.result") or ""
        summary = content.get("summary")
        if isinstance(summary, str) and summary:
            meta["summary"] = summary
        return [text_block(result or (summary if isinstance(summary, str) else ""))]

    def _quote(self, content: dict[str, Any], where: str, meta: Meta) -> Blocks:
        for key in ("url", "domain", "title"):
            if isinstance(content.get(key), str):
                meta[key] = content[key]
        return [text_block(expect(content.get("text"), str, f"{where}.text") or "")]

    def _error(self, content: dict[str, Any], where: str, meta: Meta) -> Blocks:
        name = content.get("name")
        message = expect(content.get("text"), str, f"{where}.text") or ""
        if isinstance(name, str):
            meta["error_name"] = name
            return [text_block(f"{name}: {message}" if message else name)]
        return [text_block(message)]

    def _thoughts(self, content: dict[str, Any], where: str, meta: Meta) -> Blocks:
        thoughts = expect(content.get("thoughts"), list, f"{where}.thoughts") or []
        blocks: Blocks = []
        for thought in thoughts:
            if isinstance(thought, dict):
                pieces = [thought.get("summary"), thought.get("content")]
                text = "\n\n".join(p for p in pieces if isinstance(p, str) and p)
                if text:
                    blocks.append({"type": "thinking", "thinking": text})
        return blocks

    def _recap(self, content: dict[str, Any], where: str, meta: Meta) -> Blocks:
        recap = expect(content.get("content"), str, f"{where}.content") or ""
        return [{"type": "thinking", "thinking": recap}] if recap else []

    def _user_context(self, content: dict[str, Any], where: str, meta: Meta) -> Blocks:
        pieces = [content.get("user_profile"), content.get("user_instructions")]
        return [text_block("\n\n".join(p for p in pieces if isinstance(p, str) and p))]

    def _model_context(self, content: dict[str, Any], where: str, meta: Meta) -> Blocks:
        value = content.get("model_set_context")
        return [text_block(value)] if isinstance(value, str) and value else []

    def _unknown(self, content: dict[str, Any], meta: Meta) -> Blocks:
        for key in ("text", "result", "content"):
            if isinstance(content.get(key), str):
                return [text_block(content[key])]
        if isinstance(content.get("parts"), list):
            return self._parts(content, "content", meta)
        rest = {k: v for k, v in content.items() if k != "content_type"}
        return [text_block(json.dumps(rest, ensure_ascii=False, default=str))] if rest else []

    # ------------------------------------------------------------ files

    def _image(self, part: dict[str, Any], where: str) -> dict[str, Any]:
        key, mime = self._asset(part, where, "image")
        block: dict[str, Any] = {"type": "image", "ref": key, "mime_type": mime}
        for dim in ("width", "height"):
            if (
                isinstance(part.get(dim), int)
                and not isinstance(part.get(dim), bool)
                and part[dim] > 0
            ):
                block[dim] = part[dim]
        prompt = (
            (part.get("metadata") or {}).get("dalle")
            if isinstance(part.get("metadata"), dict)
            else None
        )
        if isinstance(prompt, dict) and isinstance(prompt.get("prompt"), str):
            block["alt_text"] = prompt["prompt"]
        return block

    def _audio(self, part: dict[str, Any], where: str) -> dict[str, Any]:
        fmt = part.get("format")
        default = f"audio/{fmt}" if isinstance(fmt, str) and fmt else _UNKNOWN_MIME
        key, mime = self._asset(part, where, "audio", default)
        return {"type": "audio", "ref": key, "mime_type": mime}

    def _asset(
        self, part: dict[str, Any], where: str, kind: str, default: str = _UNKNOWN_MIME
    ) -> tuple[str, str]:
        pointer = expect(part.get("asset_pointer"), str, f"{where}.asset_pointer", optional=False)
        return self.add_file(pointer.split("://", 1)[-1], default)

    def add_file(self, file_id: str, default_mime: str = _UNKNOWN_MIME) -> tuple[str, str]:
        """Register the file with this id; returns (attachment key, mime type)."""
        self._used.add(file_id)
        listed = self._known.get(file_id) or {}
        member, data = self._assets.find(file_id)
        name = listed.get("name") if isinstance(listed.get("name"), str) else member
        mime = as_str(listed.get("mime_type"))
        mime = mime or (mimetypes.guess_type(member)[0] if member else None) or default_mime
        return self._attachments.add(file_id, data, mime, name), mime

    def _displayed_images(self) -> Blocks:
        """Images a code-interpreter run showed (`aggregate_result.messages[].image_url`)."""
        result = self._meta.get("aggregate_result")
        messages = result.get("messages") if isinstance(result, dict) else None
        blocks: Blocks = []
        for item in messages if isinstance(messages, list) else []:
            url = item.get("image_url") if isinstance(item, dict) else None
            if isinstance(url, str) and "://" in url:
                key, mime = self.add_file(url.split("://", 1)[1], "image/png")
                blocks.append({"type": "image", "ref": key, "mime_type": mime})
        return blocks

    def _listed_attachments(self) -> Blocks:
        """Files attached to the message that no part points at (PDFs, text files...)."""
        blocks: Blocks = []
        for file_id, listed in self._known.items():
            if isinstance(file_id, str) and file_id not in self._used:
                key, mime = self.add_file(file_id)
                block: dict[str, Any] = {
                    "type": "image" if mime.startswith("image/") else "document",
                    "ref": key,
                    "mime_type": mime,
                }
                if block["type"] == "document" and isinstance(listed.get("name"), str):
                    block["name"] = listed["name"]
                blocks.append(block)
        return blocks


_HANDLERS: dict[str, Any] = {
    "text": ContentBuilder._text,
    "multimodal_text": ContentBuilder._parts,
    "code": ContentBuilder._code,
    "execution_output": ContentBuilder._execution,
    "tether_browsing_display": ContentBuilder._browsing,
    "tether_quote": ContentBuilder._quote,
    "system_error": ContentBuilder._error,
    "thoughts": ContentBuilder._thoughts,
    "reasoning_recap": ContentBuilder._recap,
    "user_editable_context": ContentBuilder._user_context,
    "model_editable_context": ContentBuilder._model_context,
}
