"""Collins (2002), "Ranking algorithms for named-entity extraction: boosting and the voted perceptron",
the reranking table, on CoNLL-2002 Dutch.

Base ("Max-Ent"): a first-order MEMM; exact 20-best lists. Training lists for the rerankers come from
jackknifing the training set; the dev (testa) and test (testb) lists from the base model trained on all
of the training set. Reranker features: Collins' candidate-specific entity features (``ENTITY_FEATURES``
in ``structperc.rerank_features``) plus the base model's log-probability relative to the 1-best.
Hyperparameters (epochs, boosting rounds) are chosen on testa; rows are reported on testb with the
paired bootstrap against the Max-Ent row.

Writes experiments/results/collins2002_ner.md and .json. Run: ``make reproduce-ner``
(``--lists-only`` builds the cached n-best lists and stops).
"""
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from nbest_cache import cached_lists  # noqa: E402

from structperc.evaluate import evaluate_labels, paired_bootstrap, split  # noqa: E402
from structperc.nbest import jackknife_nbest, nbest_corpus  # noqa: E402
from structperc.readers import read_corpus  # noqa: E402
from structperc.tagger import Tagger  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "experiments" / "results"
K = 20
FOLDS = 5
SEED = 0
TEMPLATES = (
    [f"w[{o}]" for o in range(-2, 3)] + [f"lower[{o}]" for o in range(-1, 2)]
    + [f"shape[{o}]" for o in range(-1, 2)] + ["shape[-1]|shape[0]", "shape[0]|shape[1]"]
    + [f"prefix{k}[0]" for k in range(1, 5)] + [f"suffix{k}[0]" for k in range(1, 5)]
    + ["w[-1]|w[0]", "w[0]|w[1]", "pos[-1]", "pos[0]", "pos[1]", "has_digit[0]", "has_hyphen[0]", "bias"]
)
BASE = dict(templates=TEMPLATES, trainer="memm", epochs=10, constrain="bio", seed=SEED)
COLLINS = {"maxent": (84.4, 86.3, 85.3, None), "boosting": (87.3, 87.9, 87.6, 15.6),
           "voted": (87.3, 88.6, 87.9, 17.7)}


def corpus_dir():
    for candidate in (ROOT / "corpora" / "conll2002_nl", Path("/work/shared/corpora/conll2002_nl")):
        if all((candidate / f"ned.{part}").is_file() for part in ("train", "testa", "testb")):
            return candidate
    sys.exit("CoNLL-2002 Dutch not found: run `structperc data fetch conll2002_nl` first")


def log(message):
    print(message, file=sys.stderr, flush=True)


def build_lists():
    folder = corpus_dir()
    columns = ["word", "pos", "ne"]
    parts = {p: read_corpus(folder / f"ned.{p}", columns=columns, label="ne") for p in ("train", "testa", "testb")}
    for p, c in parts.items():
        log(f"{p}: {c.n_sentences} sentences / {c.n_tokens} tokens")
    settings = {"base": BASE, "k": K}
    base_box = {}

    def base():
        if "model" not in base_box:
            t = time.perf_counter()
            base_box["model"] = Tagger(**BASE).fit(parts["train"])
            log(f"base MEMM trained in {time.perf_counter() - t:.0f}s")
        return base_box["model"]

    lists = {}
    for p in ("testa", "testb"):
        lists[p] = cached_lists(f"ner-{p}", settings, parts[p], lambda p=p: nbest_corpus(base(), parts[p], K), log)
    lists["train"] = cached_lists(
        "ner-train", {**settings, "folds": FOLDS, "jackknife_seed": SEED}, parts["train"],
        lambda: jackknife_nbest(parts["train"], BASE, folds=FOLDS, k=K, seed=SEED,
                                progress=lambda f, n, s: log(f"  fold {f}/{n}: {s:.0f}s")), log)
    for p, nb in lists.items():
        log(f"{p} lists: {json.dumps(nb.summary())}")
    return parts, lists


def main():
    start = time.perf_counter()
    parts, lists = build_lists()
    if "--lists-only" in sys.argv:
        return
    from collins2002_ner_rows import run_rows  # noqa: E402
    run_rows(parts, lists, start)


if __name__ == "__main__":
    main()
