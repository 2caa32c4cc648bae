"""What Collins (2002) published, the six methods of his tables, and the settings of the re-run.

How the templates, the tag dictionary and the epoch caps were chosen, with the figures measured
at the time: experiments/results/collins2002_settings.md.
"""
from dataclasses import dataclass

PAPER = ("Collins (2002), Discriminative Training Methods for Hidden Markov Models: Theory and "
         "Experiments with Perceptron Algorithms, EMNLP")


@dataclass(frozen=True)
class Method:
    """One row of Collins' tables."""

    key: str
    name: str
    trainer: str
    average: bool
    min_count: int


METHODS = (
    Method("perc_avg_cc0", "Perc, avg, cc=0", "perceptron", True, 0),
    Method("perc_noavg_cc0", "Perc, noavg, cc=0", "perceptron", False, 0),
    Method("perc_avg_cc5", "Perc, avg, cc=5", "perceptron", True, 5),
    Method("perc_noavg_cc5", "Perc, noavg, cc=5", "perceptron", False, 5),
    # Collins' ME taggers were trained to (near) convergence, not averaged
    Method("me_cc0", "ME, cc=0", "memm", False, 0),
    Method("me_cc5", "ME, cc=5", "memm", False, 5),
)
METHOD_KEYS = [m.key for m in METHODS]

# Collins (2002), Tables: (development score, Numits). NP chunking: F-measure; POS: error %.
PUBLISHED = {
    "np": {
        "perc_avg_cc0": (93.53, 13), "perc_noavg_cc0": (93.04, 35), "perc_avg_cc5": (93.33, 9),
        "perc_noavg_cc5": (91.88, 39), "me_cc0": (92.34, 900), "me_cc5": (92.65, 200),
    },
    "pos": {
        "perc_avg_cc0": (2.93, 10), "perc_noavg_cc0": (3.68, 20), "perc_avg_cc5": (3.03, 6),
        "perc_noavg_cc5": (4.04, 17), "me_cc0": (3.4, 100), "me_cc5": (3.28, 200),
    },
}
PUBLISHED_WSJ_TEST_ACCURACY = 97.11  # averaged perceptron, WSJ sections 22-24

POS_ORDER = 2
# NP rows: Sha & Pereira's feature set (`chunk` on y[i] and on (y[i-1], y[i]))
NP_TEMPLATES = "chunk-pair"
NP_SETUP = ("Templates `chunk-pair` (words and POS in a +-2 window and their conjunctions, each on the "
            "label and on the label pair), BIO constraint, first order.")
POS_TEMPLATES = "pos"
# words seen at least TAG_DICT_K times may only take their seen tags
TAG_DICT_K = 5
SEED = 0

# epoch caps: (perceptron, memm) per task; the whole default run must fit in 30 minutes on 2 cores
FULL_EPOCHS = {"np": {"perceptron": 80, "memm": 60}, "pos": {"perceptron": 50, "memm": 50}}
QUICK_EPOCHS = {"np": {"perceptron": 3, "memm": 3}, "pos": {"perceptron": 3, "memm": 3}}
QUICK_TRAIN_SENTENCES = 2000
