"""The estimators: ``TaggerCore`` (``core.py``), the tagger the commands run without importing
scikit-learn, with its parameters checked once (``settings.py``), its fit (``fitting.py``: the
estimator calls it, it calls nothing back), its input adapters (``inputs.py``), its pipeline on files
(``files.py``) and the marginals of probabilistic models (``marginals.py``); ``Tagger``
(``tagger.py``), the same class on scikit-learn's ``BaseEstimator``; ``CRF`` (``crf.py``),
sklearn-crfsuite's estimator on a Tagger.
Imports train, model, features, readers and evaluate; nothing above.
"""
