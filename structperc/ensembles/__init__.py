"""Several models, one output: voting and bagging (``vote.py``), stacking, self- and tri-training
(``semisupervised.py``), and the ensemble model file (``base.py``, ``files.py``). Imports the estimator
and n-best lists; nothing above them.
"""
