"""eval's details: conlleval's phrase counts and layout, the errors by kind on hand-made cases, per-tag
scores and confusions against hand counts, and the command's text and JSON."""
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from structperc.chunks import chunk_spans
from structperc.cli.evaluation import format_evaluation
from structperc.cli.main import app
from structperc.evaluate.metrics import evaluate_labels, evaluation_details
from structperc.evaluate.phrases import KINDS, phrase_errors
from structperc.evaluate.tags import tag_scores

# one error of each kind, each in its own place:
#   sentence 1: NP(0-1) right; VP(3) predicted NP(3): wrong type (VP); PP(5) predicted O: missed (PP);
#               ADJP(6) where gold has O: spurious (ADJP)
#   sentence 2: NP(0-2) predicted NP(0-1) NP(2): one wrong boundary (NP)
GOLD = [["B-NP", "I-NP", "O", "B-VP", "O", "B-PP", "O"], ["B-NP", "I-NP", "I-NP"]]
PRED = [["B-NP", "I-NP", "O", "B-NP", "O", "O", "B-ADJP"], ["B-NP", "I-NP", "B-NP"]]


def flat(sentences):
    return [label for s in sentences for label in s]


def test_each_kind_of_error_counted_once_in_its_place():
    found = phrase_errors(GOLD, PRED)
    expected = {t: dict.fromkeys(KINDS, 0) for t in ("ADJP", "NP", "PP", "VP")}
    expected["VP"]["wrong_type"] = 1
    expected["PP"]["missed"] = 1
    expected["ADJP"]["spurious"] = 1
    expected["NP"]["wrong_boundary"] = 1
    assert found["errors"] == expected
    assert found["counts"] == {"ADJP": {"gold": 0, "found": 1, "correct": 0},
                               "NP": {"gold": 2, "found": 4, "correct": 1},
                               "PP": {"gold": 1, "found": 0, "correct": 0},
                               "VP": {"gold": 1, "found": 0, "correct": 0}}
    records = {(r["sentence"], r["kind"]): r for r in found["records"]}
    assert records[(0, "wrong_type")]["gold"] == [3, 3] and records[(0, "wrong_type")]["predicted"] == [["NP", 3, 3]]
    assert records[(0, "missed")]["predicted"] == []
    assert records[(0, "spurious")]["gold"] is None
    assert records[(1, "wrong_boundary")]["predicted"] == [["NP", 0, 1], ["NP", 2, 2]]
    assert len(found["records"]) == 4


def test_conlleval_layout_counts_the_phrases_found_per_type():
    """The text against conlleval's printf formats, with the counts worked out by hand above."""
    offsets = np.array([0, 7, 10])
    result = evaluate_labels(flat(GOLD), flat(PRED), offsets, chunks=True)
    result.update(evaluation_details(flat(GOLD), flat(PRED), offsets, chunks=True)[0])
    result["seconds"] = 1.0
    lines = format_evaluation(result).splitlines()
    # 6 of 10 tokens right; 4 gold phrases, 5 found, 1 correct: precision 20%, recall 25%, F1 = 2 * .2 * .25 / .45
    assert lines[0] == "processed 10 tokens with 4 phrases; found: 5 phrases; correct: 1."
    assert lines[1] == "accuracy:  60.00%; precision:  20.00%; recall:  25.00%; FB1:  22.22"
    assert lines[2] == "             ADJP: precision:   0.00%; recall:   0.00%; FB1:   0.00  1"
    assert lines[3] == "               NP: precision:  25.00%; recall:  50.00%; FB1:  33.33  4"
    assert lines[4] == "               PP: precision:   0.00%; recall:   0.00%; FB1:   0.00  0"
    assert lines[5] == "               VP: precision:   0.00%; recall:   0.00%; FB1:   0.00  0"
    table = {line.split()[0]: line.split()[1:] for line in lines[8:13]}
    # columns: wrong type, wrong boundary, missed, spurious
    assert table == {"ADJP": ["0", "0", "0", "1"], "NP": ["0", "1", "0", "0"], "PP": ["0", "0", "1", "0"],
                     "VP": ["1", "0", "0", "0"], "all": ["1", "1", "1", "1"]}
    assert result["per_type"]["NP"]["support"] == 2  # seqeval's support: the gold phrases


@pytest.mark.parametrize("seed", range(8))
def test_errors_account_for_every_phrase_not_right(seed):
    """On random BIO sequences: per type, wrong type + wrong boundary + missed = gold - correct, and
    spurious plus the predicted phrases that overlap a gold one = found - correct; the counts are those
    of the span sets (conlleval)."""
    rng = np.random.default_rng(seed)
    tags = ["B-NP", "I-NP", "B-VP", "I-VP", "O"]
    gold = [[tags[i] for i in rng.integers(0, 5, rng.integers(1, 9))] for _ in range(12)]
    pred = [[tags[i] if rng.random() < 0.5 else t for t, i in zip(s, rng.integers(0, 5, len(s)))] for s in gold]
    found = phrase_errors(gold, pred)
    for kind_of_phrase, c in found["counts"].items():
        e = found["errors"][kind_of_phrase]
        assert e["wrong_type"] + e["wrong_boundary"] + e["missed"] == c["gold"] - c["correct"]
        overlapping = sum(1 for g, p in zip(gold, pred) for q in chunk_spans(p)
                          if q[0] == kind_of_phrase and q not in set(chunk_spans(g))
                          and any(r[1] <= q[2] and q[1] <= r[2] for r in chunk_spans(g)))
        assert e["spurious"] + overlapping == c["found"] - c["correct"]
        assert c["gold"] == sum(1 for g in gold for q in chunk_spans(g) if q[0] == kind_of_phrase)
        assert c["found"] == sum(1 for p in pred for q in chunk_spans(p) if q[0] == kind_of_phrase)


def test_tag_scores_against_hand_counts():
    gold = ["A", "A", "B", "C", "A"]
    pred = ["A", "B", "B", "A", "A"]
    s = tag_scores(gold, pred)
    # A: predicted 3 times, 2 right, gold 3 times; B: predicted 2, right 1, gold 1; C: never predicted
    assert s["per_type"]["A"] == pytest.approx({"precision": 200 / 3, "recall": 200 / 3, "f1": 200 / 3,
                                                "support": 3})
    assert s["per_type"]["B"] == pytest.approx({"precision": 50.0, "recall": 100.0, "f1": 200 / 3, "support": 1})
    assert s["per_type"]["C"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1}
    assert s["confusion"] == {"labels": ["A", "B", "C"], "matrix": [[2, 1, 0], [0, 1, 0], [1, 0, 0]]}
    assert s["confusions"] == [("A", "B", 1), ("C", "A", 1)]
    more = tag_scores(["X"] * 5 + ["Y"] * 2, ["Y"] * 3 + ["X"] * 2 + ["X"] * 2)
    assert more["confusions"] == [("X", "Y", 3), ("Y", "X", 2)]  # the largest first


def test_token_errors_name_sentence_and_token():
    details, records = evaluation_details(["A", "B", "C", "A"], ["A", "C", "C", "B"], np.array([0, 2, 4]), False)
    assert records == [{"sentence": 0, "kind": "wrong_tag", "type": "B", "token": 1, "predicted": "C"},
                       {"sentence": 1, "kind": "wrong_tag", "type": "A", "token": 1, "predicted": "B"}]


TRAIN = """Confidence NN B-NP
in IN B-PP
the DT B-NP
pound NN I-NP
is VBZ B-VP
widely RB I-VP
expected VBN I-VP
. . O

He PRP B-NP
reckons VBZ B-VP
the DT B-NP
current JJ I-NP
account NN I-NP
deficit NN I-NP
. . O
"""


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("eval")
    train = folder / "train.txt"
    train.write_text(TRAIN)
    models = {}
    for label in ("chunk", "pos"):
        models[label] = folder / f"{label}.npz"
        result = run("train", train, "--model", models[label], "--columns", "word,pos,chunk", "--label", label,
                     "--epochs", 1, "--quiet")
        assert result.exit_code == 0, result.output
    return train, models


def test_eval_json_of_a_token_task(trained):
    train, models = trained
    result = run("eval", train, "--model", models["pos"], "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    gold = [line.split()[1] for line in TRAIN.splitlines() if line.strip()]
    assert set(out["per_type"]) >= set(gold)
    labels, matrix = out["confusion"]["labels"], np.array(out["confusion"]["matrix"])
    for i, tag in enumerate(labels):
        assert matrix[i].sum() == gold.count(tag) == out["per_type"][tag]["support"]
    assert np.trace(matrix) == round(out["accuracy"] * len(gold) / 100)
    text = run("eval", train, "--model", models["pos"])
    assert text.stdout.splitlines()[1].startswith("accuracy: ")
    assert any(line.split()[:1] == ["NN"] for line in text.stdout.splitlines())


def test_eval_json_of_a_chunk_task(trained):
    train, models = trained
    result = run("eval", train, "--model", models["chunk"], "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    gold_spans = chunk_spans([line.split()[2] for line in TRAIN.splitlines() if line.strip()])
    assert out["phrases"] == len(gold_spans) == sum(s["gold"] for s in out["per_type"].values())
    assert out["found"] == sum(s["found"] for s in out["per_type"].values())
    assert set(out["errors"]) == set(KINDS)
    text = run("eval", train, "--model", models["chunk"]).stdout.splitlines()
    assert text[0].startswith(f"processed 15 tokens with {len(gold_spans)} phrases; found: {out['found']} phrases")
