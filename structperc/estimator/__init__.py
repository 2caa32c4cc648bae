"""The estimator: ``Tagger`` (``tagger.py``) on scikit-learn's protocol (``base.py``), with its training run
(``training.py``) and its pipeline on files (``files.py``). Imports train, model, features, readers and
evaluate; nothing above.
"""
