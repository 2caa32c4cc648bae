"""How much of an input a model knows: the share of its tokens whose column values never occurred in
the model's training data. A model applied to another task or language (a Dutch NER model on English
chunking data) knows few of the words and none of the tags; ``tag`` says so instead of tagging
silently."""
import warnings

from structperc.errors import StructpercWarning

# the tokens looked at (the input's first ones), and the fewest that make a judgement
SAMPLE_TOKENS = 20_000
MIN_TOKENS = 50
# a column is unfamiliar when more than this share of its tokens is unknown
UNKNOWN_SHARE = 0.5


def unknown_shares(encoder, corpus, limit=SAMPLE_TOKENS):
    """{column: share of the first ``limit`` tokens whose value the model never saw} for each input
    column the model's templates read (its ``vocabularies_``); {} for a model without vocabularies
    (feature dicts) or an input of fewer than ``MIN_TOKENS`` tokens."""
    vocabularies = getattr(encoder, "vocabularies_", None) or {}
    n = min(corpus.n_tokens, limit)
    if n < MIN_TOKENS:
        return {}
    shares = {}
    for field, vocabulary in vocabularies.items():
        values = corpus.columns.get(field)
        if values is not None:
            known = set(vocabulary)
            shares[field] = sum(value not in known for value in values[:n]) / n
    return shares


def warn_if_unfamiliar(encoder, corpus):
    """A StructpercWarning (naming the input file) when the model knows little of ``corpus``: more
    than ``UNKNOWN_SHARE`` of the word tokens, or of the tokens of most of the columns it reads,
    never occurred in its training data. Returns the shares."""
    shares = unknown_shares(encoder, corpus)
    unfamiliar = {field: share for field, share in shares.items() if share > UNKNOWN_SHARE}
    if shares and ("word" in unfamiliar or 2 * len(unfamiliar) > len(shares)):
        listed = ", ".join(f"{field} {100 * share:.0f}%" for field, share in unfamiliar.items())
        warnings.warn(StructpercWarning(
            f"the model knows little of this input: tokens with a value unseen in its training data: {listed}; "
            "is the model for another task or language?", corpus.path), stacklevel=2)
    return shares
