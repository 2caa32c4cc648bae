"""A model as python-crfsuite's ``Tagger.info()`` gives one: its header, labels, attributes, transitions
and state features, the five fields of pycrfsuite's ``ParsedDump``, typed as pycrfsuite types them
(ids and header values as strings, weights as floats), so that code written for a CRFsuite model reads
a structperc one.

- ``labels``: {label: id}; ``attributes``: {attribute: id}, every attribute the model has;
- ``transitions``: {(label_from, label_to): weight}, the nonzero label transitions (not the start's);
- ``state_features``: {(attribute, label): weight}, the nonzero emission weights;
- ``header``: the type (``structperc``, not CRFsuite's ``FOMC``), the model file's format version, the
  Markov order, and the numbers of features (transitions and state features listed), labels and
  attributes.

A model trained on feature dicts names an attribute ``key:value``, as CRFsuite does; a model of
templates names it as ``structperc info`` shows it (``word[0]=the``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class ModelInfo:
    """pycrfsuite's ``ParsedDump``: header, labels, attributes, transitions, state_features."""
    header: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)
    attributes: dict = field(default_factory=dict)
    transitions: dict = field(default_factory=dict)
    state_features: dict = field(default_factory=dict)


def crfsuite_attribute(name: str) -> str:
    """CRFsuite's name ``key:value`` of the attribute that ``features/dicts.py`` names ``key=value``."""
    key, sep, value = name.partition("=")
    return f"{key}:{value}" if sep else name


def model_info(model) -> ModelInfo:
    """The ``ModelInfo`` of a ``LinearChainModel`` (see the module docstring)."""
    from structperc.model.linear_chain import FORMAT_VERSION

    encoder = model.encoder
    dicts = model.metadata.get("input", {}).get("format") == "dicts"
    names = [encoder.describe_feature(f) for f in range(encoder.n_features_)]
    if dicts:
        names = [crfsuite_attribute(name) for name in names]
    labels = list(model.labels)
    emission = model.emission_weights()
    rows, columns = np.nonzero(emission)
    state_features = {(names[f], labels[c]): float(emission[f, c]) for f, c in zip(rows.tolist(), columns.tolist())}
    transition = model.transition_weights()[:len(labels)]  # the start state's row left out
    transitions = {(labels[i], labels[j]): float(transition[i, j]) for i, j in zip(*map(np.ndarray.tolist,
                                                                                       np.nonzero(transition)))}
    header = {"type": "structperc", "version": str(FORMAT_VERSION), "order": str(model.order),
              "num_features": str(len(transitions) + len(state_features)), "num_labels": str(len(labels)),
              "num_attrs": str(len(names))}
    return ModelInfo(header=header, labels={label: str(i) for i, label in enumerate(labels)},
                     attributes={name: str(i) for i, name in enumerate(names)}, transitions=transitions,
                     state_features=state_features)
