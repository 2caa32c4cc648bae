"""The pipeline on files: read a training file (from the encoding cache, or encoded) for a fit; and,
for a fitted tagger, read, tag and score later files as its training file was read, batch by batch.
The functions take what they need as arguments and return results; they never set the tagger's
attributes."""
import os
import time

import numpy as np

from structperc.chunks import is_bio
from structperc.features.dicts import AttributeEncoder
from structperc.utils.digest import file_sha256
from structperc.features.encode import FeatureEncoder
from structperc.utils.interning import InternedColumn
from structperc.errors import ConfigError
from structperc.model.forcing import check_forced, forced_label_ids
from structperc.estimator.inputs import ColumnsInput


def read_training_corpus(path, **reader_options):
    """``read_corpus`` for training: each distinct string held once and no original lines (training
    never writes them back), so that a token costs one pointer per column instead of its own string
    objects. The columns are lists of strings (``read_training_columns``, spelled out) for code that
    subsets and extends them: continued training, bagging and stacking."""
    from structperc.readers.parallel import read_training_columns

    corpus = read_training_columns(path, **reader_options)
    corpus.columns = {name: list(column) for name, column in corpus.columns.items()}
    return corpus


def recorded_options(reader_options):
    """The reader options a model records of how its training file was read (``tag_sep`` only when given;
    the encoding always, the default of later reads)."""
    options = {k: v for k, v in reader_options.items() if v is not None or k != "tag_sep"}
    if options.get("encoding") is None:
        options["encoding"] = "utf-8"
    return options


def read_training_files(path, dev=None, **reader_options):
    """(training Corpus, dev Corpus or None, the recorded reader options) of a training file and a dev
    file, as ``fit_file`` reads them (the training file by ``read_training_corpus``)."""
    from structperc.readers import read_corpus

    reader_options = recorded_options(reader_options)
    dev_corpus = read_corpus(dev, **reader_options) if dev is not None else None
    return read_training_corpus(path, **reader_options), dev_corpus, reader_options


def prepare_file(fitting, path, reader_options):
    """The Prepared model (``fitting.Prepared``) of a labelled corpus file read with ``reader_options``
    (the recorded ones: ``recorded_options``): from the settings' ``cache_dir`` when it holds the
    file's encoding, else read (by several processes with --workers N) and encoded."""
    from structperc.readers.parallel import read_training_columns

    settings = fitting.settings
    if settings.cache_dir is not None:
        encoder, encoded, found, structure = cached_encoding(fitting, path, reader_options)
        return fitting.prepare_encoded(encoder, encoded, {**reader_options, **found}, structure)
    # --workers N on this machine: N processes read N parts of the file at once, while this one
    # imports dask for the mixing
    local = settings.client is None and settings.scheduler is None
    parts = int(settings.workers) if local else 1
    meanwhile = _import_dask if settings.mixing else None
    # no reference to the training corpus is kept here: its columns go as soon as they are value ids
    return fitting.prepare(ColumnsInput(read_training_columns(path, parts=parts, meanwhile=meanwhile, **reader_options),
                                        reader_options, release=True))


def cached_encoding(fitting, path, reader_options):
    """(encoder, encoded corpus, what was read: format, columns, label, Structure) of the training file
    ``path``, from the settings' ``cache_dir`` (memory-mapped) or read, encoded and stored there. The
    key covers everything that changes the encoding: the file, how it is read, the templates (a
    preset's text, a template file's contents), the lexicons' contents and the package's version."""
    from structperc.features.cache import load_or_build
    from structperc.features.encoded import EncodedCorpus
    from structperc.readers import read_corpus

    settings = fitting.settings
    fields = ("sentence_offsets", "feature_offsets", "feature_ids", "pair_offsets", "pair_ids", "labels",
              "word_ids")

    def build():
        source = ColumnsInput(read_corpus(path, **reader_options))
        encoder, encoded, _ = fitting.encode(source)
        state, meta = encoder.state()
        arrays = {f"encoder__{k}": v for k, v in state.items()}
        arrays.update({f"encoded__{k}": getattr(encoded, k) for k in fields if getattr(encoded, k) is not None})
        return arrays, {"encoder": meta, "input": source.read}

    arrays, meta, _ = load_or_build(settings.cache_dir, path, encoding_key(settings, reader_options), build)
    state = {k[len("encoder__"):]: v for k, v in arrays.items() if k.startswith("encoder__")}
    encoder = FeatureEncoder.from_state(state, meta["encoder"])
    encoded = EncodedCorpus(**{k: arrays.get(f"encoded__{k}") for k in fields})
    # the same choice as build's, from the same data (a cache hit does not run build)
    structure = fitting.choose(meta["input"]["columns"], InternedColumn(encoded.labels, encoder.labels_),
                               encoded.sentence_offsets)
    return encoder, encoded, meta["input"], structure


def encoding_key(settings, reader_options):
    """What the encoding of a training file depends on besides the file itself (``features.cache``)."""
    from importlib.metadata import version

    from structperc.features.lexicon import read_lexicons
    from structperc.features.templates import PRESETS

    templates = settings.templates if isinstance(settings.templates, (str, type(None))) else list(settings.templates)
    options = {"templates": templates, "min_count": settings.min_count, "rare_threshold": settings.rare_threshold,
               "hash_bits": settings.hash_bits, "reader": reader_options,
               "version": version("structperc")}
    if isinstance(templates, str) and templates in PRESETS:
        options["preset"] = [str(t) for t in PRESETS[templates]]
    elif isinstance(templates, str) and os.path.isfile(templates):
        options["template_file"] = file_sha256(templates)
    if settings.lexicons:
        lexicons = read_lexicons(settings.lexicons, settings.lexicon_lower)
        options["lexicons"] = {name: lexicon_digest(lexicon) for name, lexicon in sorted(lexicons.items())}
    return options


def lexicon_digest(lexicon):
    """The sha256 of a lexicon's contents: its entries and phrases, in a fixed order."""
    import hashlib
    import json

    contents = json.dumps([sorted(map(repr, lexicon.entries.items())), sorted(map(repr, lexicon.phrases.items())),
                           bool(lexicon.lower)])
    return hashlib.sha256(contents.encode("utf-8")).hexdigest()


def reader_options(tagger, format=None, tag_sep=None, encoding=None):
    """The ``read_corpus`` options recorded at fitting; ``format``, ``tag_sep`` and ``encoding``
    replace them when given. Another format drops the recorded options of the training format
    (its tag separator; its column names and label when the other format fixes its own)."""
    from structperc.readers.registry import FORMATS, resolve_format

    options = dict(tagger.model_.metadata.get("input", {}))
    if format is not None and format != options.get("format"):
        parser = FORMATS[resolve_format(None, format)]
        options["format"] = format
        options.pop("tag_sep", None)
        if parser.fixed_columns is not None:
            options.pop("columns", None)
            label = options.get("label")
            if label is not None and (parser.default_label is None
                                      or (label not in parser.fixed_columns and "+" not in label)):
                options.pop("label")
    if tag_sep is not None:
        options["tag_sep"] = tag_sep
    if encoding is not None:
        options["encoding"] = encoding
    return options


def read(tagger, path, format=None, require_label=True, tag_sep=None, encoding=None):
    """Read a corpus file as the training corpus was read (in the encoding recorded, unless given)."""
    from structperc.readers import read_corpus

    check_templates(tagger)
    return read_corpus(path, **tagger.reader_options(format, tag_sep, encoding), require_label=require_label)


def check_templates(tagger):
    if isinstance(tagger.model_.encoder, AttributeEncoder):
        raise ConfigError("this model was trained on feature dicts and has no templates: "
                          "tag its input with the Python API (Tagger.predict on dicts)")


def tag_file(tagger, input, output=None, format=None, marginals=None, probability=False, tag_sep=None,
             force_column=None, encoding=None, output_format=None, keep_gold=False, familiarity=False):
    """Read, tag and write batch by batch: the input columns plus the predicted label (``write_tagged``).

    input : file, or "-" for standard input; read lazily, so files larger than memory stream.
    output : file written atomically (nothing is left on an error or an interrupt), or None for
        standard output.
    marginals : None, "best" (P(predicted label | x) per token) or "all" (one "label:P" column
        per label); probability : write "# probability P(y|x)" before each sentence. Both need a
        probabilistic model (crf, memm).
    force_column : None, or the 1-based input column holding a forced label or the missing
        symbol (``missing_label``, or "?" when the model was trained without one) per token;
        decoding and the marginals keep the forced labels. A forced label that the model does
        not know or that the transition constraint forbids is an InputFormatError at its line.
    encoding : the input's encoding (default: the one recorded at fitting).
    output_format : None (as the input: one token a line, or CoNLL-U for CoNLL-U input) or "tagged"
        (one sentence a line of word/TAG tokens).
    keep_gold : CoNLL-U input: keep the label's own field and add the prediction as a column.
    familiarity : warn when the model knows little of the first batch (``features.familiarity``: a
        model of another task or language), as the input is read, so that it is read once.

    Returns counts and the time from opening the input to the last write, less any compiling of
    kernels: sentences, tokens, seconds, tokens_per_second.
    """
    from structperc.utils.atomic import open_output
    from structperc.estimator.text import add_input_columns, chunk_annotations
    from structperc.features.familiarity import warn_if_unfamiliar
    from structperc.readers import iter_corpus, write_tagged
    from structperc.readers.text_writer import write_conllu, write_jsonl
    from structperc.readers.writer import OUTPUT_FORMATS, TEXT_OUTPUT_FORMATS

    if marginals not in (None, "best", "all"):
        raise ConfigError(f"marginals takes 'best' or 'all', got {marginals!r}")
    if output_format is not None and output_format not in OUTPUT_FORMATS:
        raise ConfigError(f"unknown output format {output_format!r}; choose from {', '.join(OUTPUT_FORMATS)}")
    check_templates(tagger)
    model = tagger.model_
    if output_format in TEXT_OUTPUT_FORMATS:
        if format not in (None, "raw"):
            raise ConfigError(f"output format {output_format} writes tagged raw text with its offsets: "
                              f"the input must be raw text (format raw), got format {format}")
        if marginals or probability or force_column is not None or keep_gold:
            raise ConfigError(f"output format {output_format} takes none of marginals, probability, "
                              f"force_column, keep_gold")
        format = "raw"
    elif format is None and force_column is None and not keep_gold:
        from structperc.readers.registry import looks_like_raw_text

        read = model.metadata.get("input", {})
        if looks_like_raw_text(input, read.get("format"), read.get("columns"), encoding or read.get("encoding")
                               or "utf-8"):
            format = "raw"  # raw text is read as raw text whatever the output format
    if marginals or probability:
        from structperc.estimator.marginals import check_probabilistic

        check_probabilistic(model)
    options = tagger.reader_options(format, tag_sep, encoding)
    force_name = None
    if force_column is not None:
        columns = list(options.get("columns") or [])
        if int(force_column) < 1:
            raise ConfigError(f"force_column is 1-based, got {force_column!r}")
        columns += [f"col{i}" for i in range(len(columns) + 1, int(force_column) + 1)]
        force_name = columns[int(force_column) - 1]
        options["columns"] = columns
    missing = tagger.missing_symbol()
    from structperc._kernels.cache import compiling_seconds

    start, compiled = time.perf_counter(), compiling_seconds()
    sentences = tokens = 0
    # the label ids and the encoded input: for the marginals, and the chunks' scores of jsonl
    needs_ids = bool(marginals or probability) or (output_format == "jsonl" and is_bio(model.labels))
    with open_output(output) as out:
        for batch in iter_corpus(input, **options, require_label=False, allow_empty=True):
            if familiarity and getattr(model.encoder, "vocabularies_", None):
                warn_if_unfamiliar(model.encoder, batch)
                familiarity = False
            if batch.format == "raw":
                add_input_columns(tagger, batch)
            forced = None
            if force_name is not None:
                if force_name not in batch.columns:
                    raise ConfigError(f"force_column={force_column}: the input has no column {force_column}")
                forced = forced_label_ids(model, batch.columns[force_name], missing, batch.path, batch.line_numbers)
                check_forced(model, forced, batch.sentence_offsets, batch.path, batch.line_numbers)
            if needs_ids:
                ids, _, encoded = tagger.predict_ids(batch, forced)
                names = model.label_names(ids).tolist()
            else:  # a vote has labels, not one encoding of its input
                names, _ = tagger.predict_corpus(batch, forced)
            if output_format == "jsonl":
                write_jsonl(out, batch, names, chunk_annotations(model, names, ids, encoded) if needs_ids else None)
            elif output_format == "conllu":
                write_conllu(out, batch, names, model.metadata.get("input", {}).get("label"))
            else:
                extra, headers = (marginal_columns(model, encoded, ids, forced, marginals, probability) if needs_ids
                                  else (None, None))
                write_tagged(out, batch, names, extra_columns=extra, sentence_headers=headers,
                             output_format=output_format, keep_gold=keep_gold, tag_sep=options.get("tag_sep") or "/")
            sentences += batch.n_sentences
            tokens += batch.n_tokens
        seconds = time.perf_counter() - start - (compiling_seconds() - compiled)  # a speed without compiling
    return {"sentences": sentences, "tokens": tokens, "seconds": seconds,
            "tokens_per_second": tokens / seconds if seconds > 0 else float("inf")}


def marginal_columns(model, encoded, ids, forced, marginals=None, probability=False):
    """(extra columns, sentence headers) of ``tag_file``'s ``marginals`` and ``probability`` (None, None
    when neither is asked for), from the encoded input and its predicted label ids."""
    if not (marginals or probability):
        return None, None
    from structperc.estimator.marginals import marginals as label_marginals

    extra, headers = None, None
    node, log_probability = label_marginals(model, encoded, forced=forced)
    if marginals == "best":
        extra = [[f"{p:.4f}" for p in node[np.arange(len(ids)), ids]]]
    elif marginals == "all":
        extra = [[f"{label}:{p:.4f}" for p in node[:, c]] for c, label in enumerate(model.labels)]
    if probability:
        headers = [f"# probability {np.exp(lp):.6f}" for lp in log_probability]
    return extra, headers


def _import_dask():
    """Import what parameter mixing starts its cluster with (``train.mixing.dask_client``)."""
    import dask.distributed  # noqa: F401

