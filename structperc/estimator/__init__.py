"""The estimators: ``Tagger`` (``tagger.py``) on scikit-learn's protocol (``base.py``), with its training
run (``training.py``), its pipeline on files (``files.py``) and the marginals of probabilistic models
(``marginals.py``); ``CRF`` (``crf.py``), sklearn-crfsuite's estimator on a Tagger. Imports train,
model, features, readers and evaluate; nothing above.
"""
