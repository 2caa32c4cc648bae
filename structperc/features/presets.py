"""The templates and the transition constraint of a training run whose user names none.

``choose_structure`` decides from the training data alone (its column names and gold labels):

- templates: labels in a chunk scheme (``chunks.is_bio``: B-X, I-X, O, also E-/S-) take the
  ``ner`` preset, unless every chunk type is a phrase category (NP, VP, PP, ...: ``PHRASE_TYPES``)
  and the input has a ``pos`` column, which is chunking and takes ``chunk``. Any other label set is
  a tagging task and takes ``pos-rich`` (``pos-ud`` when the input is CoNLL-U, with its
  ``space_after`` column). Each preset reads only the columns the input has: ``ner``'s POS
  templates are optional (``?``), ``pos-rich`` reads the word alone. Feature dicts have no templates.
- constraint: a chunk-scheme label set takes the tightest scheme its gold sequences all keep
  (``chunks.kept_scheme``; the rules are ``chunks.SCHEMES``): ``bioes`` when it has E- or S- tags, else
  ``bio`` (I-X only after B-X or I-X), else ``iob1`` (B-X only after B-X or I-X, as in IOB1 data,
  where I-X starts a chunk). A label set that keeps none of them, and every other label set, take
  none.

An explicit choice is kept as given; ``constrain="none"`` turns the constraint off.
"""
from collections import namedtuple

from structperc.chunks import SCHEMES, is_bio, kept_scheme
from structperc.utils.interning import intern_column

# Chosen with the default perceptron on a held-out last tenth of CoNLL-2000 train and on CoNLL-2002 Dutch
# testa: `ner` would do for both, but `chunk` is as good on chunking with no pair templates (a shorter
# epoch), so phrase types keep it.
# chunk types that are phrase categories (CoNLL-2000 and the Penn Treebank's phrase labels); a
# chunk-scheme label set with these types alone is chunking, not entity recognition
PHRASE_TYPES = frozenset({
    "NP", "VP", "PP", "ADJP", "ADVP", "SBAR", "PRT", "CONJP", "INTJ", "LST", "UCP", "QP", "PRN", "FRAG",
    "NAC", "NX", "WHNP", "WHADVP", "WHADJP", "WHPP", "RRC", "SINV", "SQ", "SBARQ", "X",
})

Structure = namedtuple("Structure", "templates constrain reason")
Structure.__doc__ = """templates : preset name, file or list (as given, or chosen; None for feature dicts);
constrain : "none" or a chunk scheme (``chunks.SCHEMES``); reason : why, in a few words ("given", or what
the data showed)."""


def choose_structure(templates, constrain, columns, labels, sentence_offsets, missing_label=None):
    """The templates and constraint of a training run (see the module's docstring).

    templates : None (choose), or a preset name, template file or list of templates (kept)
    constrain : None (choose), "none" or a chunk scheme (kept)
    columns : names of the input columns (the label column among them), or None for feature dicts
    labels : flat sequence of the gold label strings (n_tokens,)
    sentence_offsets : int (n_sentences + 1,)
    missing_label : None, or the symbol of an unlabelled token (not a label of the set)

    Returns a ``Structure``.
    """
    ids, distinct = intern_column(labels)
    chunked = is_bio([label for label in distinct if label != missing_label])
    reasons = []
    if templates is None and columns is not None:
        types = {label[2:] for label in distinct if label not in ("O", missing_label)}
        if not chunked:
            templates = "pos-ud" if "space_after" in columns else "pos-rich"
            reasons.append("labels without a chunk scheme")
        elif types <= PHRASE_TYPES and "pos" in columns:
            templates = "chunk"
            reasons.append("chunk labels of phrase types")
        else:
            templates = "ner"
            reasons.append("chunk labels of entity types")
    if constrain is None:
        if columns is None:
            # feature dicts are sklearn-crfsuite's input (CRFsuite has no constraint); on ned.testa with the
            # tutorial's dicts the constraint lowered dev F1 of both default rules when the defaults were chosen
            constrain = "none"
            reasons.append("feature dicts")
        else:
            scheme = kept_scheme(ids, distinct, sentence_offsets, missing_label) if chunked else None
            constrain = scheme or "none"
            if scheme:
                reasons.append(SCHEMES[scheme])
            else:
                reasons.append("the labels keep no chunk scheme's order" if chunked else "no chunk scheme")
    return Structure(templates, constrain, "; ".join(reasons) or "given")


def describe_structure(templates, constrain, reason):
    """One line on the templates and constraint of a run: "templates ner, constraint bio (chosen
    from the data: ...)"; the reason is left out when both were given."""
    if templates is None:
        what = "feature dicts"
    elif isinstance(templates, str):
        what = f"templates {templates}"
    else:
        what = f"{len(templates)} templates"
    text = f"{what}, constraint {constrain or 'none'}"
    return text if reason == "given" else f"{text} (chosen from the data: {reason})"
