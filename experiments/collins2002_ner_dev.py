"""What moves the Collins (2002) row on ned.testa: the learners' spread over shuffle seeds at the
settings the table chose, and feature changes beside the chosen set.

The table (``collins2002_ner.py``) chooses a feature set and each learner's settings on testa and
reports testb. This script reads the settings it chose (experiments/results/collins2002_ner.json, or the
quick table's when the full one has not run), uses the same cached n-best lists, and scores on testa
only; testb is never read.

- Seeds: the averaged and the voted perceptron at their chosen settings, with the per-epoch shuffle
  of the training groups seeded 0 to 5 (the table uses seed 0).
- Features, each a change of the chosen set, scored by the averaged perceptron's grid (best and mean
  over its settings) and the voted perceptron at its chosen setting:
  - ``corpus``: the set with the ``corpus`` family switched (on when the set lacks it, else off): the
    ``document`` counts over the whole file, for a training sentence over its jackknife fold;
  - ``around``: the set with the ``around`` family switched: the word before and the word after each
    entity, with its type (``entity_before1``, ``entity_after1``);
  - ``cluster``: the set with the ``cluster`` family switched: the Brown path prefixes of each entity's
    words and of the words around it (clusters of ned.train's words, as the table makes them);
  - ``posterior``: the set with the ``posterior`` family switched: each entity's probability in its
    list (the MEMM's scores softmaxed at the temperature fitted on the training lists) and the
    candidate's expected merit under them.

Writes experiments/results/collins2002_ner_dev.md and .json. Run: ``make reproduce-ner-dev`` (after
``make reproduce-ner``).
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

from structperc.rerank.pipeline import Reranker  # noqa: E402

SEEDS = range(6)
SWITCHED = ("corpus", "around", "cluster", "posterior")  # families switched on or off beside the chosen set


def log(message):
    print(message, file=sys.stderr, flush=True)


VOTED_INPUTS = {}  # what the forked workers of the voted perceptrons read: variant name -> (data, vocabulary)


def voted_task(task):
    """testa F1 of the voted perceptron on the variant ``task[0]`` with shuffle seed ``task[1]`` (a
    worker's task)."""
    name, seed = task
    (train, dev), vocabulary = VOTED_INPUTS["variants"][name]
    return table.voted_f1(VOTED_INPUTS["nb"], train, dev, vocabulary, seed, **VOTED_INPUTS["settings"])[0]


def chosen_table():
    """(results file name, its JSON): the full table's when it has run, else the quick one's."""
    for name in ("collins2002_ner", "collins2002_ner_quick"):
        path = table.RESULTS / f"{name}.json"
        if path.is_file():
            return name, json.loads(path.read_text())
    sys.exit("run `make reproduce-ner` (or reproduce-ner-quick) first: its settings are the ones studied here")


def main():
    start = time.perf_counter()
    source, chosen = chosen_table()
    families = chosen["settings"]["features"]
    settings = {name: chosen["rows"][name]["settings"] for name in ("averaged", "voted")}
    parts, lists = table.build_lists(held=("testa",))
    nb = lists["testa"]
    contexts = table.contexts(parts, lists)
    clusters = table.train_clusters()

    def featurized(with_families):
        train, dev, _, vocabulary = table.featurized(lists, with_families, contexts, clusters)
        return (train, dev), vocabulary

    # the chosen set, and beside it the set with each family of SWITCHED switched (off when the set
    # has it, else on)
    variants = {"chosen set": featurized(families)}
    for family in SWITCHED:
        more = [f for f in families if f != family] if family in families else [*families, family]
        variants[("- " if family in families else "+ ") + family] = featurized(more)
        log(f"featurized {family} switched")

    # the voted perceptrons, the costly part, in one forked process per core: the chosen set over
    # the seeds, the other variants at the table's seed
    tasks = [("chosen set", seed) for seed in SEEDS] + [(name, table.SEED) for name in variants if name != "chosen set"]
    VOTED_INPUTS.update(variants=variants, nb=nb, settings=settings["voted"])

    def averaged(data, vocab, seed=table.SEED, **params):
        model = Reranker(seed=seed, **params).fit_ranking(data[0], vocab)
        return nb.corpus_score(table.choice_of(nb, data[1], model.choose(data[1])))

    with multiprocessing.get_context("fork").Pool(os.cpu_count() or 1) as pool:
        pending = pool.map_async(voted_task, tasks)  # the averaged perceptrons meanwhile, here
        seeds = {seed: {"averaged": averaged(*variants["chosen set"], seed, **settings["averaged"])} for seed in SEEDS}
        grids = {name: [averaged(*variant, **params) for params in table.AVERAGED_GRID]
                 for name, variant in variants.items()}
        voted = dict(zip(tasks, pending.get()))
    result = {"table": source, "families": families, "settings": settings, "seeds": {}, "features": {},
              "families_by": chosen["settings"].get("feature_set_by", "testa")}
    for seed in SEEDS:
        result["seeds"][seed] = {**seeds[seed], "voted": voted[("chosen set", seed)]}
        log(f"seed {seed}: {result['seeds'][seed]}")
    for name, ((train, _), _) in variants.items():
        grid = grids[name]
        result["features"][name] = {"averaged_best": max(grid), "averaged_mean": float(np.mean(grid)),
                                    "voted": voted[(name, table.SEED)],
                                    "n_features": len(np.unique(train.feature_ids)) - 1}
        log(f"{name}: {result['features'][name]}")
    result["wall_seconds"] = time.perf_counter() - start
    result["machine"] = platform.machine()
    (table.RESULTS / "collins2002_ner_dev.json").write_text(json.dumps(result, indent=1) + "\n")
    (table.RESULTS / "collins2002_ner_dev.md").write_text(render(result))
    print(render(result))


def render(result):
    seeds = result["seeds"]
    lines = [
        "# What moves the Collins (2002) row on ned.testa",
        "",
        f"Produced by `experiments/collins2002_ner_dev.py` (`make reproduce-ner-dev`) on {result['machine']}; "
        f"wall time {result['wall_seconds'] / 60:.1f} min. Dev (testa) F1 only; testb is not read. The lists, "
        f"the feature set ({', '.join(result['families'])}) and the settings (averaged: "
        f"{json.dumps(result['settings']['averaged'])}; voted: {json.dumps(result['settings']['voted'])}) are "
        f"those of `{result['table']}.md`, which chose "
        + ("the settings" if result.get("families_by") == "cross-validation" else "them")
        + " on testa (the averaged perceptron's with seed 0, the voted perceptron's by its mean over seeds 0 to 2)"
        + (" and the set by cross-validation over ned.train's jackknifed lists (`collins2002_ner_cv.md`)."
           if result.get("families_by") == "cross-validation" else "."),
        "",
        "## The learners over shuffle seeds, at the chosen settings",
        "",
        "| seed | averaged | voted |",
        "|---|---|---|",
    ]
    for seed, row in seeds.items():
        lines.append(f"| {seed} | {row['averaged']:.2f} | {row['voted']:.2f} |")
    lines += ["", "| learner | mean | sd | lowest | highest |", "|---|---|---|---|---|"]
    for name in ("averaged", "voted"):
        values = np.array([row[name] for row in seeds.values()])
        lines.append(f"| {name} | {values.mean():.2f} | {values.std(ddof=1):.2f} | {values.min():.2f} | "
                     f"{values.max():.2f} |")
    lines += [
        "",
        "## Feature changes beside the chosen set (seed 0)",
        "",
        "`+ corpus` / `- corpus`: the chosen set with the `corpus` family switched on / off (the document "
        "counts over the whole file, a training sentence's over its jackknife fold); `+ around` / `- around`: "
        "the same with the `around` family, the words just before and after each entity, with its type; "
        "`+ cluster` / `- cluster`: the same with the `cluster` family, the Brown path prefixes of the "
        "entity's words and of the words around it; `+ posterior` / `- posterior`: the same with the `posterior` "
        "family, each entity's probability in its list and the candidate's expected merit under them. "
        "Averaged: the best and the mean dev F1 over "
        "the table's grid of epochs and score weights; voted: at its chosen setting.",
        "",
        "| features | ids in the training lists | averaged, best | averaged, mean | voted |",
        "|---|---|---|---|---|",
    ]
    for name, row in result["features"].items():
        lines.append(f"| {name} | {row['n_features']:,} | {row['averaged_best']:.2f} | {row['averaged_mean']:.2f} | "
                     f"{row['voted']:.2f} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
