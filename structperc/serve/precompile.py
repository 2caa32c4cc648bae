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

A child is ``python -m structperc.serve.precompile``, a fresh interpreter (not a fork of the master,
which holds threads and models), that runs the jobs it reads on its input, one a line, and says "done"
after each; its errors go nowhere.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import deque

from structperc._kernels import cache
from structperc.serve.served import WARM_GROUPS, offered, read_served, warm


def serving_kernels(description) -> tuple[str, ...]:
    """The entry points (``cache.cold``'s names) that the requests to a model of ``/v1/models``'
    ``description`` call."""
    names = cache.tagging_kernels("global" if description["probabilistic"] else None)
    if description["kbest"]:
        names += cache.NBEST[:1]
    if description["explain"]:
        names += cache.EXPLAINING
    return names


def compile_jobs(models) -> list[tuple[str, tuple[str, ...]]]:
    """(source, parts) of each group of the warm-up of each model (the parts the model offers), in the
    order they are taken: the groups with the most parts first (a guess at the longest), and of those
    the first groups (which decode) first, in the order of the models."""
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
    children = [threading.Thread(target=run_child, args=(take,), daemon=True) for _ in range(processes - 1)]
    for child in children:
        child.start()
    try:
        while job is not None:
            source, parts = job
            warm(by_source[source], parts)
            job = take()
    finally:
        for child in children:
            child.join()
    return True


def run_child(take) -> None:
    """Run the jobs that ``take`` gives in one child process, one after the other (it reads each model
    once, and compiles the kernels its jobs share once), until ``take`` gives None. A child that dies
    leaves the rest of its job to the master's warm-up, and the next jobs to the master."""
    child = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    try:
        job = take()
        while job is not None:
            child.stdin.write(json.dumps(job) + "\n")
            child.stdin.flush()
            if not child.stdout.readline():  # the child died
                break
            job = take()
    except BrokenPipeError:  # the child died before it read its job
        pass
    finally:
        try:
            child.stdin.close()
        except BrokenPipeError:
            pass
        child.wait()


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")  # the master warns of a model as it reads it
    cache.say_compiling(log=False)  # and has said that kernels compile
    read = {}
    for line in sys.stdin:  # a job a line, (source, parts) in JSON; "done" a line back
        source, parts = json.loads(line)
        if source not in read:
            read[source] = read_served(source)
        warm(read[source], tuple(parts))
        print("done", flush=True)
