"""Where `structperc reproduce` writes: the folder the user names, else a new folder, never over the
committed tables of experiments/results."""
from pathlib import Path

import forked_cli
from typer.testing import CliRunner

import structperc.cli.reproduce as reproduce_cli
from structperc.cli.main import app as cli_app

ROOT = Path(__file__).resolve().parent.parent


class Recording:
    """An experiment whose run writes its table into the folder it is given, and records that folder."""

    def __init__(self):
        self.folders = []

    def run_collins2002(self, corpora, out, **options):
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "collins2002.md").write_text("table\n", encoding="utf-8")
        self.folders.append(Path(out))
        return {"total_seconds": 1.0}


def test_without_output_each_run_writes_a_new_folder_and_leaves_the_committed_results_alone(tmp_path, monkeypatch):
    committed = (ROOT / "experiments" / "results" / "collins2002.md").read_bytes()
    experiment = Recording()
    monkeypatch.setattr(reproduce_cli, "load_experiment", lambda name: experiment)
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        out = CliRunner().invoke(cli_app, ["reproduce", "collins2002", "--quick"])
        assert out.exit_code == 0, out.output
    first, second = experiment.folders
    assert first != second and first.parent == second.parent == Path(".")
    assert first.name.startswith("collins2002-") and "results" not in first.parts
    assert (tmp_path / first / "collins2002.md").is_file() and (tmp_path / second / "collins2002.md").is_file()
    assert (ROOT / "experiments" / "results" / "collins2002.md").read_bytes() == committed


def test_the_named_folder_is_used(tmp_path, monkeypatch):
    experiment = Recording()
    monkeypatch.setattr(reproduce_cli, "load_experiment", lambda name: experiment)
    out = CliRunner().invoke(cli_app, ["reproduce", "collins2002", "--output", str(tmp_path / "mine")])
    assert out.exit_code == 0, out.output
    assert experiment.folders == [tmp_path / "mine"]


def test_a_failed_run_leaves_no_folder_behind(tmp_path):
    (tmp_path / "corpora" / "conll2000").mkdir(parents=True)
    (tmp_path / "corpora" / "conll2000" / "train.txt").write_text("The DT B-NP\n\n", encoding="utf-8")
    (tmp_path / "corpora" / "conll2000" / "test.txt").write_text("A DT B-NP\n\n", encoding="utf-8")
    done = forked_cli.run(["reproduce", "collins2002", "--quick", "--corpora", "corpora"], cwd=tmp_path, timeout=300)
    assert done.returncode == 2, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpora"]
