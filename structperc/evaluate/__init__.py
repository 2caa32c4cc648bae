"""Scores: token accuracy and chunk P/R/F1 with significance tests (``metrics.py``), and the scorers for
scikit-learn's model selection (``scorers.py``). Imports chunks, errors and readers only.
"""
