"""The feature families of the reranked ``ner`` preset chosen by cross-validation over ned.train's
jackknifed lists, instead of on testa alone.

``rerank_ner.py`` chooses the families on testa (2,895 sentences) among "all", "all but one" and one
``posterior`` set on top; its best sets lie within 0.4 F1 of each other there, and the reranker's
shuffle seed alone moves its chosen set's testa F1 by 0.9 (``rerank_ner.md``). ned.train's lists of
the ``ner`` preset are jackknifed in 5 folds of contiguous sentences, so a reranker trained on the lists
of 4 folds and scored on the fifth, over the 5 folds, is scored on 15,806 held-out sentences, as
``collins2002_ner_cv.py`` does for the MEMM's lists.

- Score of a feature set: the averaged perceptron at every setting of ``rerank_ner.AVERAGED_GRID``,
  trained once per held-out fold with each shuffle seed of ``SEEDS``; the F1 of the held-out choices
  pooled over ned.train; the best setting's mean over the seeds.
- Search: from the families ``RerankedTagger`` had by default (``START``, chosen on testa), each
  family of ``SWITCHES`` switched on or off in turn; the best switch is taken when it gains at least
  ``GAIN`` F1, and the search goes on from there, for at most ``ROUNDS`` rounds.
- The training lists' features are made as ``rerank_ner.py`` and ``RerankedTagger`` make them:
  gazetteers and ``corpus`` counts jackknifed by the same folds.

testa and testb are not read. Writes experiments/results/rerank_ner_cv.md and .json; ``rerank_ner.py``
fits the chosen set as one model beside the defaults, and scores and times both. Run: ``make rerank-ner-cv``.
"""
import json
import platform
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
import rerank_ner as row  # noqa: E402
from family_search import cross_validated, ordered, search, search_lines  # noqa: E402

from structperc.readers import read_corpus  # noqa: E402
from structperc.rerank.context import FAMILIES  # noqa: E402
from structperc.rerank.learners import Reranker  # noqa: E402

SEEDS = (0, 1)
GAIN = 0.05  # F1 a switch must gain over the current set to be taken
ROUNDS = 3
RESULT = "rerank_ner_cv"
# RerankedTagger's default families before this script (chosen on testa, rerank_ner.md at 98760af)
START = ("posterior", "document", "gazetteer", "sequence", "rank")
# every family but cluster (the ner preset's model has no clusters) and chunk (CoNLL-2000's chunking features)
SWITCHES = tuple(name for name in FAMILIES if name not in ("cluster", "chunk"))

INPUTS = {}  # what the forked workers read: the lists and their contexts


def log(message):
    print(message, file=sys.stderr, flush=True)


def score_families(families):
    """(families, {setting: [F1 by seed]}, number of feature ids, seconds) of one feature set (a
    worker's task)."""
    t = time.perf_counter()
    lists = INPUTS["lists"]
    featurized, vocabulary = lists.featurize(row.K_MAX, list(families), parts=("train",))
    data = featurized["train"]
    nb = lists.at(row.K_MAX)["train"][0]
    fold_of_group = lists.fold_of[data.qids - 1]
    grid = {json.dumps(params): [cross_validated(data, vocabulary, nb, fold_of_group,
                                                 lambda: Reranker(seed=seed, **params))
                                 for seed in SEEDS]
            for params in row.AVERAGED_GRID}
    return families, grid, len(vocabulary), time.perf_counter() - t


def read_inputs():
    folder = row.corpus_dir()
    parts = {p: read_corpus(folder / f"ned.{p}", columns=["word", "pos", "ne"], label="ne") for p in ("train",)}
    # the cached lists of rerank_ner.py; the train lists' key does not depend on testa or testb
    lists = row.Lists(parts, row.build_lists(parts, ("train",)))
    INPUTS.update(lists=lists)
    return lists


def main():
    start = time.perf_counter()
    lists = read_inputs()
    summary = lists.full["train"].summary()
    current, rounds, scored = search(START, score_families, ROUNDS, GAIN, log, SWITCHES)
    result = {"start": ordered(START), "chosen": current, "rounds": rounds, "seeds": list(SEEDS), "gain": GAIN,
              "folds": row.FOLDS, "one_best": summary["one_best"], "oracle": summary["oracle"],
              "sets": [{"families": list(s), **v} for s, v in scored.items()],
              "wall_seconds": time.perf_counter() - start, "machine": platform.machine()}
    row.write_results(RESULT, result, render)


def render(result):
    start = tuple(result["start"])
    lines = [
        "# The reranked `ner` preset's feature families, chosen by cross-validation on ned.train",
        "",
        f"Produced by `experiments/rerank_ner_cv.py` (`make rerank-ner-cv`) on {result['machine']}; "
        f"wall time {result['wall_seconds'] / 60:.1f} min. testa and testb are not read.",
        "",
        f"The `ner` preset's {row.K_MAX}-best lists of ned.train, jackknifed in {result['folds']} folds of "
        "contiguous sentences: for each fold, the averaged perceptron trained on the other folds' lists "
        "chooses among its candidates; F1 of the held-out choices pooled over ned.train (the lists' 1-best "
        f"{result['one_best']:.2f}, oracle {result['oracle']:.2f}). A set's score is its best setting of "
        f"`rerank_ner.py`'s grid of epochs and score weights, as the mean over the shuffle seeds "
        f"{', '.join(map(str, result['seeds']))}. The search starts from the families chosen on testa "
        f"({', '.join(start)}), switches each family on or off in turn, and takes the best switch when it "
        f"gains at least {result['gain']} F1.",
        "",
        *search_lines(result, "the testa set"),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    if "--render" in sys.argv:
        (row.RESULTS / f"{RESULT}.md").write_text(render(json.loads((row.RESULTS / f"{RESULT}.json").read_text())))
    else:
        main()
