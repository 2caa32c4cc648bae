"""The Tagger owns the pipeline on files; strict trainer options; consistent command-line flags."""
import json

import pytest
from typer.testing import CliRunner

from structperc.cli.main import app
from structperc.errors import ConfigError
from structperc.estimator.tagger import Tagger
from structperc.train import RULE_OPTIONS, TRAINERS

from test_cli import TRAIN


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input)


@pytest.fixture()
def corpus_file(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(TRAIN)
    return path


def test_fit_file_records_the_reader_options_and_tag_file_reuses_them(tmp_path, corpus_file):
    tagger = Tagger(templates=["w[0]", "pos[0]", "bias"], epochs=3, constrain="bio").fit_file(
        corpus_file, columns=["word", "pos", "chunk"], only_types=["NP"])
    assert tagger.model_.metadata["input"] == {
        "format": "conll", "columns": ["word", "pos", "chunk"], "label": "chunk", "only_types": ["NP"],
        "encoding": "utf-8",  # recorded when not given: the default of later reads
    }
    tagger.save(tmp_path / "m.npz")
    loaded = Tagger.load(tmp_path / "m.npz")
    out = tmp_path / "out.txt"
    stats = loaded.tag_file(corpus_file, out)
    rows = [line.split() for line in out.read_text().splitlines() if line.strip()]
    assert stats["sentences"] == 3 and stats["tokens"] == len(rows) == 19
    # the gold column went through the recorded only_types mapping: no B-PP, B-VP left
    assert {r[2] for r in rows} <= {"B-NP", "I-NP", "O"}
    # tag_file goes through the same prediction as predict_corpus
    expected, _ = loaded.predict_corpus(loaded.read(corpus_file))
    assert [r[3] for r in rows] == expected
    assert loaded.evaluate_file(corpus_file)["tokens"] == 19


def test_callback_sees_each_epoch_as_it_ends(corpus_file):
    seen = []
    tagger = Tagger(templates=["w[0]"], epochs=4)

    def callback(record):
        assert not hasattr(tagger, "history_")  # fit has not returned yet
        seen.append(record.epoch)

    tagger.fit_file(corpus_file, callback=callback)
    assert seen == [1, 2, 3, 4] and [r.epoch for r in tagger.history_] == seen


def test_registry_declares_every_option_the_tagger_passes():
    declared = set().union(*(rule.params for rule in TRAINERS.values()))
    # each rule option is a constructor argument of Tagger, and Tagger passes every one it has
    tagger_params = set(Tagger._get_param_names())
    assert declared <= tagger_params
    assert declared == set(RULE_OPTIONS)
    assert {name for name, rule in TRAINERS.items() if rule.probabilistic} == {"crf", "memm"}


@pytest.mark.parametrize("trainer, option, value", [("perceptron", "l2", 0.1), ("perceptron", "cost", 2.0),
                                                    ("crf", "cost", 1.0), ("memm", "batch_size", 4)])
def test_an_option_the_rule_does_not_take_is_an_error(corpus_file, trainer, option, value):
    with pytest.raises(ConfigError, match=f"trainer {trainer!r} does not take option {option!r}"):
        Tagger(templates=["w[0]"], trainer=trainer, epochs=1, **{option: value}).fit_file(corpus_file)


def test_only_the_options_set_reach_the_rule(corpus_file, monkeypatch):
    import structperc.train as train

    received = {}
    real = train.make_rule

    def spy(name, **options):
        received.update(options)
        return real(name, **options)

    monkeypatch.setattr(train, "make_rule", spy)
    Tagger(templates=["w[0]"], trainer="crf", epochs=1, l2=0.5).fit_file(corpus_file)
    assert received == {"l2": 0.5}


def test_load_restores_every_option(tmp_path, corpus_file):
    tagger = Tagger(templates=["w[0]", "bias"], trainer="hinge", epochs=2, average=False, l2=0.01, eta0=0.2,
                    cost=2.0, average_start=0, calibration_sentences=10, seed=3, min_count=1, rare_threshold=2)
    tagger.fit_file(corpus_file)
    tagger.save(tmp_path / "m.npz")
    assert Tagger.load(tmp_path / "m.npz").get_params() == tagger.get_params()


def test_cli_rejects_an_option_of_another_rule(tmp_path, corpus_file):
    model = tmp_path / "m.npz"
    result = run("train", corpus_file, "--model", model, "--trainer", "perceptron", "--l2", 0.1, "--quiet")
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "l2" in lines[0] and "perceptron" in lines[0]
    assert not model.exists()


def test_cli_help_names_the_rules_that_take_each_option():
    result = run("train", "--help")
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for name in TRAINERS:
        assert name in text
    assert "Hamming cost of one wrong token; default 1.0 (hinge)" in text
    assert "sentences of the sample that calibrates eta0; default 1000 (crf, hinge, memm)" in text


def test_train_prints_a_progress_line_per_epoch(tmp_path, corpus_file):
    result = run("train", corpus_file, "--model", tmp_path / "m.npz", "--epochs", 3)
    assert result.exit_code == 0, result.output
    assert [line.split()[1] for line in result.output.splitlines() if line.startswith("epoch")] == ["1", "2", "3"]


COMMANDS = [["train"], ["tag"], ["eval"], ["info"], ["nbest"], ["rerank", "train"], ["rerank", "apply"],
            ["data", "fetch"], ["data", "list"], ["reproduce"], ["compare"]]
# commands whose whole output is the report on stdout have no summary to silence
NO_QUIET = {("eval",), ("info",), ("data", "list"), ("compare",)}


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_has_an_example_json_and_quiet_where_it_applies(command):
    result = run(*command, "--help")
    assert result.exit_code == 0
    assert "Example" in result.output
    assert "--json" in result.output
    assert ("--quiet" in result.output) == (tuple(command) not in NO_QUIET)


def test_top_level_help_has_an_example():
    result = run("--help")
    assert result.exit_code == 0 and "Example" in result.output


def test_json_outputs_are_one_object(tmp_path, corpus_file):
    model = tmp_path / "m.npz"
    result = run("train", corpus_file, "--model", model, "--columns", "word,pos,chunk", "--epochs", 2, "--json",
                 "--quiet")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["model"] == str(model)
    result = run("tag", corpus_file, "--model", model, "--output", tmp_path / "o.txt", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["tokens"] == 19
    # --json on stdout and the tagged text on stdout cannot both be: an error, not a silent choice
    result = run("tag", corpus_file, "--model", model, "--json")
    assert result.exit_code == 2 and "--output" in result.output


def test_kernel_names_of_the_cache_check_exist():
    import importlib

    from structperc._kernels import cache as kernel_cache

    from structperc.train import every_variant

    names = set(kernel_cache.TAGGING) | set(kernel_cache.TRAINING) | set(kernel_cache.MARGINALS.values())
    names |= {name for _, _, rule in every_variant() for name in rule.kernels + rule.l1_kernels}
    for name in names:
        module, function = name.rsplit(".", 1)
        assert hasattr(importlib.import_module(f"structperc._kernels.{module}"), function), name
    assert all(TRAINERS[trainer].kernels for trainer in TRAINERS)  # every rule names its epoch
