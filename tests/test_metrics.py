"""``structperc.metrics``: sklearn-crfsuite's metrics on today's scikit-learn, checked against
scikit-learn's and seqeval's own functions, and the sklearn-crfsuite tutorial's evaluation run
end to end on a slice of CoNLL-2002 Dutch with ``from structperc import metrics``."""
import numpy as np
import pytest
import seqeval.metrics
import sklearn.metrics

from structperc import metrics

TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG"]


def random_sequences(seed, n_sentences=40):
    """Gold and predicted label sequences of random lengths; about a third of the labels wrong."""
    rng = np.random.default_rng(seed)
    gold, predicted = [], []
    for _ in range(n_sentences):
        labels = [TAGS[int(i)] for i in rng.integers(0, len(TAGS), int(rng.integers(1, 9)))]
        gold.append(labels)
        predicted.append([TAGS[int(rng.integers(0, len(TAGS)))] if rng.random() < 0.33 else label
                          for label in labels])
    return gold, predicted


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_flat_scores_are_scikit_learns_on_the_flattened_tokens(seed):
    gold, predicted = random_sequences(seed)
    flat_gold = [label for labels in gold for label in labels]
    flat_predicted = [label for labels in predicted for label in labels]
    labels = ["B-PER", "I-PER", "B-LOC"]
    assert metrics.flat_accuracy_score(gold, predicted) == pytest.approx(
        sklearn.metrics.accuracy_score(flat_gold, flat_predicted))
    for ours, theirs in [(metrics.flat_precision_score, sklearn.metrics.precision_score),
                         (metrics.flat_recall_score, sklearn.metrics.recall_score),
                         (metrics.flat_f1_score, sklearn.metrics.f1_score)]:
        for average in ("micro", "macro", "weighted"):
            assert ours(gold, predicted, average=average, labels=labels, zero_division=0) == pytest.approx(
                theirs(flat_gold, flat_predicted, average=average, labels=labels, zero_division=0))
    assert metrics.flat_fbeta_score(gold, predicted, 0.5, average="macro", zero_division=0) == pytest.approx(
        sklearn.metrics.fbeta_score(flat_gold, flat_predicted, beta=0.5, average="macro", zero_division=0))
    report = metrics.flat_classification_report(gold, predicted, labels=labels, output_dict=True, zero_division=0)
    assert report == sklearn.metrics.classification_report(flat_gold, flat_predicted, labels=labels,
                                                           output_dict=True, zero_division=0)


@pytest.mark.parametrize("seed", [0, 1])
def test_sequence_accuracy_counts_whole_sentences(seed):
    gold, predicted = random_sequences(seed)
    predicted[0] = list(gold[0])  # at least one exact sentence
    exact = sum(1 for g, p in zip(gold, predicted) if all(a == b for a, b in zip(g, p)))
    assert metrics.sequence_accuracy_score(gold, predicted) == pytest.approx(exact / len(gold))
    assert 0 < exact < len(gold)
    assert metrics.sequence_accuracy_score([], []) == 0.0


def test_entity_scores_are_seqevals():
    gold, predicted = random_sequences(3)
    assert metrics.entity_f1_score(gold, predicted) == pytest.approx(seqeval.metrics.f1_score(gold, predicted))
    assert metrics.entity_precision_score(gold, predicted) == pytest.approx(
        seqeval.metrics.precision_score(gold, predicted))
    assert metrics.entity_recall_score(gold, predicted) == pytest.approx(seqeval.metrics.recall_score(gold, predicted))
    assert metrics.entity_classification_report(gold, predicted, output_dict=True) == \
        seqeval.metrics.classification_report(gold, predicted, output_dict=True)


def test_a_hand_made_case():
    gold = [["B-PER", "I-PER", "O"], ["O", "B-LOC"]]
    predicted = [["B-PER", "O", "O"], ["O", "B-LOC"]]
    assert metrics.flat_accuracy_score(gold, predicted) == 0.8
    assert metrics.sequence_accuracy_score(gold, predicted) == 0.5
    # PER is cut short (wrong boundary), LOC is right: one of two entities found
    assert metrics.entity_f1_score(gold, predicted) == 0.5


def test_mismatched_token_counts_are_an_error():
    with pytest.raises(ValueError, match="3 tokens"):
        metrics.flat_f1_score([["O", "O", "O"]], [["O", "O"]])


def test_numbers_agree_with_sklearn_crfsuites_metrics_where_they_still_run():
    theirs = pytest.importorskip("sklearn_crfsuite.metrics")
    gold, predicted = random_sequences(4)
    assert metrics.flat_accuracy_score(gold, predicted) == pytest.approx(theirs.flat_accuracy_score(gold, predicted))
    assert metrics.sequence_accuracy_score(gold, predicted) == pytest.approx(
        theirs.sequence_accuracy_score(gold, predicted))
    assert metrics.flat_f1_score(gold, predicted, average="macro") == pytest.approx(
        theirs.flat_f1_score(gold, predicted, average="macro"))
    labels = ["B-PER", "I-PER", "B-LOC"]
    try:  # older sklearn-crfsuite releases pass labels by position, which scikit-learn >= 1.0 refuses
        expected = theirs.flat_classification_report(gold, predicted, labels=labels, digits=3, zero_division=0)
    except TypeError:
        return
    assert metrics.flat_classification_report(gold, predicted, labels=labels, digits=3, zero_division=0) == expected


# ---------------------------------------------------------------------- the tutorial, end to end

def read_conll2002(path, n_sentences):
    """The first ``n_sentences`` sentences of a CoNLL-2002 file as lists of (word, pos, label)."""
    sentences, rows = [], []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            fields = line.split()
            if fields and fields[0] != "-DOCSTART-":
                rows.append(tuple(fields))
            elif not fields and rows:
                sentences.append(rows)
                rows = []
                if len(sentences) == n_sentences:
                    break
    return sentences


def token_features(sentence, i):
    """The features of token i: its word's shape and affixes, its POS, and its neighbours'."""
    word, pos = sentence[i][0], sentence[i][1]
    features = {"bias": 1.0, "lower": word.lower(), "suffix3": word[-3:], "suffix2": word[-2:],
                "is_upper": word.isupper(), "is_title": word.istitle(), "is_digit": word.isdigit(),
                "pos": pos, "pos2": pos[:2]}
    for offset, prefix in ((-1, "-1:"), (1, "+1:")):
        j = i + offset
        if 0 <= j < len(sentence):
            features.update({prefix + "lower": sentence[j][0].lower(), prefix + "is_title": sentence[j][0].istitle(),
                             prefix + "pos": sentence[j][1]})
        else:
            features["BOS" if offset < 0 else "EOS"] = True
    return features


def sentence_features(sentence):
    return [token_features(sentence, i) for i in range(len(sentence))]


def sentence_labels(sentence):
    return [label for _, _, label in sentence]


def test_the_tutorials_evaluation_cells_run_with_structperc_metrics(corpus_mirror):
    import structperc
    from structperc import metrics  # the only line that differs from the tutorial

    train = read_conll2002(corpus_mirror / "conll2002_nl" / "ned.train", 400)
    test = read_conll2002(corpus_mirror / "conll2002_nl" / "ned.testa", 150)
    X_train, y_train = [sentence_features(s) for s in train], [sentence_labels(s) for s in train]
    X_test, y_test = [sentence_features(s) for s in test], [sentence_labels(s) for s in test]

    crf = structperc.CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=50, all_possible_transitions=True)
    crf.fit(X_train, y_train)

    labels = list(crf.classes_)
    labels.remove("O")
    y_pred = crf.predict(X_test)
    f1 = metrics.flat_f1_score(y_test, y_pred, average="weighted", labels=labels)
    sorted_labels = sorted(labels, key=lambda name: (name[1:], name[0]))
    report = metrics.flat_classification_report(y_test, y_pred, labels=sorted_labels, digits=3)

    flat_test = [label for labels_ in y_test for label in labels_]
    flat_pred = [label for labels_ in y_pred for label in labels_]
    assert f1 == pytest.approx(sklearn.metrics.f1_score(flat_test, flat_pred, average="weighted", labels=labels))
    assert 0.3 < f1 < 1.0  # a model that learned something on 400 sentences, not a perfect one
    rows = [line.split() for line in report.splitlines() if line.strip()]
    assert [row[0] for row in rows[1: 1 + len(sorted_labels)]] == sorted_labels
    per_label = sklearn.metrics.precision_recall_fscore_support(flat_test, flat_pred, labels=sorted_labels,
                                                                zero_division=0)
    for row, precision, recall, f, support in zip(rows[1:], *per_label):
        assert [float(v) for v in row[1:4]] == pytest.approx([precision, recall, f], abs=5e-4)
        assert int(row[4]) == support
