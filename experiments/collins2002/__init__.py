"""Reproduction of Collins (2002): ``run_collins2002`` re-runs the tables of the paper.

Collins, "Discriminative Training Methods for Hidden Markov Models: Theory and Experiments with
Perceptron Algorithms", EMNLP 2002, compares six ways of training the same tagger (the averaged and
the plain perceptron, each with feature count cut-off cc = 0 and cc = 5, and a maximum-entropy
tagger with cc = 0 and cc = 5) on NP chunking and on POS tagging, reporting the development score
and Numits, the training iteration with the best development score.

Here each (dataset, method) pair is one ``Tagger`` fit with ``dev=`` (which keeps the weights of the
best dev epoch, Collins' Numits), followed by one evaluation of the kept model on the test part.

- ``settings``: the paper's numbers, the six methods and the settings of the re-run;
- ``runner``: one row and the whole run (``progress`` receives one line per finished row);
- ``checks``: significance tests and Collins' findings checked on the rows;
- ``report``: the markdown results file and the plots of dev curves.

This package is not installed with structperc: ``structperc reproduce collins2002`` finds it in the
experiments/ directory of a source checkout (or editable install). Results go to experiments/results/.
"""
from .checks import PAIRS, check_patterns, near_best_epoch, significance
from .report import plot_dev_curves, render_markdown
from .runner import load_dataset, run_collins2002, run_row
from .settings import (FULL_EPOCHS, METHOD_KEYS, METHODS, PAPER, POS_ORDER, PUBLISHED, QUICK_EPOCHS, TAG_DICT_K,
                       Method)

__all__ = ["FULL_EPOCHS", "METHODS", "METHOD_KEYS", "Method", "PAIRS", "PAPER", "POS_ORDER", "PUBLISHED",
           "QUICK_EPOCHS", "TAG_DICT_K", "check_patterns", "load_dataset", "near_best_epoch", "plot_dev_curves",
           "render_markdown", "run_collins2002", "run_row", "significance"]
