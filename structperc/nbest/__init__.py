"""n-best lists: the k best labelings of every sentence with their task scores and oracles
(``lists.py``), and jackknifed lists of a tagger on its own training data. Imports the estimator.
"""
