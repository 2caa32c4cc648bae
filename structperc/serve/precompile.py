"""The served models' kernels compiled in child processes, side by side, before the master loads them.

With numba's on-disk cache cold, the master's warm-up (``served.warm``) compiles every kernel a request
can call one after the other, on one core. ``fill_cache`` runs the warm-up's groups of parts
(``served.WARM_GROUPS``) of every model in child processes instead, as many at a time as there are
cores: each compiles its kernels and writes their machine code to numba's cache (an entry is written
whole to a temporary file and renamed into place, so that processes may fill the cache side by side).
The master's warm-up then loads every kernel from the cache, so that it has loaded them all before the
workers fork, as without this. A kernel that no child left in the cache (a child that failed, say) the
master compiles, as it would have, and meets the failure itself.

A child is ``python -m structperc.serve.precompile SOURCE PART...``: a fresh interpreter (not a fork
of the master, which may hold threads and models), whose output goes nowhere.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

from structperc._kernels import cache


def serving_kernels(description) -> tuple[str, ...]:
    """The entry points (``cache.cold``'s names) that the requests to a model of ``/v1/models``'
    ``description`` call."""
    names = cache.tagging_kernels("global" if description["probabilistic"] else None)
    if description["kbest"]:
        names += cache.NBEST[:1]
    if description["explain"]:
        names += cache.EXPLAINING
    return names


def offered(description, part) -> bool:
    """Whether a model of this ``description`` offers the warm-up's ``part``."""
    return {"scores": description["probabilistic"], "kbest": description["kbest"],
            "explain": description["explain"]}.get(part, True)


def compile_jobs(models) -> list[tuple[str, tuple[str, ...]]]:
    """(source, parts) of each group of the warm-up of each model (the parts the model offers), the
    first groups of every model, which decode and are the longest, before the others: the order in
    which the children start."""
    from structperc.serve.served import WARM_GROUPS

    jobs = []
    for group in WARM_GROUPS:
        for served in models:
            parts = tuple(part for part in group if offered(served.description, part))
            if parts:
                jobs.append((served.source, parts))
    return jobs


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def fill_cache(models, processes=None) -> bool:
    """Compile the kernels of ``models`` (ServedModels read, not warmed) in child processes, ``processes``
    at a time (None: one per usable core), when numba's cache lacks any of them; True when it did.
    Nothing is done with one process at a time, which would only compile what the master can, later.
    A named model must be built already (``read_served`` builds it): the children only read it."""
    names = tuple(dict.fromkeys(name for served in models for name in serving_kernels(served.description)))
    jobs = compile_jobs(models)
    processes = min(len(jobs), processes or usable_cores())
    if processes < 2 or not cache.cold(names):
        return False
    cache.say_compiling()
    running = []
    while jobs or running:
        while jobs and len(running) < processes:
            source, parts = jobs.pop(0)
            running.append(subprocess.Popen([sys.executable, "-m", __name__, source, *parts],
                                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL))
        time.sleep(0.05)
        running = [child for child in running if child.poll() is None]
    return True


def compile_parts(source, parts) -> None:
    """Compile (and so cache) the kernels of the warm-up's ``parts`` of the model ``source``."""
    from structperc.serve.served import read_served, warm

    warm(read_served(source), parts)


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")  # the master warns of a model as it reads it
    cache.say_compiling(log=False)  # and has said that kernels compile
    compile_parts(sys.argv[1], tuple(sys.argv[2:]))
