"""Reranking the strongest tagger: the ``ner`` preset's k-best lists on CoNLL-2002 Dutch, reranked with
features a first-order tagger cannot have (``structperc.rerank.context``: the document, jackknifed
gazetteers, label trigrams and entity counts, the rank) beside Collins' entity features.

Base: ``Tagger(templates="ner")`` (every other option its default) trained on ned.train. Training
lists: 5-fold jackknifed 20-best lists of ned.train (contiguous folds, so that a fold's documents
were not seen by the model that lists it; the gazetteer of a fold comes from the other folds' gold, and
the ``corpus`` family counts within each fold).
Every choice is made on ned.testa: the feature families (all of them, and all but one for each
family; then the ``posterior`` family on top of the best of those sets), the learner and its settings (averaged perceptron; MIRA and the loss-scaled perceptron),
then k (5, 10, 20). ned.testb is featurized and scored once, at the end, with the paired bootstrap
against the base's 1-best. The same choices as one model (``RerankedTagger``'s defaults) are scored and
timed beside the base; so is the set of families that cross-validation over ned.train's lists chose
(``rerank_ner_cv.py``), when it has run.

Writes experiments/results/rerank_ner.md and .json. Run: ``make rerank-ner``. The n-best lists are
cached in experiments/cache/ (``nbest_cache``).
"""
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from family_search import read_search  # noqa: E402
from nbest_cache import cached_lists  # noqa: E402

from structperc.estimator.tagger import Tagger  # noqa: E402
from structperc.evaluate.metrics import evaluate_labels, paired_bootstrap, split  # noqa: E402
from structperc.nbest.jackknife import fold_split  # noqa: E402
from structperc.nbest.lists import jackknife_nbest, nbest_corpus  # noqa: E402
from structperc.readers import read_corpus  # noqa: E402
from structperc.rerank.context import (Gazetteer, ListContext, document_ids, featurize_in_context,  # noqa: E402
                                       jackknifed_gazetteers, posterior_temperature)
from structperc.rerank.learners import LossReranker, Reranker  # noqa: E402
from structperc.rerank.tagger import RerankedTagger  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "experiments" / "results"
NAME = "rerank_ner"
K_MAX = 20
KS = (5, 10, 20)
FOLDS = 5
BLOCKS = True
SEED = 0
# the reranker's shuffle seeds scored beside the row's (SEED's) model, on testa and on testb
SPREAD_SEEDS = (0, 1, 2)
PASSES = 5  # timed passes of each model per tagging-speed process
BASE = {"templates": "ner"}
TARGET = 82.0
FAMILIES = ("entity", "document", "gazetteer", "sequence", "rank")  # the chunk family is CoNLL-2000's
AVERAGED_GRID = [{"epochs": e, "score_weight": w} for e in (5, 10, 20) for w in (1.0, 5.0)]
LOSS_GRID = ([{"update": "mira", "epochs": e, "margin": m, "aggressiveness": c, "score_weight": 5.0}
              for e in (5, 10) for m in (1.0, 2.0) for c in (0.1, 1.0)]
             + [{"update": "scaled", "epochs": e, "margin": m, "score_weight": 5.0} for e in (5, 10) for m in (0.0, 1.0)])


def find_corpus(name, files, title):
    """The folder of corpus ``name`` holding ``files``: $STRUCTPERC_MIRROR's, corpora/, or the mirror beside
    the project, as the Makefile finds it."""
    mirror = os.environ.get("STRUCTPERC_MIRROR")
    candidates = [ROOT / "corpora" / name, ROOT.parent / "shared" / "corpora" / name]
    if mirror:
        candidates.insert(0, Path(mirror) / name)
    for candidate in candidates:
        if all((candidate / f).is_file() for f in files):
            return candidate
    sys.exit(f"{title} not found: run `structperc data fetch {name}` or set STRUCTPERC_MIRROR")


def corpus_dir():
    return find_corpus("conll2002_nl", [f"ned.{part}" for part in ("train", "testa", "testb")], "CoNLL-2002 Dutch")


def write_results(name, result, render):
    """``experiments/results/NAME.json`` and ``NAME.md`` (``render(result)``), and the table on stdout."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1, default=float) + "\n")
    (RESULTS / f"{name}.md").write_text(render(result))
    print(render(result))


def log(message):
    print(message, file=sys.stderr, flush=True)


def build_lists(parts, names=("testa", "testb", "train")):
    """The k-best lists of ``names`` (cached): the base's of testa and testb, the jackknifed ones of train."""
    settings = {"base": BASE, "k": K_MAX}
    box = {}

    def base():
        if "model" not in box:
            box["model"] = Tagger(**BASE).fit(parts["train"])
        return box["model"]

    lists = {p: cached_lists(f"rerank-ner-{p}", settings, parts[p], lambda p=p: nbest_corpus(base(), parts[p], K_MAX),
                             log) for p in ("testa", "testb") if p in names}
    if "train" not in names:
        return lists
    lists["train"] = cached_lists(
        "rerank-ner-train", {**settings, "folds": FOLDS, "blocks": BLOCKS, "seed": SEED}, parts["train"],
        lambda: jackknife_nbest(parts["train"], Tagger(**BASE).get_params(), folds=FOLDS, k=K_MAX, seed=SEED,
                                blocks=BLOCKS), log)
    return lists


class Lists:
    """The train / testa / testb lists truncated to k, with their contexts (made once per k)."""

    def __init__(self, parts, lists):
        self.parts, self.full = parts, lists
        self.fold_of = fold_split(parts["train"].n_sentences, FOLDS, SEED, BLOCKS)
        self.gazetteers = jackknifed_gazetteers(parts["train"], self.fold_of)
        self.gazetteer = Gazetteer.from_corpus(parts["train"])
        self.cache = {}

    def at(self, k):
        if k not in self.cache:
            out = {}
            for p, nb in self.full.items():
                nb = nb.truncate(k) if k < nb.k else nb
                if p == "train":
                    context = ListContext(nb, document_ids(self.parts[p]), self.gazetteers, self.fold_of,
                                          blocks=self.fold_of)
                else:
                    context = ListContext(nb, document_ids(self.parts[p]), [self.gazetteer],
                                          np.zeros(nb.n_sentences, dtype=np.int64))
                out[p] = (nb, context)
            self.cache = {k: out}
        return self.cache[k]

    def featurize(self, k, families, parts=("train", "testa")):
        lists = self.at(k)
        nb, context = lists["train"]
        # the posterior family's temperature, fitted on the training lists as RerankedTagger fits it
        t = posterior_temperature(nb, families)
        data = {"train": featurize_in_context(nb, families, context, {}, grow=True, temperature=t)}
        vocabulary = data["train"][1]
        for p in parts[1:]:
            nb, context = lists[p]
            data[p] = featurize_in_context(nb, families, context, vocabulary, grow=False, temperature=t)
        return {p: d for p, (d, _) in data.items()}, vocabulary


def cross_validated_families():
    """The families ``rerank_ner_cv.py`` chose (a list), or None before it has run."""
    chosen = read_search(RESULTS / "rerank_ner_cv.json").get("chosen")
    return None if chosen is None else list(chosen)


def choice_of(nb, data, rows):
    choice = np.full(nb.n_sentences, -1, dtype=np.int64)
    choice[data.qids - 1] = rows
    return choice


def make_learner(params, seed=SEED):
    params = dict(params)
    if "update" in params:
        return LossReranker(seed=seed, **params)
    return Reranker(seed=seed, **params)


def grid_scores(nb, data, vocabulary, grid):
    """dev F1 of every setting of ``grid`` (JSON key -> F1)."""
    out = {}
    for params in grid:
        model = make_learner(params).fit_ranking(data["train"], vocabulary)
        out[json.dumps(params)] = nb.corpus_score(choice_of(nb, data["testa"], model.choose(data["testa"])))
    return out


def main():
    start = time.perf_counter()
    folder = corpus_dir()
    parts = {p: read_corpus(folder / f"ned.{p}", columns=["word", "pos", "ne"], label="ne")
             for p in ("train", "testa", "testb")}
    lists = Lists(parts, build_lists(parts))
    dev_nb = lists.at(K_MAX)["testa"][0]
    base_dev = dev_nb.corpus_score(dev_nb.first_choice())
    log(f"testa: base {base_dev:.2f}, oracle {dev_nb.corpus_score(dev_nb.oracle_choice()):.2f}")

    # 1. the feature families: all, and all but one, by the averaged perceptron's best setting
    family_sets = {"all": list(FAMILIES)}
    family_sets.update({f"all - {f}": [g for g in FAMILIES if g != f] for f in FAMILIES})
    family_sets["entity only (Collins + words)"] = ["entity"]
    family_dev, family_grids = {}, {}

    def try_set(name, families):
        family_sets[name] = families
        t = time.perf_counter()
        data, vocabulary = lists.featurize(K_MAX, families)
        family_grids[name] = grid_scores(dev_nb, data, vocabulary, AVERAGED_GRID)
        family_dev[name] = max(family_grids[name].values())
        log(f"{name}: best dev {family_dev[name]:.2f} ({time.perf_counter() - t:.0f}s, {len(vocabulary):,} features)")

    for name, families in list(family_sets.items()):
        try_set(name, families)
    # the posterior family (each entity's probability in its list) on top of the best of those sets
    best_set = max(family_dev, key=family_dev.get)
    try_set(f"{best_set} + posterior", family_sets[best_set] + ["posterior"])
    chosen_set = max(family_dev, key=family_dev.get)
    families = family_sets[chosen_set]

    # 2. the learner and its settings, on the chosen families
    data, vocabulary = lists.featurize(K_MAX, families)
    learner_dev = {"averaged perceptron": family_grids[chosen_set],
                   "loss (MIRA / scaled perceptron)": grid_scores(dev_nb, data, vocabulary, LOSS_GRID)}
    candidates = {key: f1 for scores in learner_dev.values() for key, f1 in scores.items()}
    learner = json.loads(max(candidates, key=candidates.get))
    log(f"learner: {learner} dev {candidates[json.dumps(learner)]:.2f}")

    # 3. k, with the chosen families and learner
    k_dev = {}
    for k in KS:
        kdata, kvocabulary = (data, vocabulary) if k == K_MAX else lists.featurize(k, families)
        nb = lists.at(k)["testa"][0]
        model = make_learner(learner).fit_ranking(kdata["train"], kvocabulary)
        k_dev[k] = nb.corpus_score(choice_of(nb, kdata["testa"], model.choose(kdata["testa"])))
        log(f"k={k}: dev {k_dev[k]:.2f}")
    k = max(KS, key=lambda x: (k_dev[x], -x))

    # 4. testb, once
    data, vocabulary = lists.featurize(k, families, parts=("train", "testa", "testb"))
    model = make_learner(learner).fit_ranking(data["train"], vocabulary)
    at_k = lists.at(k)
    nb = at_k["testb"][0]
    corpus = parts["testb"]
    o = corpus.sentence_offsets
    gold = corpus.columns["ne"]
    base_labels = nb.selected_labels(nb.first_choice())
    reranked_labels = nb.selected_labels(choice_of(nb, data["testb"], model.choose(data["testb"])))
    base_eval = evaluate_labels(gold, base_labels, o, True)
    reranked_eval = evaluate_labels(gold, reranked_labels, o, True)
    boot = paired_bootstrap(split(gold, o), split(reranked_labels, o), split(base_labels, o), samples=10000, seed=SEED)
    # the same families, learner and k with other shuffle seeds: how far the row's model is from its seeds'
    seeds = {}
    for seed in SPREAD_SEEDS:
        fitted = make_learner(learner, seed).fit_ranking(data["train"], vocabulary)
        seeds[str(seed)] = {p: at_k[p][0].corpus_score(choice_of(at_k[p][0], data[p], fitted.choose(data[p])))
                            for p in ("testa", "testb")}
        log(f"seed {seed}: testa {seeds[str(seed)]['testa']:.2f}, testb {seeds[str(seed)]['testb']:.2f}")

    # 5. the same recipe as one model, `structperc rerank fit ned.train --base ner.npz --dev ned.testa`:
    # RerankedTagger with its defaults (the choices above), its learner's settings chosen on testa;
    # then tagging speed on testb, the base's and the reranked model's (k-best, context, features, choice)
    packaged = RerankedTagger(base=Tagger(**BASE)).fit(parts["train"], dev=parts["testa"])
    packaged_eval = packaged.evaluate(corpus)
    speed = speed_of(packaged, folder / "ned.testb", corpus.n_tokens)
    # 6. the families that cross-validation over ned.train's lists chose (rerank_ner_cv.py), as one model
    # beside the defaults: `rerank fit ... --families ...`, the learner's settings chosen on testa
    cv_families = cross_validated_families()
    alternative = None
    if cv_families is not None:
        other = RerankedTagger(base=Tagger(**BASE), families=cv_families).fit(parts["train"], dev=parts["testa"])
        alternative = {"families": other.families_, "f1": other.evaluate(corpus)["f1"], "selection": other.selection_,
                       "speed": speed_of(other, folder / "ned.testb", corpus.n_tokens)}

    result = {
        "task": "CoNLL-2002 Dutch NER, ned.testb", "base": {k_: v for k_, v in BASE.items()},
        "rows": {"base": {key: base_eval[key] for key in ("precision", "recall", "f1")},
                 "reranked": {key: reranked_eval[key] for key in ("precision", "recall", "f1")}},
        "oracle": nb.corpus_score(nb.oracle_choice()), "p_value": boot["p_value"], "target": TARGET,
        "seeds": seeds,
        "chosen": {"families": families, "family_set": chosen_set, "learner": learner, "k": k},
        "dev": {"base": base_dev, "families": family_dev, "family_grids": family_grids, "learners": learner_dev,
                "k": {str(key): v for key, v in k_dev.items()}},
        "lists": {p: lists.full[p].summary() for p in lists.full},
        "n_features": len(vocabulary), "folds": FOLDS, "blocks": BLOCKS, "seed": SEED,
        "packaged": {"f1": packaged_eval["f1"], "selection": packaged.selection_,
                     "learner": type(packaged.reranker_).__name__, "families": packaged.families_},
        "speed": speed, "cross_validated": alternative,
        "wall_seconds": time.perf_counter() - start, "machine": platform.machine(),
    }
    write_results(NAME, result, render)


def render(r):
    rows, chosen, dev, speed = r["rows"], r["chosen"], r["dev"], r["speed"]
    delta = rows["reranked"]["f1"] - rows["base"]["f1"]
    ratio = speed["ratio"]
    lines = [
        "# Reranking the `ner` preset on CoNLL-2002 Dutch",
        "",
        f"Produced by `experiments/rerank_ner.py` (`make rerank-ner`) on {r['machine']}; wall time "
        f"{r['wall_seconds'] / 60:.1f} min (n-best lists cached in experiments/cache/ when present).",
        "",
        f"Base: `Tagger(templates=\"ner\")` trained on ned.train. Training lists: {r['folds']}-fold jackknifed "
        f"{K_MAX}-best lists of ned.train (contiguous folds; 1-best F1 {r['lists']['train']['one_best']:.2f}, "
        f"oracle {r['lists']['train']['oracle']:.2f}). Everything below the table was chosen on ned.testa "
        f"(base {dev['base']:.2f}); ned.testb was scored once.",
        "",
        "| task | base F1 | reranked F1 | delta | oracle of the lists | p (paired bootstrap) | target |",
        "|---|---|---|---|---|---|---|",
        f"| {r['task']} | {rows['base']['f1']:.2f} | {rows['reranked']['f1']:.2f} | {delta:+.2f} | "
        f"{r['oracle']:.2f} | {r['p_value']:.4f} | >= {r['target']} "
        f"({'met' if rows['reranked']['f1'] >= r['target'] and r['p_value'] < 0.05 else 'not met'}) |",
        "",
        f"Chosen on testa: families {', '.join(chosen['families'])}; learner {json.dumps(chosen['learner'])}; "
        f"k = {chosen['k']}; {r['n_features']:,} features.",
        "",
        *seed_lines(r),
        "Dev F1 (ned.testa) of the feature families, each the best of the averaged perceptron's grid "
        f"(epochs x initial base-score weight, {len(AVERAGED_GRID)} settings):",
        "",
        "| families | dev F1 |",
        "|---|---|",
        *[f"| {name} | {f1:.2f} |" for name, f1 in dev["families"].items()],
        "",
        "Dev F1 of the learners on the chosen families:",
        "",
        "| learner | settings | dev F1 |",
        "|---|---|---|",
        *[f"| {name} | `{key}` | {f1:.2f} |" for name, scores in dev["learners"].items() for key, f1 in scores.items()],
        "",
        "Dev F1 by k (chosen families and learner): "
        + ", ".join(f"k = {k}: {f1:.2f}" for k, f1 in dev["k"].items()) + ".",
        "",
        "The same recipe as one model, `structperc rerank fit ned.train --base ner.npz --dev ned.testa` "
        "(`RerankedTagger` with its defaults, the learner's epochs and base-score weight chosen on testa: "
        + ", ".join(f"{json.dumps(s['settings'])} {s['dev_f1']:.2f}" for s in r["packaged"]["selection"])
        + f"): ned.testb F1 {r['packaged']['f1']:.2f}.",
        "",
        f"Tagging speed on ned.testb ({speed['tokens']:,} tokens; medians of {len(speed['runs'])} whole processes, "
        f"each warm, timing both {speed['passes']} times in turn): base "
        f"{speed['base_tokens_per_second']:,.0f} tokens/s, the reranked model (k-best, document context, "
        f"features, choice) {speed['reranked_tokens_per_second']:,.0f} tokens/s ({ratio:.2f}x the base's, "
        "the median of the processes' ratios; "
        "target >= 0.25x and >= 20,000 tokens/s: "
        f"{'met' if ratio >= 0.25 and speed['reranked_tokens_per_second'] >= 20000 else 'not met'}).",
        "",
        *alternative_lines(r),
        "p: paired bootstrap over test sentences, 10,000 samples, reranked against the base's 1-best "
        "(`structperc.evaluate.metrics.paired_bootstrap`).",
        "",
    ]
    return "\n".join(lines)


def alternative_lines(r):
    """The model of the families that cross-validation chose (``rerank_ner_cv.md``), beside the defaults'."""
    other = r.get("cross_validated")
    if not other:
        return []
    speed = other["speed"]
    return [
        f"The families chosen by cross-validation over ned.train's lists (`rerank_ner_cv.md`): "
        f"{', '.join(other['families'])}, as one model (`rerank fit ... --families {','.join(other['families'])}`, "
        "the learner's settings chosen on testa: "
        + ", ".join(f"{json.dumps(s['settings'])} {s['dev_f1']:.2f}" for s in other["selection"])
        + f"): ned.testb F1 {other['f1']:.2f}; tagging {speed['reranked_tokens_per_second']:,.0f} tokens/s against "
        f"the base's {speed['base_tokens_per_second']:,.0f} ({speed['ratio']:.2f}x, measured as above: "
        f"{'meets' if speed['ratio'] >= 0.25 else 'below'} the 0.25x target). The defaults keep the families "
        f"chosen on testa ({r['packaged']['f1']:.2f}, {r['speed']['ratio']:.2f}x).",
        "",
    ]


def seed_lines(r):
    """The row's spread over the reranker's shuffle seeds."""
    seeds = r["seeds"]
    testb = [v["testb"] for v in seeds.values()]
    return [
        f"The reranker's shuffle seed, with the same families, learner and k (the row is seed {SEED}'s model):",
        "",
        "| seed | testa F1 | testb F1 |",
        "|---|---|---|",
        *[f"| {seed} | {v['testa']:.2f} | {v['testb']:.2f} |" for seed, v in seeds.items()],
        "",
        f"Mean over the seeds: testa {np.mean([v['testa'] for v in seeds.values()]):.2f}, testb {np.mean(testb):.2f} "
        f"(lowest {min(testb):.2f}, highest {max(testb):.2f}).",
        "",
    ]


def speed_of(packaged, testb, n_tokens):
    """The tagging speed record of a reranked model and its base (``tagging_speed``): medians of the
    processes' tokens/s, and the median of their paired ratios."""
    runs = tagging_speed(packaged, testb)
    base_seconds = float(np.median([run["base"] for run in runs]))
    reranked_seconds = float(np.median([run["reranked"] for run in runs]))
    return {"tokens": n_tokens, "base_tokens_per_second": n_tokens / base_seconds,
            "reranked_tokens_per_second": n_tokens / reranked_seconds,
            "ratio": float(np.median([run["base"] / run["reranked"] for run in runs])), "passes": PASSES,
            "runs": runs}


def tagging_speed(packaged, testb, runs=3):
    """Each of ``runs`` whole processes (``--time-tagging``) loads the saved reranked model, tags testb once
    to load its kernels, then times the base's tagging and the reranked model's ``PASSES`` times each, in
    turn: [{"base": s, "reranked": s}] per process, each the median of its passes."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rerank-speed-") as folder:
        model = Path(folder) / "reranked.npz"
        packaged.save(model)
        out = []
        for _ in range(runs):
            done = subprocess.run([sys.executable, __file__, "--time-tagging", str(model), str(testb)],
                                  capture_output=True, text=True, check=True, timeout=600)
            out.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return out


def time_tagging(model, testb):
    """One process of ``tagging_speed``: prints {"base": seconds, "reranked": seconds}."""
    packaged = RerankedTagger.load(model)
    corpus = read_corpus(testb, columns=["word", "pos", "ne"], label="ne")
    packaged.predict_corpus(corpus)  # loads the kernels of both, and the tables
    seconds = {"base": [], "reranked": []}
    for _ in range(PASSES):  # in turn, so that a slower spell of the machine weighs on both
        for name, model in (("base", packaged.base_), ("reranked", packaged)):
            t = time.perf_counter()
            model.predict_corpus(corpus)
            seconds[name].append(time.perf_counter() - t)
    print(json.dumps({name: float(np.median(times)) for name, times in seconds.items()}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--time-tagging"]:
        time_tagging(*sys.argv[2:4])
    else:
        main()
