"""The ``reproduce`` and ``compare`` commands, as plain functions with typer annotations.

``cli.py`` registers them::

    app.command("reproduce", epilog=REPRODUCE_EPILOG)(handles_errors(reproduce_command))
    app.command("compare", epilog=COMPARE_EPILOG)(handles_errors(compare_command))

The library functions they wrap are ``structperc.reproduce.run_collins2002`` and
``compare_tagged`` below (which never prints).
"""
import json
from pathlib import Path
from typing import Optional

import numpy as np
import typer

from .errors import ConfigError, InputFormatError

REPRODUCE_EPILOG = """Examples:

  structperc reproduce collins2002 --quick

  structperc reproduce collins2002 --only np,ewt --out experiments/results

  structperc reproduce collins2002 --ptb-root /data/treebank_3/tagged/pos/wsj --only ptb
"""

COMPARE_EPILOG = """Examples:

  structperc tag corpora/conll2000/test.txt --model a.npz > a.txt

  structperc tag corpora/conll2000/test.txt --model b.npz > b.txt

  structperc compare a.txt b.txt

  structperc compare a.txt b.txt --json --samples 1000 | jq .mcnemar.p_value

  structperc compare a.conllu b.conllu --gold xpos
"""

EXPERIMENTS = ("collins2002",)


def reproduce_command(
    experiment: str = typer.Argument(..., help="Which experiment: collins2002."),
    quick: bool = typer.Option(False, "--quick", help="Reduced run for CI: NP only, 3 epochs, 2,000 sentences."),
    corpora: Path = typer.Option(Path("corpora"), "--corpora", help="Folder holding the fetched corpora."),
    out: Path = typer.Option(Path("experiments/results"), "--out", help="Where to write the .md, .json and plots."),
    ptb_root: Optional[Path] = typer.Option(
        None, "--ptb-root", help="Penn Treebank tagged .pos files (wsj_SSNN.pos, flat or in SS/ folders)."),
    only: Optional[str] = typer.Option(None, "--only", help="Comma-separated datasets: np, ewt, wsj, ptb."),
):
    """Re-run a published experiment and write its results table beside the paper's numbers.

    collins2002: Collins (EMNLP 2002), averaged vs plain perceptron vs maximum entropy, feature
    cut-off 0 and 5, on NP chunking (CoNLL-2000) and POS tagging (UD EWT, the WSJ sample, and the
    full WSJ with --ptb-root). Writes OUT/collins2002.md, OUT/collins2002.json and one PNG of dev
    curves per dataset; prints one line per finished row on stderr.
    """
    from .reproduce import run_collins2002

    if experiment not in EXPERIMENTS:
        raise ConfigError(f"unknown experiment {experiment!r}: choose one of {', '.join(EXPERIMENTS)}")
    datasets = [d.strip() for d in only.split(",") if d.strip()] if only else None
    results = run_collins2002(corpora, out, quick=quick, ptb_root=ptb_root, datasets=datasets,
                              progress=lambda line: typer.echo(line, err=True))
    typer.echo(f"wrote {out / 'collins2002.md'} and {out / 'collins2002.json'} "
               f"({results['total_seconds'] / 60:.1f} min)", err=True)


# tagged CoNLL-U: the 10 CoNLL-U fields, then the prediction
_CONLLU_TAGGED_WIDTH = 11
_CONLLU_GOLD = {"upos": 3, "xpos": 4}


def _read_tagged(path, gold=None):
    """(corpus, words, gold labels, predictions) of a tagged output.

    gold : None (the second-to-last column), a 1-based column number, or for tagged CoNLL-U
    ``upos`` / ``xpos``. Tagged CoNLL-U (11 columns, a numeric first column) has no default: its
    second-to-last column is MISC.
    """
    from .readers import read_corpus

    corpus = read_corpus(path, format="conll")
    names = list(corpus.columns)
    if len(names) < 3:
        raise InputFormatError(path, 1, f"expected at least 3 columns (word ... gold prediction), found {len(names)}")
    conllu = len(names) == _CONLLU_TAGGED_WIDTH and corpus.columns[names[0]][0].isdigit()
    if gold is None:
        if conllu:
            raise ConfigError(f"{path} looks like tagged CoNLL-U: name its gold column with --gold upos "
                              "or --gold xpos")
        index = len(names) - 2
    elif gold in _CONLLU_GOLD:
        if not conllu:
            raise ConfigError(f"--gold {gold} needs tagged CoNLL-U (11 columns), {path} has {len(names)}")
        index = _CONLLU_GOLD[gold]
    elif gold.isdigit() and 1 <= int(gold) < len(names):
        index = int(gold) - 1
    else:
        raise ConfigError(f"--gold takes upos, xpos or a column number from 1 to {len(names) - 1}, got {gold!r}")
    words = corpus.columns[names[1 if conllu else 0]]
    return corpus, words, corpus.columns[names[index]], corpus.columns[names[-1]]


def compare_tagged(path_a, path_b, samples=10000, seed=0, gold=None):
    """Compare two tagged outputs of the same labelled input (last column: prediction; gold: the
    column before it, or as ``gold`` says, see ``_read_tagged``). Returns a dict: tokens, sentences,
    accuracy_a/b, mcnemar, and for BIO label sets f1_a/b and the paired bootstrap on chunk F1.

    Raises InputFormatError (file:line) when the files differ in tokens, words or gold labels.
    """
    from .evaluate import chunk_scores, mcnemar, paired_bootstrap, split
    from .model import is_bio

    corpus_a, words_a, gold_a, pred_a = _read_tagged(path_a, gold)
    corpus_b, words_b, gold_b, pred_b = _read_tagged(path_b, gold)
    if corpus_a.n_tokens != corpus_b.n_tokens:
        n = min(corpus_a.n_tokens, corpus_b.n_tokens)
        longer, corpus = (path_a, corpus_a) if corpus_a.n_tokens > n else (path_b, corpus_b)
        raise InputFormatError(longer, corpus.where(n)[1],
                               f"{corpus_a.n_tokens} tokens in {path_a} but {corpus_b.n_tokens} in {path_b}; "
                               "compare outputs of the same input")
    for what, xs, ys in (("word", words_a, words_b), ("gold label", gold_a, gold_b)):
        differ = np.flatnonzero(np.asarray(xs, dtype=object) != np.asarray(ys, dtype=object))
        if differ.size:
            k = int(differ[0])
            raise InputFormatError(path_b, corpus_b.where(k)[1],
                                   f"{what} {ys[k]!r} differs from {xs[k]!r} at {path_a}:{corpus_a.where(k)[1]}")
    if not np.array_equal(corpus_a.sentence_offsets, corpus_b.sentence_offsets):
        s = int(np.flatnonzero(corpus_a.sentence_offsets != corpus_b.sentence_offsets)[0])
        k = int(min(corpus_a.sentence_offsets[s], corpus_b.sentence_offsets[s]))
        raise InputFormatError(path_b, corpus_b.where(k)[1], "sentence boundaries differ from those of " f"{path_a}")
    gold = np.asarray(gold_a, dtype=object)
    result = {
        "a": str(path_a), "b": str(path_b), "tokens": corpus_a.n_tokens, "sentences": corpus_a.n_sentences,
        "accuracy_a": 100.0 * float(np.mean(gold == np.asarray(pred_a, dtype=object))),
        "accuracy_b": 100.0 * float(np.mean(gold == np.asarray(pred_b, dtype=object))),
        "mcnemar": mcnemar(gold_a, pred_a, pred_b),
    }
    labels = sorted(set(gold_a) | set(pred_a) | set(pred_b))
    if is_bio(labels):
        offsets = corpus_a.sentence_offsets
        gold_s, a_s, b_s = split(gold_a, offsets), split(pred_a, offsets), split(pred_b, offsets)
        scores_a, scores_b = chunk_scores(gold_s, a_s), chunk_scores(gold_s, b_s)
        result["chunks"] = {
            "precision_a": scores_a["precision"], "recall_a": scores_a["recall"], "f1_a": scores_a["f1"],
            "precision_b": scores_b["precision"], "recall_b": scores_b["recall"], "f1_b": scores_b["f1"],
        }
        result["paired_bootstrap"] = paired_bootstrap(gold_s, a_s, b_s, samples=samples, seed=seed)
    return result


def format_comparison(result):
    """A small text table of ``compare_tagged``'s result."""
    width = max(len(result["a"]), len(result["b"]), 6)
    chunks = result.get("chunks")
    header = f"{'system':<{width}}  accuracy" + ("   chunk P   chunk R  chunk F1" if chunks else "")
    lines = [f"{result['tokens']:,} tokens in {result['sentences']:,} sentences", header]
    for side in ("a", "b"):
        line = f"{result[side]:<{width}}  {result['accuracy_' + side]:7.2f}%"
        if chunks:
            line += (f"  {chunks['precision_' + side]:7.2f}%  {chunks['recall_' + side]:7.2f}%  "
                     f"{chunks['f1_' + side]:8.2f}")
        lines.append(line)
    m = result["mcnemar"]
    lines.append(f"McNemar (token decisions): {m['a_only']:,} right only in A, {m['b_only']:,} right only in B, "
                 f"p = {m['p_value']:.4g}")
    if "paired_bootstrap" in result:
        b = result["paired_bootstrap"]
        lines.append(f"paired bootstrap (chunk F1, {b['samples']:,} samples): delta {b['delta']:+.2f}, "
                     f"p = {b['p_value']:.4g}")
    return "\n".join(lines)


def compare_command(
    a: Path = typer.Argument(..., help="Tagged output A (`structperc tag` on a labelled input)."),
    b: Path = typer.Argument(..., help="Tagged output B, of the same input."),
    json_output: bool = typer.Option(False, "--json", help="One JSON object on stdout."),
    samples: int = typer.Option(10000, "--samples", min=1, help="Bootstrap samples (chunk F1 test)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap resampling."),
    gold: Optional[str] = typer.Option(
        None, "--gold", help="Gold column: a 1-based column number (default: the second-to-last), or "
        "upos / xpos for tagged CoNLL-U, which needs it."),
):
    """Compare two taggers' outputs on the same labelled input: accuracy, McNemar's test on token
    decisions, and for chunk (BIO) labels chunk P/R/F1 with a paired bootstrap test on F1.

    Each file is what `structperc tag` writes for a labelled input: whitespace-separated columns,
    blank lines between sentences, the prediction in the last column and the gold label in the one
    before it, or in the column --gold names (tagged CoNLL-U: --gold upos or --gold xpos).
    """
    result = compare_tagged(a, b, samples=samples, seed=seed, gold=gold)
    if json_output:
        typer.echo(json.dumps(result))
    else:
        typer.echo(format_comparison(result))
