"""The Collins (2002) NER table's feature families chosen by cross-validation over ned.train's
jackknifed lists, instead of on testa alone.

On testa (2,895 sentences) the voted perceptron's F1 at one setting spreads over shuffle seeds with a
standard deviation of 0.45 (``collins2002_ner_dev.md``), as large as any feature change measured there.
ned.train's reranking lists are already jackknifed in 5 folds of contiguous sentences: the lists of
fold f come from a MEMM that did not see fold f, as testa's come from one that did not see testa. So a
reranker trained on the lists of 4 folds and scored on the fifth, over the 5 folds, is scored on 15,806
held-out sentences.

- Score of a feature set: the averaged perceptron (the table's default reranker) at every setting of
  ``GRID`` (the table's ``AVERAGED_GRID`` up to 10 epochs), each trained 5 times (one per held-out
  fold) with the shuffle seeds ``SEEDS``; the F1 of the 5 held-out folds' choices pooled over ned.train; the best setting's mean
  over the seeds.
- Search: from the set testa chose among the table's named sets (``START``), every family of
  ``structperc.rerank.context`` switched on or off in turn; the best switch is taken when it gains at least ``GAIN`` F1, and the search goes
  on from there, for at most ``ROUNDS`` rounds.
- The training lists' features are made as the table makes them: gazetteers and ``corpus`` counts
  jackknifed by the same folds, so a held-out fold's candidates see no gold of their own fold. The
  other folds' gazetteers do hold its gold; a reranker trained on them learns how far to trust a
  gazetteer, never a held-out sentence's own label.

- ``--voted``: on the chosen set, the voted perceptron's setting chosen the same way, over the table's
  ``VOTED_GRID`` and ``VOTED_SEEDS``; the table's voted row uses it. On testa, with this set, the grid's
  means over the seeds spread over 0.93 F1 and its five best settings lay within 0.1 of each other
  (``collins2002_ner.json``, commit 480388f).

testa and testb are not read. Writes experiments/results/collins2002_ner_cv.md and .json, whose chosen
set (and voted setting) the table (``collins2002_ner.py``) reranks with. Run: ``make reproduce-ner-cv``.
"""
import json
import multiprocessing
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import collins2002_ner as table  # noqa: E402
from family_search import best_of, cross_validated, ordered, search, search_lines  # noqa: E402

from structperc.nbest.jackknife import fold_split  # noqa: E402
from structperc.rerank.pipeline import DualReranker, Reranker  # noqa: E402

SEEDS = (0, 1)
# the table's grid up to 10 epochs: 19 of its 79 epochs per score weight, for 31 sets of 5 folds
GRID = [params for params in table.AVERAGED_GRID if params["epochs"] <= 10]
GAIN = 0.05  # F1 a switch must gain over the current set to be taken
ROUNDS = 3
RESULT = "collins2002_ner_cv"
# where the search starts: the set that testa chose among the table's named sets before this script
# (collins2002_ner.md at commit fa8f877)
START = "collins+words+context+corpus+around"

INPUTS = {}  # what the forked workers read: the train lists, their context, the clusters, the folds


def log(message):
    print(message, file=sys.stderr, flush=True)


def score_families(families):
    """(families, {setting: [F1 by seed]}, number of feature ids, seconds) of one feature set (a
    worker's task)."""
    t = time.perf_counter()
    lists, context, clusters = INPUTS["lists"], INPUTS["context"], INPUTS["clusters"]
    data, _, _, vocabulary = table.featurized({"train": lists["train"]}, list(families), context, clusters)
    fold_of_group = INPUTS["fold_of"][data.qids - 1]
    grid = {json.dumps(params): [cross_validated(data, vocabulary, lists["train"], fold_of_group,
                                                 lambda: Reranker(seed=seed, **params))
                                 for seed in SEEDS]
            for params in GRID}
    return families, grid, len(vocabulary), time.perf_counter() - t


def score_voted(task):
    """(setting, seed, F1) of the voted perceptron at ``task`` = (setting, seed) on the chosen set (a
    worker's task)."""
    params, seed = task
    f1 = cross_validated(INPUTS["data"], INPUTS["vocabulary"], INPUTS["lists"]["train"], INPUTS["fold_of_group"],
                         lambda: DualReranker(kernel="linear", vote="voted", seed=seed, **params))
    return params, seed, f1


def read_inputs():
    parts, lists = table.build_lists(held=())
    INPUTS.update(lists=lists, context=table.contexts(parts, lists), clusters=table.train_clusters(),
                  fold_of=fold_split(parts["train"].n_sentences, table.FOLDS, table.SEED, table.BLOCKS))
    return lists


def write(result):
    (table.RESULTS / f"{RESULT}.json").write_text(json.dumps(result, indent=1) + "\n")
    (table.RESULTS / f"{RESULT}.md").write_text(render(result))
    print(render(result))


def choose_voted():
    """The voted perceptron's setting on the chosen set: every setting of the table's ``VOTED_GRID``
    with each of its ``VOTED_SEEDS``, cross-validated; the best mean over the seeds, added to the
    results of the search."""
    start = time.perf_counter()
    result = json.loads((table.RESULTS / f"{RESULT}.json").read_text())
    lists = read_inputs()
    data, _, _, vocabulary = table.featurized({"train": lists["train"]}, result["chosen"], INPUTS["context"],
                                              INPUTS["clusters"])
    INPUTS.update(data=data, vocabulary=vocabulary, fold_of_group=INPUTS["fold_of"][data.qids - 1])
    tasks = [(params, seed) for params in table.VOTED_GRID for seed in table.VOTED_SEEDS]
    by_seed = {}
    with multiprocessing.get_context("fork").Pool(os.cpu_count() or 1) as pool:
        for params, seed, f1 in pool.imap_unordered(score_voted, tasks):
            by_seed.setdefault(json.dumps(params), {})[seed] = f1
            log(f"voted {params} seed {seed}: {f1:.2f}")
    grid = {json.dumps(params): [by_seed[json.dumps(params)][seed] for seed in table.VOTED_SEEDS]
            for params in table.VOTED_GRID}
    key, _ = best_of(grid)
    result["voted"] = {"grid": grid, "seeds": list(table.VOTED_SEEDS), "chosen": json.loads(key),
                       "wall_seconds": time.perf_counter() - start}
    write(result)


def main():
    start = time.perf_counter()
    start_set = ordered(table.CONTEXT_SETS[START])
    lists = read_inputs()
    current, rounds, scored = search(start_set, score_families, ROUNDS, GAIN, log)
    result = {"start": start_set, "chosen": current, "rounds": rounds, "seeds": list(SEEDS), "gain": GAIN,
              "folds": table.FOLDS, "one_best": lists["train"].summary()["one_best"],
              "oracle": lists["train"].summary()["oracle"],
              "sets": [{"families": list(s), **v} for s, v in scored.items()],
              "wall_seconds": time.perf_counter() - start, "machine": platform.machine()}
    write(result)


def render(result):
    start = tuple(result["start"])
    lines = [
        "# The Collins (2002) NER table's feature families, chosen by cross-validation on ned.train",
        "",
        f"Produced by `experiments/collins2002_ner_cv.py` (`make reproduce-ner-cv`) on {result['machine']}; "
        f"wall time {result['wall_seconds'] / 60:.1f} min. testa and testb are not read.",
        "",
        f"ned.train's {result['folds']} jackknife folds (contiguous sentences): for each fold, the averaged "
        "perceptron trained on the other folds' lists chooses among its candidates; F1 of the held-out "
        f"choices pooled over ned.train (the lists' 1-best {result['one_best']:.2f}, oracle "
        f"{result['oracle']:.2f}). A set's score is its best setting of the table's grid of epochs and "
        f"score weights up to 10 epochs, as the mean over the shuffle seeds {', '.join(map(str, result['seeds']))}. "
        f"The search starts from the set testa chose among the table's named sets ({', '.join(start)}), "
        "switches each "
        f"family on or off in turn, and takes the best switch when it gains at least {result['gain']} F1.",
        "",
        *search_lines(result, "the table's set"),
    ]
    voted = result.get("voted")
    if voted:
        lines += [
            "## The voted perceptron's setting",
            "",
            f"On the chosen set, the voted perceptron (`--voted`, {voted['wall_seconds'] / 60:.1f} min) at every "
            "setting of the table's grid of epochs and score weights, cross-validated over the same folds with the "
            f"shuffle seeds {', '.join(map(str, voted['seeds']))}; the table's voted row uses the best mean.",
            "",
            "| setting | F1 by seed | mean |",
            "|---|---|---|",
        ]
        for key, f1s in sorted(voted["grid"].items(), key=lambda item: -np.mean(item[1])):
            lines.append(f"| {key} | {' / '.join(f'{v:.2f}' for v in f1s)} | {np.mean(f1s):.2f} |")
        lines += ["", f"Chosen: {json.dumps(voted['chosen'])}.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    if "--render" in sys.argv:
        (table.RESULTS / f"{RESULT}.md").write_text(render(json.loads((table.RESULTS / f"{RESULT}.json").read_text())))
    elif "--voted" in sys.argv:
        choose_voted()
    else:
        main()
