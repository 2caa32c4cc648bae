"""Command line for n-best lists and reranking: ``structperc nbest`` and ``structperc rerank train|apply``.

``register(app)`` adds them to the application (whose ``main`` handles their errors).
"""
import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from structperc.cli.options import (Encoding, Json, Mirror, ModelFile, Output, Quiet, check_applies, check_json,
                                    choices, deprecated, hidden, plural, renamed, split_list, value_of)
from structperc.cli.progress import announce_compiling, examples

NBEST_EPILOG = """Examples:

  structperc nbest corpora/conll2000/test.txt --model chunker.npz -k 20 --output test.nbest

  structperc nbest corpora/conll2000/test.txt --model chunker.npz -k 20 --output-format svmrank \\
      --vocab train.vocab.json --output test.svm

  structperc nbest train.txt --model chunker.npz --output-format svmrank --vocab-out train.vocab.json --output train.svm
"""
TRAIN_EPILOG = """Examples:

  structperc rerank train train.svm --model reranker.npz --epochs 10 --seed 0 --vocab train.vocab.json

  structperc rerank train train.svm --model voted.npz --learner voted --epochs 2

  structperc rerank train train.svm --model kernel.npz --learner kernel --kernel poly:2 --epochs 1

  structperc rerank train train.svm --model boost.npz --learner boost --boost-rounds 2000 --epsilon 0.001
"""
GROUP_EPILOG = """Examples:

  structperc nbest train.txt --model chunker.npz --output-format svmrank --vocab-out train.vocab.json --output train.svm

  structperc rerank train train.svm --model reranker.npz

  structperc rerank apply test.svm --model reranker.npz --output choices.txt
"""
APPLY_EPILOG = """Example:

  structperc rerank apply test.svm --model reranker.npz --output choices.txt
"""


NBestFormat = choices("NBestFormat", ("block", "svmrank"))
Learner = choices("Learner", ("perceptron", "voted", "kernel", "boost"))
CANDIDATES = 20


def nbest_command(
    input: Annotated[str, typer.Argument(
        help="Input corpus (with or without the gold label column), or - for stdin.")],
    model: ModelFile,
    mirror: Mirror = None,
    candidates: Optional[int] = typer.Option(None, "--candidates", "-k", min=1,
                                             help=f"Candidates per sentence (default {CANDIDATES})."),
    k: Optional[int] = typer.Option(None, "--k", min=1, hidden=True),
    output: Output = None,
    output_format: Optional[NBestFormat] = typer.Option(
        None, "--output-format", help="block (readable, the default) or svmrank (features for a reranker)."),
    format: Optional[NBestFormat] = hidden("--format"),
    encoding: Encoding = None,
    features: Optional[str] = typer.Option(None, "--features",
                                           help="svmrank: global features, comma separated "
                                                "(default: the chunk features, GLOBAL_FEATURES)."),
    vocab: Optional[Path] = typer.Option(None, "--vocab", help="svmrank: read the feature vocabulary (JSON) "
                                         "learned on training lists; unseen features are dropped."),
    vocab_out: Optional[Path] = typer.Option(None, "--vocab-out", help="svmrank: learn the feature vocabulary "
                                             "on these lists and write it (JSON)."),
    quiet: Quiet = False,
    json_output: Json = False,
):
    """Write the k best labelings of every sentence, and report the oracle vs the 1-best score (for a
    reranked model, those of its base, which it reranks).

    block: for each sentence and candidate a header line "# sentence I candidate R score S task T",
    then the token lines (input columns + candidate label), then a blank line. svmrank:
    "TARGET qid:N ID:VALUE ... # sentence I candidate R ...", one line per candidate.
    """
    from structperc._kernels.cache import nbest_kernels
    from structperc.rerank.pipeline import write_nbest_file
    from structperc.cli.loading import open_model
    from structperc.rerank.tagger import is_reranked

    k = renamed(candidates, k, "--k", "--candidates", default=CANDIDATES)
    format = value_of(renamed(output_format, format, "--format", "--output-format", default="block"))
    if format == "block":
        check_applies("block", {"block": "--output-format block", "svmrank": "--output-format svmrank"},
                      {"features": ("svmrank",), "vocab": ("svmrank",), "vocab_out": ("svmrank",)},
                      {"features": features, "vocab": vocab, "vocab_out": vocab_out})
    if vocab and vocab_out:
        raise typer.BadParameter("gives a fixed vocabulary, --vocab-out learns one: give one of them",
                                 param_hint="'--vocab'")
    check_json(json_output, output, "the lists")
    tagger = open_model(model, mirror, quiet)
    if is_reranked(tagger):  # the lists it reranks: its base's
        tagger = tagger.base_
    announce_compiling(nbest_kernels(labelled=_has_gold(tagger, input, encoding)))
    summary = write_nbest_file(tagger, input, k, output=output, format=format,
                               features=split_list(features), vocab=vocab, vocab_out=vocab_out, encoding=encoding)
    if json_output:
        typer.echo(json.dumps(summary))
    elif not quiet:
        line = (f"{plural(summary['sentences'], 'sentence')}, {plural(summary['candidates'], 'candidate')} (k = {k}), "
                f"{summary['tokens_per_second']:,.0f} tokens/s in the k-best kernel")
        if "oracle" in summary:
            line += f"; {summary['metric']}: 1-best {summary['one_best']:.2f}, oracle {summary['oracle']:.2f}"
        typer.echo(line, err=True)


def _has_gold(tagger, input, encoding):
    """Whether the input has the gold label column, as ``nbest`` reads it (its first sentence is
    read); False for standard input, which cannot be read twice (its oracle kernel, small, then
    compiles unannounced)."""
    from structperc.estimator.files import check_templates
    from structperc.readers import iter_corpus

    check_templates(tagger)  # a model of feature dicts reads no file: its own error, before any reading
    if input == "-":
        return False
    batches = iter_corpus(input, **tagger.reader_options(encoding=encoding), batch_sentences=1, allow_empty=True)
    try:
        first = next(batches, None)
    finally:
        batches.close()
    return first is not None and first.label is not None


# which options apply to which learner; an option not listed applies to all
LEARNER_OPTIONS = {
    "epochs": ("perceptron", "voted", "kernel"), "seed": ("perceptron", "voted", "kernel"),
    "average": ("perceptron",), "no_average": ("perceptron",),
    "boost_rounds": ("boost",), "rounds": ("boost",), "epsilon": ("boost",),
    "kernel": ("voted", "kernel"),
}
LEARNER_NAMES = {name: f"--learner {name}" for name in ("perceptron", "voted", "kernel", "boost")}
DEFAULTS = {"epochs": 10, "seed": 0, "boost_rounds": 1000, "epsilon": 0.001}


def _learner(learner, voted, kernel, boost):
    """(--learner or the learner the deprecated flags --voted, --kernel SPEC and --boost ask for, the
    deprecation notices to print once the options are found consistent)."""
    old = [flag for flag, value in (("--voted", voted), ("--boost", boost)) if value]
    if learner is not None:
        if old:
            raise typer.BadParameter("is the deprecated spelling of --learner: give only --learner",
                                     param_hint=f"'{old[0]}'")
        return value_of(learner), []
    if boost and (voted or kernel):
        raise typer.BadParameter("does not combine with --voted or --kernel", param_hint="'--boost'")
    notices = [(flag, f"--learner {flag[2:]}") for flag in old]
    if kernel and not voted:
        notices.append(("--kernel without --learner", "--learner kernel --kernel SPEC"))
    return ("boost" if boost else "voted" if voted else "kernel" if kernel else "perceptron"), notices


def rerank_train_command(
    nbest_file: Annotated[Path, typer.Argument(help="Training lists in SVMrank format (ours or any tool's).")],
    model: Annotated[Path, typer.Option("--model", "-m", help="Where to write the reranker (.npz).")],
    learner: Optional[Learner] = typer.Option(
        None, help="perceptron: the averaged ranking perceptron (default); voted, kernel: the voted or averaged "
        "perceptron in dual form (Freund & Schapire); boost: ranking boosting (Collins 2000)."),
    epochs: Optional[int] = typer.Option(None, min=1, help="Passes over the groups (default 10; not boost)."),
    seed: Optional[int] = typer.Option(None, help="Seed of the per-epoch shuffles (default 0; not boost)."),
    average: Optional[bool] = typer.Option(None, "--average/--no-average",
                                           help="Average the weights (default: on; perceptron only)."),
    score_weight: Optional[float] = typer.Option(None, help="Initial weight of feature 1 (the relative base score; "
                                                 "default 1, with boost fitted by the exponential loss); "
                                                 "0 for files whose feature 1 is something else."),
    vocab: Optional[Path] = typer.Option(None, "--vocab", help="Feature vocabulary (from nbest --vocab-out) "
                                         "to store in the reranker."),
    kernel: Optional[str] = typer.Option(None, "--kernel", help="Kernel of the dual perceptron (voted, kernel): "
                                         "linear (default) or poly:D, (1 + x.z)^D."),
    boost_rounds: Optional[int] = typer.Option(None, "--boost-rounds", min=0,
                                               help=f"Feature updates of boost (default {DEFAULTS['boost_rounds']})."),
    epsilon: Optional[float] = typer.Option(None, min=0, help="Smoothing of the boost step, 1/2 log((W+ + eZ)/(W- + "
                                            f"eZ)) (default {DEFAULTS['epsilon']})."),
    voted: bool = typer.Option(False, "--voted", hidden=True),
    boost: bool = typer.Option(False, "--boost", hidden=True),
    rounds: Optional[int] = typer.Option(None, "--rounds", min=0, hidden=True),
    quiet: Quiet = False,
    json_output: Json = False,
):
    """Train a reranker on SVMrank-format n-best lists: the averaged ranking perceptron (default),
    the voted or kernel perceptron in dual form, or ranking boosting (--learner).

    The gold candidate of each qid is the one with the highest target (ties: the first line);
    a prediction is a mistake when its target is lower. An option of another learner is an error.
    """
    from structperc._kernels.cache import RERANKERS
    from structperc.rerank.pipeline import train_reranker_file

    learner, notices = _learner(learner, voted, kernel, boost)
    given_options = {"epochs": epochs, "seed": seed, "average": average is True, "no_average": average is False,
                     "boost_rounds": boost_rounds,
                     "rounds": rounds, "epsilon": epsilon, "kernel": kernel}
    check_applies(learner, LEARNER_NAMES, LEARNER_OPTIONS, given_options)
    boost_rounds = renamed(boost_rounds, rounds, "--rounds", "--boost-rounds")
    for old, new in notices:
        deprecated(old, new)
    given_options["boost_rounds"] = boost_rounds
    values = {name: DEFAULTS[name] if value is None else value for name, value in given_options.items()
              if name in DEFAULTS}
    score_weight = 1.0 if score_weight is None and learner != "boost" else score_weight
    if learner == "boost":
        params = {"learner": "boost", "rounds": values["boost_rounds"], "epsilon": values["epsilon"]}
    elif learner in ("voted", "kernel"):
        params = {"learner": "dual", "epochs": values["epochs"], "kernel": kernel or "linear",
                  "vote": "voted" if learner == "voted" else "averaged"}
    else:
        params = {"epochs": values["epochs"], "average": average is not False}
    announce_compiling(RERANKERS[params.get("learner", "perceptron")])
    reranker, summary = train_reranker_file(nbest_file, vocab=vocab, score_weight=score_weight, seed=values["seed"],
                                            **params)
    reranker.save(model)
    summary = {"model": str(model), **summary}
    if json_output:
        typer.echo(json.dumps(summary))
    elif not quiet:
        if learner == "boost":
            progress = f"exponential loss {summary['history'][0]['loss']:.4g} -> {summary['history'][-1]['loss']:.4g}"
        else:
            progress = f"mistakes per epoch {[h['mistakes'] for h in summary['history']]}"
        typer.echo(f"saved {model}: {summary['groups']:,} groups, {summary['candidates']:,} candidates, "
                   f"{progress}", err=True)


def rerank_apply_command(
    nbest_file: Annotated[Path, typer.Argument(help="Lists in SVMrank format.")],
    model: ModelFile,
    output: Output = None,
    quiet: Quiet = False,
    json_output: Json = False,
):
    """Choose one candidate per qid. Output, one line per qid:
    "QID INDEX SCORE # COMMENT" (INDEX: 0-based position of the chosen line within its qid; SCORE: w . x).
    When the file has targets, reports the reranked score against the first candidate's and the oracle's.
    """
    from structperc._kernels.cache import RERANK_APPLYING
    from structperc.rerank.pipeline import Reranker, apply_reranker_file

    check_json(json_output, output, "the choices")
    reranker = Reranker.load(model)
    announce_compiling(RERANK_APPLYING.get(reranker.learner, RERANK_APPLYING["perceptron"]))
    summary = apply_reranker_file(reranker, nbest_file, output)
    if json_output:
        typer.echo(json.dumps(summary))
    elif "reranked" in summary and not quiet:
        key = next((k for k in ("f1", "accuracy") if k in summary["reranked"]), "mean_target")
        typer.echo(f"{summary['groups']:,} groups; {key}: reranked {summary['reranked'][key]:.2f}, "
                   f"first candidate {summary['first'][key]:.2f}, best target {summary['oracle'][key]:.2f}", err=True)


FIT_EPILOG = """Examples:

  structperc train ned.train --templates ner --model ner.npz

  structperc rerank fit ned.train --base ner.npz --dev ned.testa --output reranked.npz

  structperc eval ned.testb --model reranked.npz
"""
FitLearner = choices("FitLearner", ("scaled", "mira", "perceptron"))


def rerank_fit_command(
    train: Annotated[Path, typer.Argument(help="Labelled training corpus (read as the base model's was).")],
    base: Annotated[Path, typer.Option("--base", help="The base model file (first order); its settings are "
                                       "retrained on each jackknife fold.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the reranked model (.npz).")],
    dev: Annotated[Optional[Path], typer.Option("--dev", help="Labelled dev corpus: the learner's epochs and "
                                                "base-score weight are chosen on it.")] = None,
    candidates: int = typer.Option(20, "--candidates", "-k", min=2, help="Candidates per sentence."),
    learner: Optional[FitLearner] = typer.Option(
        None, help="perceptron: the averaged ranking perceptron (default, the winner on CoNLL-2002 testa); scaled: "
        "the loss-scaled ranking perceptron; mira: MIRA over the candidates' loss."),
    families: Optional[str] = typer.Option(None, "--families", help="Feature families, comma separated, of "
                                           "entity, around, cluster, chunk, phrase, posterior, document, corpus, "
                                           "gazetteer, sequence, rank (default: document, gazetteer, sequence, "
                                           "rank, posterior)."),
    clusters: Optional[Path] = typer.Option(None, "--clusters", help="Word clusters for the cluster family: the "
                                            "paths file of `structperc clusters` (bitstring, word, count), kept "
                                            "in the model file."),
    folds: int = typer.Option(5, "--folds", min=2, help="Jackknife folds (contiguous blocks of sentences)."),
    document_size: Optional[int] = typer.Option(None, "--document-size", min=1, help="Sentences per document "
                                                "where the file marks none (-DOCSTART-, # newdoc)."),
    seed: int = typer.Option(0, help="Seed of the learner's shuffles."),
    encoding: Encoding = None,
    quiet: Quiet = False,
    json_output: Json = False,
):
    """Fit a reranked model in one step: the base's jackknifed k-best lists of TRAIN, the features
    (by default: what each entity gets elsewhere in its document, gazetteers, label trigrams and
    entity counts, the rank, each entity's probability in its list), the learner, its settings
    chosen on --dev. The file is a model: tag, eval and load_model take it."""
    from structperc.ensembles.files import read_model
    from structperc.rerank.tagger import DEFAULT_FAMILIES, DEFAULT_LEARNER, RerankedCore

    tagger = read_model(base)
    if getattr(tagger, "members", None) is not None or not hasattr(tagger, "get_params"):
        raise typer.BadParameter(f"{base} is not a single model", param_hint="'--base'")
    learner = value_of(learner) or DEFAULT_LEARNER
    families = split_list(families) or list(DEFAULT_FAMILIES)
    if clusters is not None and "cluster" not in families:
        raise typer.BadParameter("is read by the cluster family only: add cluster to --families",
                                 param_hint="'--clusters'")
    model = RerankedCore(base=tagger, k=candidates, learner=learner, families=families, folds=folds,
                         document_size=document_size, seed=seed, clusters=clusters)
    model.check_params()
    corpus = tagger.read(train, encoding=encoding)
    dev_corpus = tagger.read(dev, encoding=encoding) if dev is not None else None
    say = (lambda message: None) if quiet or json_output else (lambda message: typer.echo(message, err=True))
    model.fit(corpus, dev=dev_corpus, progress=say)
    model.save(output)
    summary = {"output": str(output), "k": candidates, "learner": learner, "families": model.families_,
               "features": len(model.vocabulary_), "training_lists": model.training_lists_,
               "selection": model.selection_}
    if "posterior" in model.families_:
        summary["temperature"] = model.temperature_
    if json_output:
        typer.echo(json.dumps(summary))
    elif not quiet:
        lists = model.training_lists_
        typer.echo(f"saved {output}: {len(model.vocabulary_):,} features; training lists 1-best "
                   f"{lists.get('one_best', 0):.2f}, oracle {lists.get('oracle', 0):.2f}"
                   + (f"; posterior temperature {model.temperature_:.3g}" if "temperature" in summary else ""),
                   err=True)


def register(app):
    """Add ``nbest`` and the ``rerank`` sub-app (train, apply) to ``app``."""
    app.command("nbest", epilog=examples(NBEST_EPILOG))(nbest_command)
    rerank_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                             help="Rerank n-best lists: ranking perceptron (averaged, voted, kernel) or boosting.",
                             epilog=examples(GROUP_EPILOG))
    rerank_app.command("train", epilog=examples(TRAIN_EPILOG))(rerank_train_command)
    rerank_app.command("apply", epilog=examples(APPLY_EPILOG))(rerank_apply_command)
    rerank_app.command("fit", epilog=examples(FIT_EPILOG))(rerank_fit_command)
    app.add_typer(rerank_app, name="rerank")
    return rerank_app
