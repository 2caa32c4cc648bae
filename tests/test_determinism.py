"""Determinism end to end: the console script, run as a real process, gives byte-identical model
files for the same seed and a different file for another seed, for every learning rule."""
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from structperc.train import TRAINERS

# the default suite covers every rule, both orders and both constraint settings at least once;
# the full matrix (each rule at the label orders it has) is marked slow
QUICK = [("perceptron", 2, "bio"), ("crf", 1, "bio"), ("memm", 2, None), ("hinge", 1, None), ("winnow", 1, None)]
FULL = [(t, o, c) for t, rule in TRAINERS.items() for o in rule.orders for c in (None, "bio")]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """300 random chunked sentences: enough for the visit order to change the learned weights."""
    rng = random.Random(7)
    words = [f"w{i}" for i in range(40)]
    tags = ["DT", "NN", "VB", "IN", "JJ"]
    lines = []
    for _ in range(300):
        label = "O"
        for _ in range(rng.randint(2, 9)):
            kind = rng.choice(["NP", "VP", "O"])
            if kind == "O":
                label = "O"
            elif label != "O" and label[2:] == kind and rng.random() < 0.6:
                label = f"I-{kind}"
            else:
                label = f"B-{kind}"
            lines.append(f"{rng.choice(words)} {rng.choice(tags)} {label}")
        lines.append("")
    path = tmp_path_factory.mktemp("determinism") / "train.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def train(corpus, model, trainer, order, constrain, seed):
    cmd = [sys.executable, "-m", "structperc", "train", str(corpus), "--model", str(model),
           "--columns", "word,pos,chunk", "--trainer", trainer, "--order", str(order), "--epochs", "3",
           "--seed", str(seed), "--quiet", *(["--constrain", constrain] if constrain else [])]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return model.read_bytes()


def check(corpus, tmp_path, configs):
    jobs = [(c, seed, tmp_path / f"{c[0]}-{c[1]}-{c[2]}-{seed}-{k}.npz")
            for c in configs for seed, k in ((3, "a"), (3, "b"), (4, "a"))]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda job: train(corpus, job[2], *job[0], job[1]), jobs))
    for i, config in enumerate(configs):
        first, again, other = results[3 * i: 3 * i + 3]
        assert first == again, f"{config}: --seed 3 twice gave different model files"
        assert first != other, f"{config}: --seed 3 and --seed 4 gave the same model file"


def test_same_seed_same_bytes(corpus, tmp_path):
    check(corpus, tmp_path, QUICK)


@pytest.mark.slow
def test_same_seed_same_bytes_every_configuration(corpus, tmp_path):
    check(corpus, tmp_path, FULL)
