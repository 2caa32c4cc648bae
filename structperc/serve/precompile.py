"""The served models' kernels compiled side by side, in the master and in child processes.

With numba's on-disk cache cold, the master's warm-up (``served.warm``) compiles every kernel a request
can call one after the other, on one core. ``compile_side_by_side`` shares the warm-up's jobs (a group
of ``served.WARM_GROUPS`` of one model) between the master, which runs them in-process, and child
processes, one per other core, which compile theirs and write the machine code to numba's cache (an
entry is written whole to a temporary file and renamed into place, so that processes may fill the cache
side by side). The master then warms every model, which loads the children's kernels from the cache, so
that it has loaded them all before the workers fork, as without this. A kernel that no child left in
the cache (a child that failed, say) the master compiles, as it would have, and meets the failure
itself.

A child is ``python -m structperc.serve.precompile SOURCE PART...``: a fresh interpreter (not a fork
of the master, which holds threads and models), whose output goes nowhere.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import deque

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
    """(source, parts) of each group of the warm-up of each model (the parts the model offers), in the
    order they are taken: the groups with the most parts first (a guess at the longest), and of those
    the first groups (which decode) first, in the order of the models."""
    from structperc.serve.served import WARM_GROUPS

    jobs = []
    for group in WARM_GROUPS:
        for served in models:
            parts = tuple(part for part in group if offered(served.description, part))
            if parts:
                jobs.append((served.source, parts))
    return sorted(jobs, key=lambda job: -len(job[1]))


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def compile_side_by_side(models, processes=None) -> bool:
    """Run the warm-up's jobs of ``models`` (ServedModels read, not warmed) in this process and in child
    processes, ``processes`` at a time in all (None: one per usable core), when numba's cache lacks any
    of their kernels; True when it did. Each job goes to whichever process is free first, the master
    taking the first. A named model must be built already (``read_served`` builds it): the children
    only read it."""
    from structperc.serve.served import warm

    names = tuple(dict.fromkeys(name for served in models for name in serving_kernels(served.description)))
    jobs = compile_jobs(models)
    processes = min(len(jobs), processes or usable_cores())
    if processes < 2 or not cache.cold(names):
        return False
    cache.say_compiling()
    pending, lock = deque(jobs), threading.Lock()

    def take():
        with lock:
            return pending.popleft() if pending else None

    by_source = {served.source: served for served in models}
    job = take()
    children = threading.Thread(target=run_children, args=(take, processes - 1), daemon=True)
    children.start()
    try:
        while job is not None:
            source, parts = job
            warm(by_source[source], parts)
            job = take()
    finally:
        children.join()
    return True


def run_children(take, at_once) -> None:
    """Run the jobs that ``take`` gives in child processes, ``at_once`` at a time, until it gives None."""
    running, more = [], True
    while more or running:
        while more and len(running) < at_once:
            job = take()
            if job is None:
                more = False
                break
            source, parts = job
            running.append(subprocess.Popen([sys.executable, "-m", __name__, source, *parts],
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL))
        time.sleep(0.05)
        running = [child for child in running if child.poll() is None]


def compile_parts(source, parts) -> None:
    """Compile (and so cache) the kernels of the warm-up's ``parts`` of the model ``source``."""
    from structperc.serve.served import read_served, warm

    warm(read_served(source), parts)


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")  # the master warns of a model as it reads it
    cache.say_compiling(log=False)  # and has said that kernels compile
    compile_parts(sys.argv[1], tuple(sys.argv[2:]))
