"""scikit-learn's ``BaseEstimator`` under ``Tagger`` and ``CRF``, loaded only when scikit-learn is
(``estimator/sklearn_base.py``): each case runs in a fresh interpreter, as a user's program would."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*parts):
    """The words a fresh interpreter prints when it runs the parts of code, one after the other."""
    code = "\n".join(textwrap.dedent(part) for part in parts)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


FIT = """
    X = [[{"w": "a"}, {"w": "b"}], [{"w": "b"}, {"w": "c"}, {"w": "a"}]] * 3
    y = [["A", "B"], ["B", "C", "A"]] * 3
    crf = CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=5).fit(X, y)
"""


def test_fit_and_predict_load_no_scikit_learn_then_it_is_the_base():
    out = run("""
        import sys
        from structperc import CRF, Tagger
        """, FIT, """
        print(crf.predict(X)[1] == y[1], "sklearn" in sys.modules, crf.get_params()["c1"])
        from sklearn.base import BaseEstimator, clone
        print(isinstance(crf, BaseEstimator), isinstance(Tagger(), BaseEstimator), clone(crf).c1,
              type(crf).set_params is BaseEstimator.set_params)
        """)
    assert out == ["True", "False", "0.1", "True", "True", "0.1", "True"]


def test_scikit_learn_loaded_first_is_the_base_at_once():
    out = run("""
        from sklearn.base import BaseEstimator
        from sklearn.model_selection import cross_val_score
        from structperc import CRF
        """, FIT, """
        print(isinstance(crf, BaseEstimator), len(cross_val_score(CRF(max_iterations=3), X, y, cv=2)))
        """)
    assert out == ["True", "2"]


def test_the_methods_only_scikit_learn_has_load_it():
    out = run("""
        import sys
        from structperc import CRF
        crf = CRF(c1=0.5)
        crf.set_params(c2=0.25)
        print("sklearn.base" in sys.modules, crf.c2, repr(crf).replace(" ", ""))
        """)
    assert out == ["True", "0.25", "CRF(c1=0.5,c2=0.25)"]
