"""A Corpus answers len() with its number of sentences and prints as one short line."""
from structperc.corpus import concatenate
from structperc.readers import read_corpus


def write(path, n_sentences):
    path.write_text("".join(f"The DT B-NP\ncat{i} NN I-NP\nsat VBD B-VP\n\n" for i in range(n_sentences)),
                    encoding="utf-8")
    return path


def test_len_is_the_number_of_sentences(tmp_path):
    corpus = read_corpus(write(tmp_path / "a.txt", 7), columns=["word", "pos", "chunk"])
    assert len(corpus) == 7 == corpus.n_sentences
    assert len(corpus.subset([0, 2])) == 2
    assert len(concatenate([corpus, corpus])) == 14


def test_repr_is_one_short_line_whatever_the_size(tmp_path):
    small = read_corpus(write(tmp_path / "small.txt", 2), columns=["word", "pos", "chunk"])
    big = read_corpus(write(tmp_path / "big.txt", 5000), columns=["word", "pos", "chunk"])
    text = repr(big)
    assert "\n" not in text and len(text) < 200, text
    assert abs(len(repr(big)) - len(repr(small))) < 20  # the size shows as counts, not as tokens
    assert "sentences=5,000" in text and "tokens=15,000" in text and "big.txt" in text
    assert "['word', 'pos', 'chunk']" in text and "label='chunk'" in text
    assert "cat4999" not in text
