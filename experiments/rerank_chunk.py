"""Reranking the `chunk` preset's k-best lists on CoNLL-2000 (all chunk types), the second row of issue 41.

Base: ``Tagger(templates="chunk")`` (every other option its default) trained on train.txt. Training
lists: 5-fold jackknifed 20-best lists of train.txt (contiguous folds, as ``rerank fit`` makes them).
CoNLL-2000 marks no documents, so the families are those of ``structperc.rerank.context`` without
``document``: the chunk features, each chunk with its neighbours (``phrase``), the jackknifed phrase
gazetteer, label trigrams and phrase counts, the rank. Every choice (families, learner and settings,
k) is made on a held-out part of the training lists, the last tenth of the sentences (the reranker
then trains on the other nine tenths); the chosen reranker is retrained on all of them and test.txt
is scored once, with the paired bootstrap against the base's 1-best. The ``cluster`` family (Brown path
prefixes of each chunk's words and of the words around it) is tried on top of the best of those sets,
with the clusters of ``make clusters`` (unlabeled_en and the EWT training words; ``CLUSTER_PATHS``), and so
is the ``posterior`` family (each chunk's probability in its list, the softmax temperature fitted on the
lists the reranker learns from).

Writes experiments/results/rerank_chunk.md and .json. Run: ``make rerank-chunk``.
"""
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from nbest_cache import cached_lists  # noqa: E402
from rerank_ner import AVERAGED_GRID, LOSS_GRID, choice_of, find_corpus, log, make_learner, write_results  # noqa: E402,E501

from structperc.estimator.tagger import Tagger  # noqa: E402
from structperc.evaluate.metrics import evaluate_labels, paired_bootstrap, split  # noqa: E402
from structperc.nbest.jackknife import fold_split  # noqa: E402
from structperc.nbest.lists import jackknife_nbest, nbest_corpus  # noqa: E402
from structperc.readers import read_corpus  # noqa: E402
from structperc.rerank.clusters import ClusterPaths  # noqa: E402
from structperc.rerank.context import (Gazetteer, ListContext, document_ids, featurize_in_context,  # noqa: E402
                                       jackknifed_gazetteers, posterior_temperature)

NAME = "rerank_chunk"
K_MAX = 20
KS = (5, 10, 20)
FOLDS = 5
SEED = 0
BASE = {"templates": "chunk"}
TARGET_GAIN = 0.5
FAMILIES = ("chunk", "phrase", "gazetteer", "sequence", "rank")
HELD_OUT = 0.1
ROOT = Path(__file__).resolve().parent.parent
CLUSTER_PATHS = Path(os.environ.get("CLUSTER_PATHS", ROOT / "corpora" / "clusters" / "paths.txt"))


def corpus_dir():
    return find_corpus("conll2000", ["train.txt", "test.txt"], "CoNLL-2000")


def main():
    start = time.perf_counter()
    if not CLUSTER_PATHS.is_file():
        sys.exit(f"{CLUSTER_PATHS}: no cluster paths; run `make clusters` (or give CLUSTER_PATHS)")
    clusters = ClusterPaths.read(CLUSTER_PATHS)
    folder = corpus_dir()
    columns = ["word", "pos", "chunk"]
    train = read_corpus(folder / "train.txt", columns=columns, label="chunk")
    test = read_corpus(folder / "test.txt", columns=columns, label="chunk")
    settings = {"base": BASE, "k": K_MAX}
    box = {}

    def base():
        if "model" not in box:
            box["model"] = Tagger(**BASE).fit(train)
        return box["model"]

    test_lists = cached_lists("rerank-chunk-test", settings, test, lambda: nbest_corpus(base(), test, K_MAX), log)
    train_lists = cached_lists("rerank-chunk-train", {**settings, "folds": FOLDS, "blocks": True, "seed": SEED}, train,
                               lambda: jackknife_nbest(train, Tagger(**BASE).get_params(), folds=FOLDS, k=K_MAX,
                                                       seed=SEED, blocks=True), log)
    fold_of = fold_split(train.n_sentences, FOLDS, SEED, blocks=True)
    gazetteers = jackknifed_gazetteers(train, fold_of)
    cut = int(round(train.n_sentences * (1 - HELD_OUT)))
    fit_part, held_part = np.arange(cut), np.arange(cut, train.n_sentences)

    def lists_at(k):
        full = train_lists.truncate(k) if k < K_MAX else train_lists
        context = ListContext(full, document_ids(train), gazetteers, fold_of)
        return full, context

    def featurized(k, families, final=False):
        """(train RankingData, dev or test RankingData, the dev or test NBestList, vocabulary)."""
        full, context = lists_at(k)
        if final:
            t = posterior_temperature(full, families)
            data, vocabulary = featurize_in_context(full, families, context, {}, grow=True, clusters=clusters,
                                                    temperature=t)
            nb = test_lists.truncate(k) if k < K_MAX else test_lists
            test_context = ListContext(nb, document_ids(test), [Gazetteer.from_corpus(train)],
                                       np.zeros(test.n_sentences, dtype=np.int64))
            return (data, featurize_in_context(nb, families, test_context, vocabulary, clusters=clusters,
                                               temperature=t)[0], nb, vocabulary)
        data, vocabulary = featurize_in_context(full, families, context, {}, grow=True, clusters=clusters,
                                                temperature=posterior_temperature(full.take(fit_part), families))
        groups_of = data.qids - 1  # one group per sentence with candidates
        fit = data.take_groups(np.flatnonzero(groups_of < cut))
        held = data.take_groups(np.flatnonzero(groups_of >= cut))
        held.qids = held.qids - cut
        return fit, held, full.take(held_part), vocabulary

    def grid(k, families, grid_settings, cached=None):
        fit, held, nb, vocabulary = cached or featurized(k, families)
        out = {}
        for params in grid_settings:
            model = make_learner(params).fit_ranking(fit, vocabulary)
            out[json.dumps(params)] = nb.corpus_score(choice_of(nb, held, model.choose(held)))
        return out, (fit, held, nb, vocabulary)

    held_nb = train_lists.take(held_part)
    base_dev = held_nb.corpus_score(held_nb.first_choice())
    log(f"held-out train: base {base_dev:.2f}, oracle {held_nb.corpus_score(held_nb.oracle_choice()):.2f}; "
        f"fit part {len(fit_part)} sentences")

    family_sets = {"all": list(FAMILIES)}
    family_sets.update({f"all - {f}": [g for g in FAMILIES if g != f] for f in FAMILIES})
    family_dev, family_grids, kept = {}, {}, {}  # kept: the featurized data of the best set so far

    def try_set(name, families):
        family_sets[name] = families
        family_grids[name], data = grid(K_MAX, families, AVERAGED_GRID)
        family_dev[name] = max(family_grids[name].values())
        if family_dev[name] >= max(family_dev.values()):  # keep the best set's data only
            kept.clear()
            kept[name] = data
        log(f"{name}: best held-out {family_dev[name]:.2f}")

    for name, families in list(family_sets.items()):
        try_set(name, families)
    best_set = max(family_dev, key=family_dev.get)
    try_set(f"{best_set} + cluster", family_sets[best_set] + ["cluster"])
    try_set(f"{best_set} + posterior", family_sets[best_set] + ["posterior"])
    chosen_set = max(family_dev, key=family_dev.get)
    families = family_sets[chosen_set]
    loss_scores, _ = grid(K_MAX, families, LOSS_GRID, kept[chosen_set])
    kept.clear()
    learner_dev = {"averaged perceptron": family_grids[chosen_set], "loss (MIRA / scaled perceptron)": loss_scores}
    candidates = {key: f1 for scores in learner_dev.values() for key, f1 in scores.items()}
    learner = json.loads(max(candidates, key=candidates.get))
    log(f"learner: {learner} held-out {candidates[json.dumps(learner)]:.2f}")
    k_dev = {}
    for k in KS:
        scores, _ = grid(k, families, [learner])
        k_dev[k] = scores[json.dumps(learner)]
        log(f"k={k}: held-out {k_dev[k]:.2f}")
    k = max(KS, key=lambda x: (k_dev[x], -x))

    data, test_data, nb, vocabulary = featurized(k, families, final=True)
    model = make_learner(learner).fit_ranking(data, vocabulary)
    o = test.sentence_offsets
    gold = test.columns["chunk"]
    base_labels = nb.selected_labels(nb.first_choice())
    reranked_labels = nb.selected_labels(choice_of(nb, test_data, model.choose(test_data)))
    base_eval = evaluate_labels(gold, base_labels, o, True)
    reranked_eval = evaluate_labels(gold, reranked_labels, o, True)
    boot = paired_bootstrap(split(gold, o), split(reranked_labels, o), split(base_labels, o), samples=10000, seed=SEED)
    result = {
        "task": "CoNLL-2000, all chunk types, test.txt", "base": BASE,
        "rows": {"base": {key: base_eval[key] for key in ("precision", "recall", "f1")},
                 "reranked": {key: reranked_eval[key] for key in ("precision", "recall", "f1")}},
        "oracle": nb.corpus_score(nb.oracle_choice()), "p_value": boot["p_value"], "target_gain": TARGET_GAIN,
        "chosen": {"families": families, "family_set": chosen_set, "learner": learner, "k": k},
        "dev": {"base": base_dev, "families": family_dev, "learners": learner_dev,
                "k": {str(key): v for key, v in k_dev.items()}},
        "lists": {"train": train_lists.summary(), "test": test_lists.summary()},
        "clusters": f"Brown paths of `make clusters` ({len(clusters.paths):,} words)",
        "n_features": len(vocabulary), "folds": FOLDS, "seed": SEED, "held_out": HELD_OUT,
        "wall_seconds": time.perf_counter() - start, "machine": platform.machine(),
    }
    write_results(NAME, result, render)


def render(r):
    rows, chosen, dev = r["rows"], r["chosen"], r["dev"]
    delta = rows["reranked"]["f1"] - rows["base"]["f1"]
    met = delta >= r["target_gain"] and r["p_value"] < 0.05
    lines = [
        "# Reranking the `chunk` preset on CoNLL-2000",
        "",
        f"Produced by `experiments/rerank_chunk.py` (`make rerank-chunk`) on {r['machine']}; wall time "
        f"{r['wall_seconds'] / 60:.1f} min (n-best lists cached in experiments/cache/ when present).",
        "",
        f"Base: `Tagger(templates=\"chunk\")` trained on train.txt. Training lists: {r['folds']}-fold jackknifed "
        f"{K_MAX}-best lists of train.txt (contiguous folds; 1-best F1 {r['lists']['train']['one_best']:.2f}, oracle "
        f"{r['lists']['train']['oracle']:.2f}). Every choice below was made on the last {r['held_out']:.0%} of the "
        f"training sentences (base {dev['base']:.2f} there), the reranker trained on the rest; test.txt was scored "
        "once.",
        "",
        "| task | base F1 | reranked F1 | delta | oracle of the lists | p (paired bootstrap) | target |",
        "|---|---|---|---|---|---|---|",
        f"| {r['task']} | {rows['base']['f1']:.2f} | {rows['reranked']['f1']:.2f} | {delta:+.2f} | "
        f"{r['oracle']:.2f} | {r['p_value']:.4f} | >= +{r['target_gain']} ({'met' if met else 'not met'}) |",
        "",
        f"Clusters of the `cluster` family: {r.get('clusters', 'none')}.",
        "",
        f"Chosen on the held-out part: families {', '.join(chosen['families'])}; learner "
        f"{json.dumps(chosen['learner'])}; k = {chosen['k']}; {r['n_features']:,} features.",
        "",
        "| families | held-out F1 (best of the averaged perceptron's grid) |",
        "|---|---|",
        *[f"| {name} | {f1:.2f} |" for name, f1 in dev["families"].items()],
        "",
        "| learner | settings | held-out F1 |",
        "|---|---|---|",
        *[f"| {name} | `{key}` | {f1:.2f} |" for name, scores in dev["learners"].items() for key, f1 in scores.items()],
        "",
        "Held-out F1 by k: " + ", ".join(f"k = {k}: {f1:.2f}" for k, f1 in dev["k"].items()) + ".",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
