"""The report file without a browser (self-contained, its data those of eval and explain, written
atomically; ensembles and MEMMs without explanations) and the explain command."""
import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from structperc.cli.main import app
from structperc.ensembles.files import read_model
from structperc.ensembles.vote import VotingTagger
from structperc.errors import ConfigError
from structperc.estimator.explaining import explain
from structperc.evaluate.metrics import evaluation_details
from structperc.report import write_report

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
will MD B-VP
narrow VB I-VP
. . O

The DT B-NP
pound NN I-NP
fell VBD B-VP
in IN B-PP
London NNP B-NP
. . O
"""
TEST = """The DT B-NP
deficit NN I-NP
is VBZ B-VP
widely RB B-ADVP
expected VBN B-VP
in IN B-PP
the DT B-NP
current JJ I-NP
account NN I-NP
. . O

He PRP B-NP
fell VBD B-VP
. . O
"""


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    train, test = folder / "train.txt", folder / "test.txt"
    train.write_text(TRAIN)
    test.write_text(TEST)
    models = {}
    for name, extra in (("chunk", []), ("memm", ["--trainer", "memm"]), ("order2", ["--order", "2"])):
        models[name] = folder / f"{name}.npz"
        result = run("train", train, "--model", models[name], "--columns", "word,pos,chunk", "--epochs", 2,
                     "--quiet", *extra)
        assert result.exit_code == 0, result.output
    return folder, train, test, models


def page_data(path):
    text = path.read_text()
    found = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S)
    return text, json.loads(found.group(1))


def test_report_is_self_contained_and_holds_eval_and_explain(files):
    folder, _, test, models = files
    tagger = read_model(models["chunk"])
    corpus = tagger.read(test)
    result = tagger.evaluate(corpus, details=True)
    path = write_report(folder / "r.html", tagger, corpus, result)
    text, data = page_data(path)
    # nothing to fetch: no src or href but in-page anchors, no url() or @import
    assert not re.search(r"""(src|href)\s*=\s*["'](?!#)""", text)
    assert "url(" not in text and "@import" not in text
    assert set(re.findall(r"https?://[^\s\"'<>]+", text)) <= {"http://www.w3.org/2000/svg"}
    gold = corpus.columns[corpus.label]
    predicted = [label for s in tagger.predict(corpus) for label in s]
    _, records = evaluation_details(gold, predicted, corpus.sentence_offsets, True)
    assert data["records"] == json.loads(json.dumps(records))
    assert text.count('<svg xmlns="http://www.w3.org/2000/svg" class="heatmap') == 2
    # each sentence's explanation: the score of its path, compared with the gold label where wrong
    for key, compact in data["explanations"].items():
        s = int(key)
        sentence = data["sentences"][key]
        versus = [g if g != p else None for g, p in zip(sentence["gold"], sentence["predicted"])]
        versus = [v if v in tagger.model_.labels else None for v in versus]
        explanation = explain(tagger, corpus.subset([s]), versus=versus)
        assert compact[0] == pytest.approx(explanation["score"], abs=1e-3)
        assert [t[0] for t in compact[4]] == explanation["labels"] == sentence["predicted"]
        assert [t[1] for t in compact[4]] == [t["other"] for t in explanation["tokens"]]
        for token, full in zip(compact[4], explanation["tokens"]):
            # the listed features (the rest summed in the last one) add up to the emission
            assert sum(f[1] * f[2] for f in token[5]) == pytest.approx(full["emission"], abs=1e-3)
    assert data["explanations"]


def test_report_of_models_without_explanations(files):
    folder, _, test, models = files
    memm = read_model(models["memm"])
    corpus = memm.read(test)
    path = write_report(folder / "memm.html", memm, corpus, memm.evaluate(corpus, details=True))
    text, data = page_data(path)
    assert data["explanations"] == {} and "normalized per token: no explanation" in text
    vote = VotingTagger([read_model(models["chunk"]), read_model(models["order2"])])
    path = write_report(folder / "vote.html", vote, corpus, vote.evaluate(corpus, details=True))
    text, data = page_data(path)
    assert data["explanations"] == {} and "several models: no explanation" in text
    assert data["records"]
    with pytest.raises(ConfigError, match="explain one of its models"):
        explain(vote, corpus.subset([0]))


def test_report_written_whole_or_not_at_all(files, monkeypatch):
    folder, _, test, models = files
    tagger = read_model(models["chunk"])
    corpus = tagger.read(test)
    result = tagger.evaluate(corpus, details=True)

    def broken(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr("structperc.report.page._asset", broken)
    before = sorted(p.name for p in folder.iterdir())
    with pytest.raises(KeyboardInterrupt):
        write_report(folder / "half.html", tagger, corpus, result)
    assert sorted(p.name for p in folder.iterdir()) == before


def test_eval_report_option_and_a_bad_path(files):
    folder, _, test, models = files
    result = run("eval", test, "--model", models["chunk"], "--report", folder / "cli.html")
    assert result.exit_code == 0, result.output
    assert (folder / "cli.html").read_text().startswith("<!DOCTYPE html>")
    bad = run("eval", test, "--model", models["chunk"], "--report", test / "r.html")  # a file as the folder
    assert bad.exit_code == 2 and bad.stdout == ""
    assert bad.stderr.startswith("structperc: error: ") and bad.stderr.count("\n") == 1 and str(test) in bad.stderr


# ------------------------------------------------------------------------------------ explain command
def test_explain_text_and_json(files):
    folder, _, test, models = files
    text = run("explain", test, "--model", models["chunk"], "--sentence", 2, "--top", 1)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0].startswith("score ")
    assert [line.split()[1] for line in lines if re.match(r" *\d+ \S", line)] == ["He", "fell", "."]
    out = run("explain", test, "--model", models["chunk"], "--sentence", 2, "--json")
    data = json.loads(out.stdout)
    tagger = read_model(models["chunk"])
    assert data["sentence"] == 2
    assert data["labels"] == tagger.predict([[("He", "PRP"), ("fell", "VBD"), (".", ".")]])[0]
    total = data["end"] + sum(f["value"] * f["weight"] for t in data["tokens"] for f in t["features"]) + sum(
        term["weight"] for t in data["tokens"] for term in t["transitions"])
    assert total == pytest.approx(data["score"], abs=1e-9)


def test_explain_against_the_gold_labels(files):
    folder, _, test, models = files
    out = run("explain", test, "--model", models["order2"], "--gold", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    gold = [line.split()[2] for line in TEST.split("\n\n")[0].splitlines()]
    known = set(read_model(models["order2"]).model_.labels)
    for token, label in zip(data["tokens"], gold):
        if token["label"] != label and label in known:
            assert token["other"] == label


def test_explain_of_raw_text_on_stdin(files):
    folder, _, _, _ = files
    model, words = folder / "words.npz", folder / "words.txt"
    words.write_text("The DT\npound NN\nfell VBD\n\nA DT\nman NN\nran VBD\n\n")
    assert run("train", words, "--model", model, "--templates", "pos", "--epochs", 2, "--quiet").exit_code == 0
    out = run("explain", "-", "--model", model, "--format", "raw", "--json", input="The pound fell\n")
    assert out.exit_code == 0, out.output
    assert [t["token"] for t in json.loads(out.stdout)["tokens"]] == ["The", "pound", "fell"]


@pytest.mark.parametrize("args, message", [
    (["--sentence", 9], "has 2 sentences: --sentence 9 is past its end"),
    (["--json", "--top", 3], "--top shapes the text view"),
])
def test_explain_bad_options(files, args, message):
    folder, _, test, models = files
    out = run("explain", test, "--model", models["chunk"], *args)
    assert out.exit_code == 2 and message in out.stderr and out.stderr.count("\n") == 1


def test_explain_refuses_a_memm(files):
    folder, _, test, models = files
    out = run("explain", test, "--model", models["memm"])
    assert out.exit_code == 2 and "globally normalized" in out.stderr and out.stderr.count("\n") == 1


def test_explain_top_keeps_the_totals(files):
    _, _, test, models = files
    tagger = read_model(models["chunk"])
    corpus = tagger.read(test).subset([0])
    full = explain(tagger, corpus)
    encoded = tagger.encode_input(corpus)
    from structperc.model.explain import Explainer

    ids = np.array([tagger.model_.labels.index(x) for x in full["labels"]])
    short = Explainer(tagger.model_).explain_path(encoded, 0, ids, top=1)
    for a, b in zip(full["tokens"], short["tokens"]):
        assert len(b["features"]) <= 2
        assert sum(f["value"] * f["weight"] for f in b["features"]) == pytest.approx(a["emission"], abs=1e-9)
        assert b["features"][0] == a["features"][0]
    assert short["score"] == pytest.approx(full["score"], abs=1e-9)
