"""`train --help` says how to join CoNLL-U columns into one label, and that way works."""
import re

from typer.testing import CliRunner

from structperc.cli.main import app
from structperc.readers import read_corpus

CONLLU = ("1\tThe\tthe\tDET\tDT\tDefinite=Def\t2\tdet\t_\t_\n"
          "2\tcat\tcat\tNOUN\tNN\tNumber=Sing\t0\troot\t_\t_\n\n")


def test_the_label_help_gives_the_separator_that_works(tmp_path):
    help_text = " ".join(CliRunner().invoke(app, ["train", "--help"], terminal_width=200).output.split())
    separator, example = re.search(r"columns joined with (\S): (\S+?),", help_text).groups()
    assert example == f"upos{separator}feats"
    path = tmp_path / "a.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    corpus = read_corpus(path, label=example)
    assert corpus.labels() == ["DET|Definite=Def", "NOUN|Number=Sing"]
