"""Self- and tri-training and the voting tagger, on small synthetic data."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from structperc import load_model
from structperc.ensembles.vote import vote_tokens
from structperc.ensembles.semisupervised import VotingTagger, agreement, confidence, read_unlabeled, self_train, tri_train
from structperc.estimator.tagger import Tagger
from structperc.corpus import as_corpus

ROOT = Path(__file__).resolve().parent.parent
PARAMS = dict(templates=["w[0]", "suffix1[0]", "w[-1]", "bias"], epochs=3, seed=0)


def synthetic(n_sentences, seed):
    """Words a*, b* tagged A, B; the suffix tells the tag. Deterministic for the seed."""
    rng = np.random.default_rng(seed)
    sentences, labels = [], []
    for _ in range(n_sentences):
        length = int(rng.integers(2, 7))
        tags = rng.choice(["A", "B"], length)
        words = [f"{'x' if t == 'A' else 'y'}{int(rng.integers(0, 30))}{'a' if t == 'A' else 'b'}" for t in tags]
        sentences.append(words)
        labels.append(list(tags))
    return sentences, labels


def naive_vote(predictions):
    out = []
    for t in range(len(predictions[0])):
        labels = [p[t] for p in predictions]
        best = labels[0]
        for label in labels:
            if labels.count(label) > labels.count(best):
                best = label
        out.append(best)
    return out


def test_vote_matches_naive_majority():
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(1, 30))
        predictions = [rng.choice(["A", "B", "C"], n).tolist() for _ in range(3)]
        assert vote_tokens(predictions) == naive_vote(predictions)
    assert vote_tokens([["A"], ["B"], ["C"]]) == ["A"]  # all differ: the first member
    assert vote_tokens([["A"], ["B"], ["B"]]) == ["B"]


def test_agreement_selects_sentences_equal_on_every_token():
    offsets = np.array([0, 2, 3, 6])
    j = np.array(["A", "B", "A", "A", "B", "B"], dtype=object)
    k = np.array(["A", "B", "B", "A", "B", "B"], dtype=object)
    assert agreement(j, k, offsets).tolist() == [0, 2]


def _corpora():
    sentences, labels = synthetic(60, 0)
    unlabeled_sentences, _ = synthetic(80, 1)
    labeled = as_corpus(sentences, labels)
    unlabeled = as_corpus(unlabeled_sentences)
    return labeled, unlabeled


def test_tri_training_is_deterministic_and_adds_agreed_sentences():
    labeled, unlabeled = _corpora()
    records = []
    first = tri_train(PARAMS, labeled, unlabeled, rounds=2, seed=5, callback=lambda r, v: records.append(r))
    second = tri_train(PARAMS, labeled, unlabeled, rounds=2, seed=5)
    test_sentences, test_labels = synthetic(30, 2)
    test = as_corpus(test_sentences, test_labels)
    assert first.predict_corpus(test)[0] == second.predict_corpus(test)[0]
    for a, b in zip(first.members, second.members):
        assert np.array_equal(a.model_.weights, b.model_.weights)
    assert records[0] == {"round": 0, "added": [0, 0, 0]}
    assert len(records) >= 2 and all(n > 0 for n in records[1]["added"])
    assert first.score(test) > 0.9


def _sentences(corpus, column):
    values, offsets = corpus.columns[column], corpus.sentence_offsets
    return [list(values[offsets[s]: offsets[s + 1]]) for s in range(corpus.n_sentences)]


def test_tri_training_members_use_the_agreement_of_the_others(monkeypatch):
    import structperc.ensembles.semisupervised as semisupervised

    fits = []  # (seed, training corpus) of every member trained, in order

    class RecordingTagger(Tagger):
        def fit(self, X, *args, **kwargs):
            fits.append((self.seed, X))
            return super().fit(X, *args, **kwargs)

    monkeypatch.setattr(semisupervised, "TaggerCore", RecordingTagger)
    labeled, unlabeled = _corpora()
    seen = []
    tri_train(PARAMS, labeled, unlabeled, rounds=1, seed=1, callback=lambda r, v: seen.append(v))
    start, after = seen
    predictions = [np.asarray(m.predict_corpus(unlabeled)[0], dtype=object) for m in start.members]
    offsets = unlabeled.sentence_offsets
    n_sentences = np.diff(offsets)
    assert [seed for seed, _ in fits] == [0, 1, 2, 0, 1, 2]
    labeled_words = _sentences(labeled, "word")
    unlabeled_words = _sentences(unlabeled, "word")
    for i, member in enumerate(after.members):
        j, k = [m for m in range(3) if m != i]
        agreed = [s for s in range(unlabeled.n_sentences)
                  if all(predictions[j][t] == predictions[k][t] for t in range(offsets[s], offsets[s + 1]))]
        # the member's training corpus: its bootstrap sample of L (as many sentences as L) plus those
        expected = labeled.n_sentences + len(agreed)
        assert member.model_.metadata["training"]["n_sentences"] == expected
        assert member.model_.metadata["training"]["n_tokens"] > sum(n_sentences[agreed])
        # which sentences round 1 gave member i, and their labels: the agreed ones of U, in order,
        # labelled as h_j tags them; before them, sentences of L only
        corpus = fits[3 + i][1]
        words, labels = _sentences(corpus, "word"), _sentences(corpus, corpus.label)
        assert all(sentence in labeled_words for sentence in words[:labeled.n_sentences])
        assert words[labeled.n_sentences:] == [unlabeled_words[s] for s in agreed]
        assert labels[labeled.n_sentences:] == [list(predictions[j][offsets[s]: offsets[s + 1]]) for s in agreed]
    assert 0 < len(agreed) < unlabeled.n_sentences  # the check compares a real selection


def test_tri_training_with_disagreement_gives_a_member_only_what_it_tags_otherwise():
    labeled, unlabeled = _corpora()
    seen, records = [], []
    tri_train(PARAMS, labeled, unlabeled, rounds=1, seed=1, disagreement=True,
              callback=lambda r, v: (records.append(r), seen.append(v)))
    start, after = seen
    predictions = [np.asarray(m.predict_corpus(unlabeled)[0], dtype=object) for m in start.members]
    offsets = unlabeled.sentence_offsets
    added = []
    for i, member in enumerate(after.members):
        j, k = [m for m in range(3) if m != i]
        spans = [range(offsets[s], offsets[s + 1]) for s in range(unlabeled.n_sentences)]
        chosen = [s for s, span in enumerate(spans)
                  if all(predictions[j][t] == predictions[k][t] for t in span)
                  and any(predictions[i][t] != predictions[j][t] for t in span)]
        assert member.model_.metadata["training"]["n_sentences"] == labeled.n_sentences + len(chosen)
        added.append(len(chosen))
    assert records[1]["added"] == added
    assert after.info == {"method": "tri-training", "disagreement": True}


def test_voting_model_file_round_trip_and_cli(tmp_path):
    labeled, unlabeled = _corpora()
    voting = tri_train(PARAMS, labeled, unlabeled, rounds=1, seed=0)
    path = voting.save(tmp_path / "tri.npz")
    loaded = load_model(path)
    assert isinstance(loaded, VotingTagger)
    test_sentences, test_labels = synthetic(20, 4)
    test = as_corpus(test_sentences, test_labels)
    assert loaded.predict_corpus(test)[0] == voting.predict_corpus(test)[0]


def _write_conll(path, sentences, labels):
    with open(path, "w", encoding="utf-8") as out:
        for words, tags in zip(sentences, labels):
            for w, t in zip(words, tags):
                out.write(f"{w} {t}\n")
            out.write("\n")


def test_cli_train_tri_then_tag_and_eval(tmp_path):
    sentences, labels = synthetic(60, 0)
    _write_conll(tmp_path / "train.txt", sentences, labels)
    test_sentences, test_labels = synthetic(20, 4)
    _write_conll(tmp_path / "test.txt", test_sentences, test_labels)
    raw, _ = synthetic(50, 1)
    (tmp_path / "raw.txt").write_text("\n".join(" ".join(s) for s in raw) + "\n", encoding="utf-8")
    run = [sys.executable, "-m", "structperc"]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    subprocess.run(run + ["train", str(tmp_path / "train.txt"), "--model", str(tmp_path / "tri.npz"),
                          "--columns", "word,label", "--templates", "pos", "--epochs", "2", "--unlabeled",
                          str(tmp_path / "raw.txt"), "--semi", "tri", "--rounds", "1", "-q"],
                   check=True, env=env, cwd=tmp_path)
    done = subprocess.run(run + ["eval", str(tmp_path / "test.txt"), "--model", str(tmp_path / "tri.npz")],
                          check=True, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert "accuracy" in done.stdout
    tagged = subprocess.run(run + ["tag", str(tmp_path / "test.txt"), "--model", str(tmp_path / "tri.npz")],
                            check=True, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert len([line for line in tagged.stdout.splitlines() if line.strip()]) == sum(map(len, test_sentences))
    bad = subprocess.run(run + ["train", str(tmp_path / "train.txt"), "--model", str(tmp_path / "x.npz"),
                                "--columns", "word,label", "--semi", "tri", "-q"],
                         env=env, cwd=tmp_path, capture_output=True, text=True)
    assert bad.returncode == 2 and "--unlabeled" in bad.stderr


def test_self_training_adds_the_most_confident_sentences():
    labeled, unlabeled = _corpora()
    params = {**PARAMS, "trainer": "crf"}
    added = []
    tagger = self_train(params, labeled, unlabeled, rounds=2, share=0.25, callback=added.append)
    assert [r["added"] for r in added] == [20, 40]
    assert tagger.model_.metadata["training"]["n_sentences"] == labeled.n_sentences + 40
    # the first round's choice: the 20 sentences of highest P(y|x) under the L-only tagger
    base = Tagger(**params).fit(labeled)
    _, probability = confidence(base, unlabeled)
    assert np.all((probability > 0) & (probability <= 1))


def test_self_training_margin_for_the_perceptron():
    labeled, unlabeled = _corpora()
    tagger = Tagger(**PARAMS).fit(labeled)
    labels, margin = confidence(tagger, unlabeled)
    assert len(labels) == unlabeled.n_tokens and np.all(margin >= 0)


def test_read_unlabeled_raw_text(tmp_path):
    (tmp_path / "raw.txt").write_text("Hello, world!\n\nIt's fine.\nA b c d e.\n", encoding="utf-8")
    labeled, _ = _corpora()
    corpus = read_unlabeled([tmp_path / "raw.txt"], labeled)
    assert corpus.n_sentences == 3
    assert corpus.columns["word"][:4] == ["Hello", ",", "world", "!"]
    assert read_unlabeled([tmp_path / "raw.txt"], labeled, limit=1, seed=0).n_sentences == 1


@pytest.mark.parametrize("method", ["self", "tri"])
def test_semi_requires_unlabeled(method):
    from structperc.errors import ConfigError
    from structperc.ensembles.semisupervised import semi_fit_file

    with pytest.raises(ConfigError):
        semi_fit_file(Tagger(), "x.txt", [], method)
