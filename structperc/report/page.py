"""The report as one HTML file: the tables and plots written here (plots as inline SVG), the errors
and explanations as JSON that the page's script (``report.js``) lists page by page. No external
resource: the file opens offline."""
import json
from html import escape
from importlib.resources import files

import numpy as np

from structperc.evaluate.phrases import KINDS
from structperc.report.content import frequent
from structperc.report.svg import heat_map, line_plot

KIND_NAMES = {"wrong_type": "wrong type", "wrong_boundary": "wrong boundary", "missed": "missed",
              "spurious": "spurious", "wrong_tag": "wrong tag"}


def _asset(name):
    return files("structperc.report").joinpath(name).read_text(encoding="utf-8")


def _number(x, digits=2):
    return "" if x is None else f"{x:.{digits}f}"


def _table(headers, rows, css_class):
    head = "".join(f"<th>{escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f'<table class="{css_class}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def summary_section(result, test_path, model_path, model):
    items = [("test corpus", test_path), ("model", model_path),
             ("tokens", f"{result['tokens']:,}"), ("sentences", f"{result['sentences']:,}"),
             ("accuracy", f"{result['accuracy']:.2f}%")]
    if result.get("f1") is not None:
        items += [("phrases (gold / found / correct)", f"{result['phrases']:,} / {result['found']:,} / "
                                                       f"{result['correct']:,}"),
                  ("precision", f"{result['precision']:.2f}%"), ("recall", f"{result['recall']:.2f}%"),
                  ("F1", f"{result['f1']:.2f}")]
    if model.get("trainer"):
        items.append(("trained by", f"{model['trainer']}, order {model['order']}"
                      + (f", epoch {model['best_epoch']} kept" if model.get("best_epoch") else "")))
    if result.get("unknown_labels"):
        items.append(("gold labels the model does not know", ", ".join(result["unknown_labels"])))
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in items)
    return f'<section id="summary"><h2>Summary</h2><table class="summary">{rows}</table></section>'


def scores_section(result, chunks):
    per_type = result["per_type"]
    if chunks:
        headers = ["type", "precision", "recall", "F1", "gold", "found", "correct",
                   *[KIND_NAMES[k] for k in KINDS]]
        rows = [[t, _number(s["precision"]), _number(s["recall"]), _number(s["f1"]), s.get("gold", 0),
                 s.get("found", 0), s.get("correct", 0), *[s.get("errors", {}).get(k, 0) for k in KINDS]]
                for t, s in per_type.items()]
        title = "Per type (conlleval: found is the number of predicted phrases)"
    else:
        headers = ["tag", "precision", "recall", "F1", "support"]
        rows = [[t, _number(s["precision"]), _number(s["recall"]), _number(s["f1"]), s["support"]]
                for t, s in per_type.items()]
        title = "Per tag"
    confusions = _table(["gold", "predicted", "tokens"], [list(c) for c in result["confusions"][:20]], "confusions")
    return (f'<section id="scores"><h2>{escape(title)}</h2><div class="side-by-side"><div>'
            f'{_table(headers, rows, "per-type")}</div><div><h3>Largest confusions (tokens'
            f'{", by chunk type" if chunks else ""})</h3>{confusions}</div></div></section>')


def confusion_section(result, chunks):
    labels = result["confusion"]["labels"]
    matrix = np.asarray(result["confusion"]["matrix"])
    keep = frequent(labels, matrix.sum(axis=0) + matrix.sum(axis=1))
    note = (f"<p>the {len(keep)} most frequent of {len(labels)} labels</p>" if len(keep) < len(labels) else "")
    what = "chunk types of the tokens (O outside a chunk)" if chunks else "tags"
    svg = heat_map(matrix[np.ix_(keep, keep)], [labels[i] for i in keep], [labels[i] for i in keep],
                   "confusion matrix", mask_diagonal=True, row_title="gold", column_title="predicted")
    return (f'<section id="confusion"><h2>Confusion matrix</h2><p>Tokens by gold (rows) and predicted (columns) '
            f'{what}; the colour scale leaves the diagonal out.</p>{note}<div class="plot">{svg}</div></section>')


def errors_section(errors):
    kinds = sorted({r["kind"] for r in errors["records"]}, key=lambda k: list(KIND_NAMES).index(k))
    types = sorted({r["type"] for r in errors["records"]})
    kind_options = "".join(f'<option value="{k}">{escape(KIND_NAMES[k])}</option>' for k in kinds)
    type_options = "".join(f'<option value="{escape(t)}">{escape(t)}</option>' for t in types)
    note = f'<p class="note">{escape(errors["explain_note"])}</p>' if errors["explain_note"] else ""
    return f"""<section id="errors"><h2>Errors in context</h2>
<p>Each sentence with errors once, its errors named and outlined: the gold labels above, the
prediction below. <b>explain</b> shows the terms of the predicted path's score: where a token is
wrong, its label is compared with the gold one, elsewhere with its runner-up.</p>{note}
<div class="filters"><label>type <select id="filter-type"><option value="">all</option>{type_options}</select></label>
<label>kind <select id="filter-kind"><option value="">all</option>{kind_options}</select></label>
<button id="page-prev" type="button">&larr; previous</button><span id="page-info"></span>
<button id="page-next" type="button">next &rarr;</button></div>
<div id="error-list"></div></section>"""


def model_section(model):
    t = model["transition"]
    note = f" (the {t['shown']} most frequent of {t['labels']} labels)" if t["shown"] < t["labels"] else ""
    order = " The model is second order: these are its first-order terms." if model["order"] == 2 else ""
    svg = heat_map(t["matrix"], t["rows"], t["columns"], "transition weights", diverging=True, cell_text=False,
                   row_title="from", column_title="to", css_class="heatmap transitions")
    curve = model["curve"]
    if curve:
        plot = line_plot(curve["epochs"], curve["series"], "training curve", "epoch", "percent",
                         marker=curve.get("best_epoch"))
        curve_html = f'<h3>Training curve</h3><p>The dev scores of each epoch.</p><div class="plot">{plot}</div>'
    else:
        curve_html = ('<h3>Training curve</h3><p class="note">The model recorded no training curve: '
                      'train with --dev to record the dev score of each epoch.</p>')
    labels = "".join(f'<option value="{escape(label)}">{escape(label)}</option>' for label in model["top_features"])
    return f"""<section id="model"><h2>The model</h2>
<h3>Transition weights</h3><p>From (rows) to (columns); red positive, blue negative, grey forbidden by the
constraint{note}.{order}</p><div class="plot">{svg}</div>
<h3>Top state features</h3><p>The largest and smallest emission weights of a label.
<label>label <select id="feature-label">{labels}</select></label></p>
<div id="feature-tables"></div>{curve_html}</section>"""


def render(content, test_path, model_path):
    """The HTML text of the report."""
    result, errors, model = content["result"], content["errors"], content["model"]
    data = {"chunks": errors["chunks"], "records": errors["records"],
            "sentences": {str(k): v for k, v in errors["sentences"].items()},
            "explanations": {str(k): v for k, v in errors["explanations"].items()},
            "names": errors["names"], "kindNames": KIND_NAMES, "topFeatures": model["top_features"]}
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    title = f"structperc report: {test_path}"
    body = "".join([summary_section(result, test_path, model_path, model), scores_section(result, errors["chunks"]),
                    confusion_section(result, errors["chunks"]), errors_section(errors), model_section(model)])
    nav = "".join(f'<a href="#{k}">{v}</a>' for k, v in (("summary", "summary"), ("scores", "scores"),
                                                          ("confusion", "confusions"), ("errors", "errors"),
                                                          ("model", "model")))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title><style>{_asset("report.css")}</style></head>
<body><header><h1>Why is it wrong?</h1><nav>{nav}</nav></header><main>{body}</main>
<script type="application/json" id="report-data">{payload}</script>
<script>{_asset("report.js")}</script></body></html>
"""
