"""A greedy search over feature families scored by cross-validation over jackknifed training lists,
shared by ``collins2002_ner_cv.py`` (the MEMM's lists) and ``rerank_ner_cv.py`` (the ``ner`` preset's).

A set's score is a grid of {setting: [F1 by seed]}; its value the best setting's mean over the seeds.
From a start set, every set one switch away (a family on or off) is scored; the best is taken when it
gains at least ``gain`` F1, and the search goes on from there, for at most ``rounds`` rounds.
"""
import json
import multiprocessing
import os

import numpy as np

from structperc.rerank.context import FAMILIES


def read_search(path):
    """The results a search script wrote at ``path`` (a dict; empty when it has not run)."""
    return json.loads(path.read_text()) if path.is_file() else {}


def cross_validated(data, vocabulary, nb, fold_of_group, learner):
    """F1 over ``nb`` of the held-out choices: for every fold, a new reranker ``learner()`` trained on
    the other folds' groups of ``data`` chooses among that fold's candidates."""
    choice = np.full(nb.n_sentences, -1, dtype=np.int64)
    for fold in np.unique(fold_of_group):
        held = np.flatnonzero(fold_of_group == fold)
        train = data.take_groups(np.flatnonzero(fold_of_group != fold))
        test = data.take_groups(held)
        rows = learner().fit_ranking(train, vocabulary).choose(test)
        # rows index the held-out data's candidates; the lists' candidate of each is at the same rank
        choice[test.qids - 1] = data.group_offsets[held] + rows - test.group_offsets[:-1]
    return nb.corpus_score(choice)


def best_of(grid):
    """(setting, mean F1 over the seeds) of the best setting of a grid."""
    means = {key: float(np.mean(f1s)) for key, f1s in grid.items()}
    key = max(means, key=means.get)
    return key, means[key]


def ordered(families):
    return tuple(name for name in FAMILIES if name in families)


def switched(families, switches=FAMILIES):
    """Every set one switch of ``switches`` away from ``families`` (none empty)."""
    out = []
    for name in switches:
        other = ordered([f for f in families if f != name] if name in families else [*families, name])
        if other:
            out.append(other)
    return out


def search(start, score_families, rounds, gain, log, switches=FAMILIES):
    """(chosen set, the rounds, {set: {"grid", "n_features", "seconds"}}): the greedy search from
    ``start``, each set scored by ``score_families(set)`` -> (set, grid, number of features, seconds)
    in a pool of forked workers, one per core."""
    scored = {}

    def score(sets, pool):
        todo = [s for s in sets if s not in scored]
        for families, grid, n_features, seconds in pool.imap_unordered(score_families, todo):
            scored[families] = {"grid": grid, "n_features": n_features, "seconds": seconds}
            key, f1 = best_of(grid)
            log(f"{'+'.join(families)}: {f1:.2f} at {key} ({seconds:.0f}s, {n_features:,} features)")

    taken = []
    current = ordered(start)
    with multiprocessing.get_context("fork").Pool(os.cpu_count() or 1) as pool:
        score([current], pool)
        for _ in range(rounds):
            candidates = switched(current, switches)
            score(candidates, pool)
            best = max(candidates, key=lambda s: best_of(scored[s]["grid"])[1])
            step = best_of(scored[best]["grid"])[1] - best_of(scored[current]["grid"])[1]
            taken.append({"from": current, "best": best, "gain": step, "taken": step >= gain})
            log(f"round {len(taken)}: best switch {'+'.join(best)}, {step:+.2f}")
            if step < gain:
                break
            current = best
    return current, taken, scored


def search_lines(result, start_name):
    """The markdown table of every set scored (against the start set, called ``start_name``), the
    rounds and the chosen set, of a result with "sets", "start", "rounds" and "chosen"."""
    sets = {tuple(s["families"]): s for s in result["sets"]}
    start = tuple(result["start"])
    base = best_of(sets[start]["grid"])[1]
    lines = [f"| features | vs {start_name} | best setting | F1 by seed | mean |", "|---|---|---|---|---|"]
    for families, s in sorted(sets.items(), key=lambda item: -best_of(item[1]["grid"])[1]):
        key, f1 = best_of(s["grid"])
        change = ", ".join([f"+{f}" for f in families if f not in start] + [f"-{f}" for f in start if f not in families])
        lines.append(f"| {', '.join(families)} | {change or start_name} | {key} | "
                     f"{' / '.join(f'{v:.2f}' for v in s['grid'][key])} | {f1:.2f} ({f1 - base:+.2f}) |")
    lines += ["", "Rounds:", ""]
    for i, r in enumerate(result["rounds"], 1):
        lines.append(f"{i}. from {', '.join(r['from'])}: best switch to {', '.join(r['best'])}, "
                     f"{r['gain']:+.2f} F1, {'taken' if r['taken'] else 'not taken'}.")
    lines += ["", f"Chosen: {', '.join(result['chosen'])}.", ""]
    return lines
