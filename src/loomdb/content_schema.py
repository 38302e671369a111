"""The content block schema (seed 002) as pydantic types: what `validate_blocks`
checks. Kept apart from `loomdb.content` so pydantic loads only when content is
validated, not for every command."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, Union

from pydantic import ConfigDict, Field, TypeAdapter, with_config
from typing_extensions import TypedDict

BlobRef = Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]

_strict = ConfigDict(extra="forbid", strict=True)


@with_config(_strict)
class TextBlock(TypedDict):
    type: Literal["text"]
    text: str


@with_config(_strict)
class ImageBlock(TypedDict):
    type: Literal["image"]
    ref: BlobRef
    mime_type: str
    width: NotRequired[int]
    height: NotRequired[int]
    alt_text: NotRequired[str]
    thumbnail_ref: NotRequired[BlobRef]


@with_config(_strict)
class AudioBlock(TypedDict):
    type: Literal["audio"]
    ref: BlobRef
    mime_type: str
    duration_ms: NotRequired[int]
    transcript: NotRequired[str]


@with_config(_strict)
class DocumentBlock(TypedDict):
    type: Literal["document"]
    ref: BlobRef
    mime_type: str
    name: NotRequired[str]
    text: NotRequired[str]


@with_config(_strict)
class ToolUseBlock(TypedDict):
    type: Literal["tool_use"]
    id: NotRequired[str]  # generated when missing (see loomdb.tool_ids)
    name: str
    input: dict[str, Any]


ResultPart = Annotated[Union[TextBlock, ImageBlock, DocumentBlock], Field(discriminator="type")]


@with_config(_strict)
class ToolResultBlock(TypedDict):
    type: Literal["tool_result"]
    name: NotRequired[str]  # the tool that was called (seed 002)
    content: list[ResultPart]
    tool_use_id: NotRequired[str]  # the call it answers; one of the two is required
    is_error: NotRequired[bool]


@with_config(_strict)
class ThinkingBlock(TypedDict):
    type: Literal["thinking"]
    thinking: str
    signature: NotRequired[str]


@with_config(_strict)
class PieceBlock(TypedDict):
    """A named prompt piece, expanded when the context is assembled (`loomdb.pieces`):
    `piece` is its name, `id` the piece it was found to be when written, `version` a
    content id when pinned (`NAME@hash`); both filled in at write time."""

    type: Literal["piece"]
    piece: Annotated[str, Field(min_length=1, max_length=1000)]
    id: NotRequired[Annotated[str, Field(max_length=100)]]
    version: NotRequired[BlobRef]


Block = Annotated[
    Union[
        TextBlock,
        ImageBlock,
        AudioBlock,
        DocumentBlock,
        ToolUseBlock,
        ToolResultBlock,
        ThinkingBlock,
        PieceBlock,
    ],
    Field(discriminator="type"),
]


def adapter() -> TypeAdapter[list[Any]]:
    """A validator for a list of blocks (schema construction is the costly part)."""
    return TypeAdapter(list[Block])
