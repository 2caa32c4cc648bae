"""The ``eval`` and ``explain`` commands: a model's scores on a labelled corpus (text in conlleval's
layout, JSON, and an HTML report), and the terms of one sentence's score."""
import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from structperc.cli.loading import open_model
from structperc.cli.options import Encoding, InputFormat, Mirror, ModelFile, TagSep, value_of
from structperc.cli.progress import announce_compiling

EVAL_EPILOG = """Examples:

  structperc eval corpora/conll2000/test.txt --model np.npz

  structperc eval test.conllu --model pos.npz --json | jq .accuracy

  structperc eval corpora/conll2000/test.txt --model np.npz --report report.html
"""

EXPLAIN_EPILOG = """Examples:

  structperc explain corpora/conll2000/test.txt --model np.npz --sentence 3 --top 3

  echo "The old man ran" | structperc explain - --model pos.npz --format raw --json
"""

# what explaining a path calls beyond decoding (``model.explain``)
EXPLAINING = ("score.changes.one_label_changes", "score.changes.feature_weights")
# the confusions printed for a token task (--json has them all)
SHOWN_CONFUSIONS = 10
KIND_HEADERS = {"wrong_type": "wrong type", "wrong_boundary": "wrong boundary", "missed": "missed",
                "spurious": "spurious"}


def eval_command(
    test_file: Annotated[Path, typer.Argument(help="Labelled test corpus.")],
    model: ModelFile,
    mirror: Mirror = None,
    format: InputFormat = None,
    tag_sep: TagSep = None,
    encoding: Encoding = None,
    report: Annotated[Optional[Path], typer.Option(
        "--report", help="Also write an HTML report here: one self-contained file (tables, heat maps, the "
        "errors in context, the model's weights, explanations), written atomically.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
):
    """Score a model on a labelled corpus.

    A token task (POS): accuracy, then precision, recall, F1 and support of every tag and the
    largest confusions. A chunk task (BIO labels): conlleval's report (phrases found and correct;
    per type precision, recall, F1 and the number of phrases found), then each type's errors by kind:
    wrong type, wrong boundary, missed, spurious. --json gives all of it, with the confusion matrix.
    """
    from structperc._kernels.cache import tagging_kernels

    tagger = open_model(model, mirror)
    announce_compiling(tagging_kernels()
                       + (EXPLAINING if report is not None else ()))
    tagger.prepare()
    corpus = tagger.read(test_file, value_of(format), tag_sep=tag_sep, encoding=encoding)
    result = tagger.evaluate(corpus, details=True)
    if report is not None:
        from structperc.report import write_report

        write_report(report, tagger, corpus, result, model_path=model)
    result.pop("tokens_per_second", None)
    if json_output:
        for key in ("precision", "recall", "f1"):
            result.setdefault(key, None)
        typer.echo(json.dumps(result))
        return
    typer.echo(format_evaluation(result))


def format_evaluation(result):
    """The text of ``eval``: conlleval's layout for a chunk task, a per-tag table for a token task."""
    speed = result["tokens"] / max(result["seconds"], 1e-9)
    timing = f"{result['sentences']} sentences, {result['seconds']:.3f}s ({speed:,.0f} tokens/s)"
    if "f1" not in result:
        lines = [f"processed {result['tokens']} tokens in {timing}", f"accuracy: {result['accuracy']:6.2f}%", ""]
        width = max([len(tag) for tag in result["per_type"]] + [3])
        lines.append(f"{'tag':>{width}}  precision  recall      F1  support")
        for tag, s in result["per_type"].items():
            lines.append(f"{tag:>{width}}  {s['precision']:8.2f}%  {s['recall']:6.2f}%  {s['f1']:6.2f}  "
                         f"{s['support']:7d}")
        confusions = result.get("confusions", [])
        if confusions:
            lines += ["", f"largest confusions (gold -> predicted, tokens), {min(len(confusions), SHOWN_CONFUSIONS)} "
                          f"of {len(confusions)}:"]
            lines += [f"{gold:>{width}} -> {predicted:<{width}}  {count}"
                      for gold, predicted, count in confusions[:SHOWN_CONFUSIONS]]
        return "\n".join(lines)
    # conlleval's own lines (its counts per type are the phrases found, i.e. predicted)
    lines = [f"processed {result['tokens']} tokens with {result['phrases']} phrases; found: {result['found']} "
             f"phrases; correct: {result['correct']}.",
             f"accuracy: {result['accuracy']:6.2f}%; precision: {result['precision']:6.2f}%; "
             f"recall: {result['recall']:6.2f}%; FB1: {result['f1']:6.2f}"]
    for kind, s in result["per_type"].items():
        lines.append(f"{kind:>17}: precision: {s['precision']:6.2f}%; recall: {s['recall']:6.2f}%; "
                     f"FB1: {s['f1']:6.2f}  {s['found']}")
    lines += ["", f"{'errors':>17}  " + "  ".join(f"{h:>14}" for h in KIND_HEADERS.values())]
    for kind, s in [*result["per_type"].items(), ("all", {"errors": result["errors"]})]:
        lines.append(f"{kind:>17}  " + "  ".join(f"{s['errors'][k]:>14}" for k in KIND_HEADERS))
    lines += ["", timing]
    return "\n".join(lines)


def explain_command(
    input: Annotated[str, typer.Argument(help="Input file, or - for stdin (read as the model's training file).")],
    model: ModelFile,
    mirror: Mirror = None,
    sentence: int = typer.Option(1, "--sentence", "-s", min=1, help="The sentence to explain (1-based)."),
    gold: bool = typer.Option(False, "--gold", help="Compare each label with the input's gold label where they "
                              "differ (elsewhere with the runner-up); needs a label column."),
    top: int = typer.Option(5, "--top", min=0, help="Features shown per token (the rest summed on one line; "
                            "--json lists them all)."),
    format: InputFormat = None,
    tag_sep: TagSep = None,
    encoding: Encoding = None,
    json_output: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
):
    """Explain one predicted labeling: the terms of its score, which add up to the path's score.

    For each token: the label, the runner-up (the label that keeps the most of the score when it
    alone replaces the prediction) and the margin over it; the features that fired with their
    weights for both labels; the transition terms. Models trained by perceptron, crf, hinge, sgd,
    winnow and the other globally normalized rules (not memm).
    """
    from structperc._kernels.cache import tagging_kernels
    from structperc.errors import ConfigError, DataError
    from structperc.estimator.explaining import explain

    from structperc.model.explain import Explainer

    if json_output and top != 5:
        raise ConfigError("--top shapes the text view: --json lists every feature")
    tagger = open_model(model, mirror)
    if hasattr(tagger, "reranker_"):  # a reranked model (structperc.rerank.tagger): its base explains itself
        raise ConfigError(f"{model} is a reranked model, whose choices are not sums of token features: explain "
                          "its base model")
    Explainer(tagger.model_)  # refuses a model whose scores are not sums of weights, before any compiling
    corpus = tagger.read(input, value_of(format), require_label=gold, tag_sep=tag_sep, encoding=encoding)
    if sentence > corpus.n_sentences:
        raise DataError(f"{corpus.path} has {corpus.n_sentences} sentences: --sentence {sentence} is past its end")
    announce_compiling(tagging_kernels() + EXPLAINING)
    one = corpus.subset([sentence - 1])
    versus = one.columns[one.label] if gold else None
    if versus is not None:
        known = set(tagger.model_.labels)
        versus = [label if label in known else None for label in versus]
    explanation = explain(tagger, one, versus=versus)
    if json_output:
        typer.echo(json.dumps({"sentence": sentence, **explanation}))
    else:
        typer.echo(explanation.text(top))
