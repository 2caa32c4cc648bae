"""`structperc info` says "feature dicts" only for a model trained on them, and stays readable on a
model of many labels (one label per line, lists cut short with a count of the rest)."""
from typer.testing import CliRunner

from structperc import Tagger
from structperc.cli.main import app

WORDS = [["The", "cat", "sat"], ["A", "dog", "ran"]] * 4
CHUNKS = [["B-NP", "I-NP", "O"]] * 8


def info(path, *options):
    result = CliRunner().invoke(app, ["info", str(path), *options])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_model_trained_with_templates_is_not_called_feature_dicts(tmp_path):
    Tagger(templates=["w[0]", "w[-1]", "bias"], epochs=1).fit(WORDS, CHUNKS).save(tmp_path / "t.npz")
    first = info(tmp_path / "t.npz").splitlines()[0]
    assert "feature dicts" not in first and first.startswith("3 templates, constraint bio"), first
    dicts = [[{"w": w} for w in s] for s in WORDS]
    Tagger(epochs=1).fit(dicts, CHUNKS).save(tmp_path / "d.npz")
    assert info(tmp_path / "d.npz").splitlines()[0].startswith("feature dicts")


def test_top_1_on_201_labels_stays_readable(tmp_path):
    labels = [f"TAG{i:03d}" for i in range(201)]
    X = [[f"w{i}", f"v{i}"] for i in range(201)]
    y = [[label, label] for label in labels]
    Tagger(templates=["w[0]", "bias"], epochs=1).fit(X, y).save(tmp_path / "many.npz")
    text = info(tmp_path / "many.npz", "--top", "1")
    lines = text.splitlines()
    listing = [line for line in lines if not line.startswith(("input:", "training:"))]
    assert max(len(line) for line in listing) < 400, max(listing, key=len)
    assert len(text) < 8000
    assert "labels (201): TAG000 TAG001" in text and "and 161 more" in text
    feature_lines = [line for line in lines if line.startswith("  TAG")]
    assert len(feature_lines) == 40 and all(len(line.split()) >= 3 for line in feature_lines)  # label, weight, feature
    assert "and 161 more labels (--json lists every label)" in text
