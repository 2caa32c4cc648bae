"""The HTML report of an evaluation (``structperc eval ... --report FILE``): one self-contained file
with the scores, the confusion matrix, the errors in context with the explanation of each sentence,
and the model's weights. ``content.py`` gathers the data, ``svg.py`` draws the plots, ``page.py``
writes the page, ``report.js`` and ``report.css`` are inlined into it."""
from structperc.utils.atomic import atomic_write


def write_report(path, tagger, corpus, result, model_path=None):
    """Write the report of ``tagger`` on the labelled ``corpus`` (``result``: its
    ``evaluate(corpus, details=True)``) to ``path``, atomically. Returns ``path``."""
    from structperc.report.content import report_content
    from structperc.report.page import render

    text = render(report_content(tagger, corpus, result), corpus.path, str(model_path or ""))
    with atomic_write(path) as out:
        out.write(text)
    return path
