"""The tree map's preview: the first words of a node cut from the head of its stored
content (canonical JSON, cut anywhere) without parsing it, the same as the content's
plain text for any text, however it is escaped or cut."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from loomdb.canonical import canonical
from loomdb.store.nodes import SHAPE_HEAD
from loomdb.treemap import PREVIEW, preview


def expected(text: str) -> str:
    words = " ".join("".join(" " if c < " " or c == "\x7f" else c for c in text).split())
    return words if len(words) <= PREVIEW else words[: PREVIEW - 1].rstrip() + "…"


def prefix_of(got: str, text: str) -> bool:
    """Whether `got` is the start of the text's words (an ellipsis aside)."""
    return expected(text).removesuffix("…").startswith(got.removesuffix("…").rstrip())


@given(st.text())
def test_the_preview_is_the_texts_first_words(text: str) -> None:
    """The words of the text's first few hundred characters (as stored, escapes
    counted): all of them when the text is short."""
    body = canonical([{"type": "text", "text": text}])
    assert preview(body) == preview(body.decode())
    if len(canonical(text)) - 2 <= 3 * PREVIEW:
        assert preview(body) == expected(text)
    else:
        assert prefix_of(preview(body), text)


@given(st.text(min_size=1), st.integers(min_value=12, max_value=SHAPE_HEAD))
def test_a_head_cut_anywhere_gives_a_prefix_of_the_words(text: str, cut: int) -> None:
    """A body cut in the middle of a character or an escape still gives the start of
    the words (never a broken escape or a stray backslash)."""
    body = canonical([{"type": "text", "text": text}])
    got = preview(body[:cut])
    assert prefix_of(got, text)
    assert "\\" not in got or "\\" in text


def test_what_is_not_text_shows_its_kind() -> None:
    assert preview(canonical([{"type": "image", "ref": "sha256:" + "a" * 64,
                               "mime_type": "image/png"}])) == "[image]"
    thinking_first = canonical([{"type": "thinking", "thinking": "hmm", "signature": "s"},
                                {"type": "text", "text": "the answer"}])
    assert preview(thinking_first) == "the answer"
    assert preview(None) == ""
    assert preview(b"") == ""


def test_escapes_and_spaces() -> None:
    assert preview('[{"text":"a\\nb\\t \\"c\\"","type":"text"}]') == 'a b "c"'
    assert preview('[{"text":"ab\\u00') == "ab"
    assert preview('[{"text":"ab\\') == "ab"
    assert preview("é".encode() * 3 + b"\xc3") == ""  # no key found: nothing to show
    assert preview('[{"text":"x' + "y" * 200) == "x" + "y" * (PREVIEW - 2) + "…"
    # the words of the first few hundred stored characters: a long run of escapes or
    # spaces leaves less to show, never anything wrong
    assert preview(canonical([{"type": "text", "text": "\x01" * 100 + "late"}])) == ""
