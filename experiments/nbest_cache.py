"""A disk cache of n-best lists for the reranking experiments (not imported by the package).

Producing jackknifed lists means training several base models; the rerankers train in seconds. A
list is stored as ``experiments/cache/<name>-<key>.npz`` where key hashes the settings that made it,
so changing the base model or k builds new lists. The corpus is not stored: the caller passes the
same corpus it was built from.
"""
import hashlib
import json
from pathlib import Path

import numpy as np

from structperc.nbest.lists import NBestList

CACHE = Path(__file__).resolve().parent / "cache"


def cached_lists(name, settings, corpus, build, log=print):
    """``build()`` (an NBestList of ``corpus``), or its stored copy made with the same settings."""
    key = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:12]
    path = CACHE / f"{name}-{key}.npz"
    if path.is_file():
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            nb = NBestList(corpus, meta["label_names"], z["candidate_offsets"], z["path_offsets"], z["paths"],
                           z["scores"], meta["metric"], z["counts"] if meta["metric"] else None,
                           z["task_scores"] if meta["metric"] else None, meta["k"], meta["seconds"])
        log(f"{name}: n-best lists read from {path}")
        nb.from_cache = True
        return nb
    nb = build()
    nb.from_cache = False
    CACHE.mkdir(parents=True, exist_ok=True)
    meta = {"label_names": list(nb.label_names), "metric": nb.metric, "k": nb.k, "seconds": nb.seconds}
    arrays = dict(candidate_offsets=nb.candidate_offsets, path_offsets=nb.path_offsets, paths=nb.paths,
                  scores=nb.scores, meta=np.array(json.dumps(meta)))
    if nb.metric:
        arrays.update(counts=nb.counts, task_scores=nb.task_scores)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **arrays)
    tmp.replace(path)
    return nb
