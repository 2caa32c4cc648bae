"""The reranked tagger as one model (fit, save, load_model, the commands), its context features
(documents, jackknifed gazetteers) and the loss-using ranking learner against naive references."""
import dataclasses
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from structperc._kernels.rank.loss_ranking import loss_epoch, squared_distance
from structperc._kernels.records import Groups
from structperc.errors import ConfigError
from structperc.nbest.jackknife import fold_split
from structperc.nbest.lists import nbest_corpus
from structperc.readers import read_corpus
from structperc.rerank.context import (Gazetteer, ListContext, document_ids, featurize_in_context,
                                       jackknifed_gazetteers)
from structperc.rerank.learners import LossReranker, Reranker, load_reranker

ROOT = Path(__file__).resolve().parents[1]
PEOPLE = ["Jan Peeters", "Marie Claes", "Piet Janssens", "Ann Maes", "Luc Wouters", "Els Jacobs"]
PLACES = ["Brussel", "Gent", "Antwerpen", "Leuven", "Brugge", "Hasselt"]
GROUPS = ["Anderlecht", "Philips", "Agfa", "Sabena", "Fortis", "Belga"]
VERBS = ["zag", "bezocht", "kende", "sprak", "verliet", "noemde"]


def ner_corpus_text(n_documents, seed, sentences_per_document=6):
    """CoNLL-2002-like text: documents (-DOCSTART-) in which a few names recur with their types."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n_documents):
        lines += ["-DOCSTART- -DOCSTART- O", ""]
        people = rng.choice(PEOPLE, 2, replace=False)
        place = rng.choice(PLACES)
        group = rng.choice(GROUPS)
        for _ in range(sentences_per_document):
            tokens = []
            person = str(rng.choice(people))
            if rng.random() < 0.5:
                person = person.split()[-1]  # the surname alone, later in the article
            tokens += [(w, "N", ("B-PER" if i == 0 else "I-PER")) for i, w in enumerate(person.split())]
            tokens += [(str(rng.choice(VERBS)), "V", "O")]
            if rng.random() < 0.5:
                tokens += [("in", "Prep", "O"), (str(place), "N", "B-LOC")]
            else:
                tokens += [("bij", "Prep", "O"), (str(group), "N", "B-ORG")]
            tokens += [(".", "Punc", "O")]
            lines += [" ".join(t) for t in tokens] + [""]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def ner_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ner")
    (folder / "train.txt").write_text(ner_corpus_text(24, 0))
    (folder / "dev.txt").write_text(ner_corpus_text(6, 1))
    return folder


def read(path):
    return read_corpus(path, columns=["word", "pos", "ne"], label="ne")


def cluster_map(words, seed=0):
    """word -> a random bit string of 1 to 24 bits (short paths and shared prefixes among them), for
    about 4 words in 5 of ``words``; the others have no path."""
    rng = np.random.default_rng(seed)
    return {w: "".join(rng.choice(["0", "1"], int(rng.integers(1, 25)))) for w in sorted(set(words))
            if rng.random() < 0.8}


# ------------------------------------------------------------------------------------ documents
def test_document_ids_follow_the_docstart_lines(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("-DOCSTART- -X- O\n\nA N B-PER\n\nB N O\n\n-DOCSTART- -X- O\n\nC N O\n\n-DOCSTART- -X- O\n"
                    "\nD N O\nE N O\n")
    corpus = read(path)
    assert document_ids(corpus).tolist() == [1, 1, 2, 3]
    assert document_ids(corpus.subset([1, 3])).tolist() == [1, 3]
    # no markers: blocks of document_size sentences, or each sentence alone
    plain = tmp_path / "p.txt"
    plain.write_text("A N O\n\nB N O\n\nC N O\n")
    assert document_ids(read(plain), document_size=2).tolist() == [0, 0, 1]
    assert document_ids(read(plain)).tolist() == [0, 1, 2]


def test_document_features_count_the_other_sentences_only(tmp_path):
    from structperc.estimator.tagger import Tagger

    path = tmp_path / "c.txt"
    path.write_text("-DOCSTART- -X- O\n\nPeeters N B-PER\nzag V O\n\nPeeters N B-PER\nsprak V O\n\n"
                    "-DOCSTART- -X- O\n\nPeeters N B-ORG\nkende V O\n")
    corpus = read(path)
    tagger = Tagger(templates=["w[0]", "bias"], epochs=5).fit(corpus)
    nb = nbest_corpus(tagger, corpus, 2)
    context = ListContext(nb, document_ids(corpus))
    # sentence 0: elsewhere in its document, "Peeters" is PER once (sentence 1), never ORG (other document)
    assert context.one[1].elsewhere(("s", "Peeters"), 0) == {"B-PER"[2:]: 1.0}
    features = dict(context.entity_features(0, ["Peeters", "zag"], "PER", 0, 0, ["document"]))
    assert features["d1s:PER=PER"] == 1.0 and features["d1s:agree"] == 1.0
    assert "d1s:PER=ORG" not in features
    # sentence 2 is alone in its document
    features = dict(context.entity_features(2, ["Peeters", "kende"], "ORG", 0, 0, ["document"]))
    assert features["d1s:ORG:none"] == 1.0


def test_corpus_features_count_the_other_sentences_of_the_block(tmp_path):
    from structperc.estimator.tagger import Tagger

    path = tmp_path / "c.txt"
    path.write_text("-DOCSTART- -X- O\n\nPeeters N B-PER\nzag V O\n\nPeeters N B-PER\nsprak V O\n\n"
                    "-DOCSTART- -X- O\n\nPeeters N B-ORG\nkende V O\n")
    corpus = read(path)
    tagger = Tagger(templates=["w[0]", "w[1]", "bias"], epochs=5).fit(corpus)
    nb = nbest_corpus(tagger, corpus, 2)
    assert [nb.candidate_labels(j)[0] for j in nb.first_choice()] == ["B-PER", "B-PER", "B-ORG"]

    def first_best(blocks, sentence):
        data, vocabulary = featurize_in_context(nb, ["corpus"], ListContext(nb, document_ids(corpus), blocks=blocks),
                                                {}, grow=True)
        names = {i: name for name, i in vocabulary.items()}
        row = list(data.qids).index(sentence + 1)
        j = data.group_offsets[row]
        ids = data.feature_ids[data.row_offsets[j]: data.row_offsets[j + 1]]
        values = data.values[data.row_offsets[j]: data.row_offsets[j + 1]]
        return {names[i]: v for i, v in zip(ids.tolist(), values.tolist()) if i in names}

    # the whole file: elsewhere, "Peeters" is PER once (sentence 1) and ORG once (sentence 2, another document)
    features = first_best(None, 0)
    assert features["c1s:PER=PER"] == 0.5 and features["c1s:PER=ORG"] == 0.5 and features["c1s:agree"] == 0.5
    assert not any(name.startswith("d") for name in features)
    # blocks that keep sentence 2 apart: it is alone in its block, and sentence 0 sees PER only
    assert first_best([0, 0, 1], 2)["c1s:ORG:none"] == 1.0
    features = first_best([0, 0, 1], 0)
    assert features["c1s:PER=PER"] == 1.0 and "c1s:PER=ORG" not in features


def test_jackknifed_gazetteers_never_hold_their_own_fold(ner_files):
    corpus = read(ner_files / "train.txt")
    fold_of = fold_split(corpus.n_sentences, 3, blocks=True)
    gazetteers = jackknifed_gazetteers(corpus, fold_of)
    for f, gazetteer in enumerate(gazetteers):
        expected = Gazetteer.from_corpus(corpus, np.flatnonzero(fold_of != f))
        assert gazetteer.strings == expected.strings
        alone = Gazetteer.from_corpus(corpus, np.flatnonzero(fold_of == f))
        # a count in the fold's gazetteer is the whole corpus's less the fold's own
        whole = Gazetteer.from_corpus(corpus)
        for key, counts in alone.strings.items():
            for kind, n in counts.items():
                assert gazetteer.strings.get(key, {}).get(kind, 0) == whole.strings[key][kind] - n
    round_trip = Gazetteer.from_arrays(gazetteers[0].arrays())
    assert round_trip == gazetteers[0]


def test_truncate_gives_the_lists_of_a_smaller_k(ner_files):
    from structperc.estimator.tagger import Tagger

    corpus = read(ner_files / "dev.txt")
    tagger = Tagger(templates=["w[0]", "pos[0]", "bias"], epochs=2).fit(read(ner_files / "train.txt"))
    big, small = nbest_corpus(tagger, corpus, 6), nbest_corpus(tagger, corpus, 3)
    cut = big.truncate(3)
    assert cut.candidate_offsets.tolist() == small.candidate_offsets.tolist()
    assert cut.paths.tolist() == small.paths.tolist()
    assert np.allclose(cut.scores, small.scores) and cut.counts.tolist() == small.counts.tolist()


# ------------------------------------------------------------------------------------ loss learner
def random_groups(seed, groups=12, width=5, n_features=9):
    rng = np.random.default_rng(seed)
    group_offsets, row_offsets, ids, values, targets = [0], [0], [], [], []
    for _ in range(groups):
        size = int(rng.integers(1, 6))
        for _ in range(size):
            chosen = np.sort(rng.choice(np.arange(1, n_features), int(rng.integers(1, width)), replace=False))
            ids += chosen.tolist()
            values += rng.normal(size=len(chosen)).round(2).tolist()
            row_offsets.append(len(ids))
            targets.append(float(rng.integers(-2, 4)))
        group_offsets.append(len(targets))
    group_offsets, row_offsets = np.array(group_offsets), np.array(row_offsets)
    targets = np.array(targets)
    best = np.array([group_offsets[g] + int(np.argmax(targets[group_offsets[g]: group_offsets[g + 1]]))
                     for g in range(groups)])
    return Groups(group_offsets, row_offsets, np.array(ids, dtype=np.int64), np.array(values), targets, best), \
        n_features


def dense_rows(groups, n_features):
    x = np.zeros((len(groups.row_offsets) - 1, n_features))
    for j in range(len(x)):
        for k in range(groups.row_offsets[j], groups.row_offsets[j + 1]):
            x[j, groups.feature_ids[k]] += groups.values[k]
    return x


def naive_loss_epochs(groups, n_features, orders, margin, c, mira):
    """The update of loss_ranking's docstring on dense vectors, averaged explicitly."""
    x = dense_rows(groups, n_features)
    w = np.zeros(n_features)
    history = []
    for order in orders:
        for g in order:
            a, b = groups.group_offsets[g], groups.group_offsets[g + 1]
            if b - a > 1:
                gold = groups.best[g]
                loss = groups.targets[gold] - groups.targets[a:b]
                augmented = x[a:b] @ w + margin * loss
                predicted = a + int(np.argmax(augmented))
                lp = loss[predicted - a]
                if lp > 0:
                    violation = margin * lp - (x[gold] - x[predicted]) @ w
                    diff = x[gold] - x[predicted]
                    step = 0.0
                    if mira and violation > 0 and diff @ diff > 0:
                        step = min(c, violation / (diff @ diff))
                    elif not mira and (x[predicted] @ w >= x[gold] @ w or violation > 0):
                        step = lp
                    w = w + step * diff
            history.append(w.copy())
    return w, np.mean(history, axis=0)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mira", [True, False])
def test_loss_epoch_matches_the_naive_update(seed, mira):
    groups, n_features = random_groups(seed)
    rng = np.random.default_rng(seed + 100)
    orders = [rng.permutation(len(groups.group_offsets) - 1) for _ in range(3)]
    margin, c = (1.0, 0.5) if seed % 2 else (0.5, 2.0)
    w, u, counter = np.zeros(n_features), np.zeros(n_features), 0.0
    for order in orders:
        counter, _ = loss_epoch(w, u, counter, groups, order.astype(np.int64), margin, c, mira)
    expected_w, expected_average = naive_loss_epochs(groups, n_features, orders, margin, c, mira)
    assert np.allclose(w, expected_w)
    assert np.allclose(w - u / counter, expected_average)


def test_squared_distance_matches_dense():
    groups, n_features = random_groups(7, groups=20)
    x = dense_rows(groups, n_features)
    for a in range(len(x)):
        for b in range(len(x)):
            expected = float((x[a] - x[b]) @ (x[a] - x[b]))
            got = squared_distance(groups.row_offsets, groups.feature_ids, groups.values, a, b)
            assert got == pytest.approx(expected)


def test_loss_reranker_checks_and_round_trips(tmp_path, ner_files):
    from structperc.estimator.tagger import Tagger

    with pytest.raises(ConfigError, match="unknown update 'nope'"):
        LossReranker(update="nope").fit_ranking(random_ranking())
    corpus = read(ner_files / "dev.txt")
    tagger = Tagger(templates=["w[0]", "bias"], epochs=2).fit(read(ner_files / "train.txt"))
    nb = nbest_corpus(tagger, corpus, 4)
    data, vocabulary = featurize_in_context(nb, ["entity", "sequence", "rank"], None, {}, grow=True)
    reranker = LossReranker(epochs=3, update="scaled", margin=0.5).fit_ranking(data, vocabulary)
    reranker.save(tmp_path / "loss.npz")
    loaded = load_reranker(tmp_path / "loss.npz")
    assert (loaded.update, loaded.margin) == ("scaled", 0.5)
    assert loaded.choose(data).tolist() == reranker.choose(data).tolist()


def random_ranking():
    from structperc.rerank.data import RankingData

    groups, _ = random_groups(3)
    return RankingData(groups.group_offsets, groups.row_offsets, groups.feature_ids, groups.values, groups.targets,
                       np.arange(1, len(groups.group_offsets)), [])


# ------------------------------------------------------------------------------------ one model
def test_reranked_tagger_fits_saves_loads_and_is_scored_by_eval(tmp_path, ner_files):
    from sklearn.base import clone

    from structperc import load_model
    from structperc.estimator.tagger import Tagger
    from structperc.rerank.tagger import RerankedTagger

    train, dev = read(ner_files / "train.txt"), read(ner_files / "dev.txt")
    model = RerankedTagger(base=Tagger(templates=["w[0]", "w[-1]", "pos[0]", "bias"], epochs=2), k=5,
                           learner=Reranker(epochs=3), folds=3)
    assert clone(model).get_params()["k"] == 5
    model.fit(train, dev=dev)
    assert len(model.selection_) > 1 and model.vocabulary_
    ours = model.evaluate(dev)
    path = tmp_path / "reranked.npz"
    model.save(path)
    loaded = load_model(path)
    assert isinstance(loaded, RerankedTagger)
    assert loaded.predict(dev) == model.predict(dev)
    assert 0 <= loaded.score(dev) <= 1
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "structperc", "eval", str(ner_files / "dev.txt"), "--model",
                           str(path), "--json"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["f1"] == pytest.approx(ours["f1"])
    tagged = tmp_path / "tagged.txt"
    done = subprocess.run([sys.executable, "-m", "structperc", "tag", str(ner_files / "dev.txt"), "--model",
                           str(path), "--output", str(tagged), "--quiet"], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    labels = [line.split()[-1] for line in tagged.read_text().splitlines() if line.strip()]
    assert labels == [label for sentence in model.predict(dev) for label in sentence]


def test_a_reranked_tagger_with_the_corpus_family_round_trips(tmp_path, ner_files):
    from structperc import load_model
    from structperc.estimator.tagger import Tagger
    from structperc.rerank.tagger import RerankedTagger

    train, dev = read(ner_files / "train.txt"), read(ner_files / "dev.txt")
    model = RerankedTagger(base=Tagger(templates=["w[0]", "bias"], epochs=2), k=4, learner=Reranker(epochs=2),
                           families=["corpus", "rank"], folds=3).fit(train)
    assert any(name.startswith(("c1s:", "cns:")) for name in model.vocabulary_)
    model.save(tmp_path / "reranked.npz")
    loaded = load_model(tmp_path / "reranked.npz")
    assert loaded.families_ == ["corpus", "rank"]
    assert loaded.predict(dev) == model.predict(dev)


def test_a_reranked_tagger_with_the_posterior_family_keeps_its_fitted_temperature(tmp_path, ner_files):
    from structperc import load_model
    from structperc.estimator.tagger import Tagger
    from structperc.rerank.tagger import RerankedTagger

    train, dev = read(ner_files / "train.txt"), read(ner_files / "dev.txt")
    model = RerankedTagger(base=Tagger(templates=["w[0]", "bias"], epochs=2), k=4, learner=Reranker(epochs=2),
                           families=["posterior", "rank"], folds=3).fit(train)
    assert "pp:merit" in model.vocabulary_ and any(name.startswith("pp=") for name in model.vocabulary_)
    assert model.temperature_ != 1.0  # a perceptron's path scores are not log-probabilities
    model.save(tmp_path / "reranked.npz")
    loaded = load_model(tmp_path / "reranked.npz")
    assert loaded.temperature_ == model.temperature_
    assert loaded.predict(dev) == model.predict(dev)
    # the command line fits the same model and says its temperature
    from typer.testing import CliRunner

    from structperc.cli.main import app

    model.base_.model_.metadata["input"] = {"format": "conll", "columns": ["word", "pos", "ne"], "label": "ne"}
    model.base_.save(tmp_path / "base.npz")
    result = CliRunner().invoke(app, ["rerank", "fit", str(ner_files / "train.txt"), "--base", str(tmp_path / "base.npz"),
                                      "-k", "4", "--folds", "3", "--learner", "perceptron", "--families",
                                      "posterior,rank", "--output", str(tmp_path / "cli.npz"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["temperature"] == pytest.approx(load_model(tmp_path / "cli.npz").temperature_)


def brute_force_temperature(nb, merits, grid):
    """The temperature of ``grid`` under which the best candidates by ``merits`` are likeliest, with
    the softmax written out per sentence."""
    def log_likelihood(t):
        total = 0.0
        for i in range(nb.n_sentences):
            a, b = nb.candidate_offsets[i], nb.candidate_offsets[i + 1]
            if a == b:
                continue
            best = a + int(np.argmax(merits[a:b]))
            top = max(nb.scores[a:b])
            total += (nb.scores[best] - top) / t - math.log(sum(math.exp((s - top) / t) for s in nb.scores[a:b]))
        return total
    return max(grid, key=log_likelihood)


def test_fit_temperature_finds_the_likeliest_temperature_of_a_brute_force_search(ner_files):
    from structperc.estimator.tagger import Tagger
    from structperc.rerank.context import candidate_merits
    from structperc.rerank.posterior import fit_temperature

    train = read(ner_files / "train.txt")
    tagger = Tagger(templates=["w[0]", "bias"], epochs=1).fit(train.subset(range(20)))
    nb = nbest_corpus(tagger, train.subset(range(20, 80)), 6)
    merits = candidate_merits(nb)
    grid = np.exp(np.linspace(np.log(0.05), np.log(100.0), 400))
    expected = brute_force_temperature(nb, merits, grid)
    assert fit_temperature(nb, merits) == pytest.approx(expected, rel=0.03)
    # scores five times as large want a temperature five times as large
    scaled = dataclasses.replace(nb, scores=nb.scores * 5)
    assert fit_temperature(scaled, merits) == pytest.approx(5 * fit_temperature(nb, merits), rel=1e-3)


def write_paths(path, clusters):
    """``clusters`` as ``structperc clusters`` writes them: bitstring<TAB>word<TAB>count lines."""
    path.write_text("".join(f"{bits}\t{word}\t1\n" for word, bits in clusters.items()), encoding="utf-8")
    return path


def test_a_reranked_tagger_with_the_cluster_family_keeps_its_clusters_in_its_file(tmp_path, ner_files):
    from structperc import load_model
    from structperc.estimator.tagger import Tagger
    from structperc.rerank.tagger import RerankedTagger

    train, dev = read(ner_files / "train.txt"), read(ner_files / "dev.txt")
    clusters = cluster_map(train.columns["word"])
    paths = write_paths(tmp_path / "paths.txt", clusters)
    model = RerankedTagger(base=Tagger(templates=["w[0]", "bias"], epochs=2), k=4, learner=Reranker(epochs=2),
                           families=["cluster", "rank"], folds=3, clusters=str(paths)).fit(train)
    assert model.clusters_.paths == clusters
    assert any(name.startswith("ec4=") for name in model.vocabulary_)
    assert any(name.startswith(("ecb20=", "eca20=")) for name in model.vocabulary_)
    model.save(tmp_path / "reranked.npz")
    paths.unlink()
    loaded = load_model(tmp_path / "reranked.npz")
    assert loaded.families_ == ["cluster", "rank"] and loaded.clusters_.paths == clusters
    assert loaded.predict(dev) == model.predict(dev)
    # a dict gives the same model as its file
    again = RerankedTagger(base=Tagger(templates=["w[0]", "bias"], epochs=2), k=4, learner=Reranker(epochs=2),
                           families=["cluster", "rank"], folds=3, clusters=clusters).fit(train)
    assert again.vocabulary_ == model.vocabulary_ and again.predict(dev) == model.predict(dev)


def test_a_crf_base_is_jackknifed_with_its_settings(ner_files, monkeypatch):
    from structperc.estimator.tagger import Tagger
    from structperc.nbest import jackknife
    from structperc.rerank.tagger import RerankedTagger

    trained = []
    fit = Tagger.fit

    def recording_fit(self, *args, **kwargs):
        trained.append(self.get_params())
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(Tagger, "fit", recording_fit)
    train, dev = read(ner_files / "train.txt"), read(ner_files / "dev.txt")
    base = Tagger(templates=["w[0]", "bias"], trainer="crf", epochs=3)
    model = RerankedTagger(base=base, k=3, folds=2).fit(train)
    assert len(trained) == 3 and all(p == base.get_params() for p in trained)  # the base, then one per fold
    assert model.base_.trainer == "crf" and model.training_lists_["k"] == 3
    assert len(model.selection_) > 1  # no dev: settings chosen on the last tenth of the training lists
    assert len(model.predict(dev)) == dev.n_sentences
    assert jackknife.fold_split(10, 2, blocks=True).tolist() == [0] * 5 + [1] * 5


def test_reranked_tagger_refuses_bad_settings(ner_files):
    from structperc.estimator.tagger import Tagger
    from structperc.rerank.tagger import RerankedTagger

    train = read(ner_files / "train.txt")
    with pytest.raises(ConfigError, match="unknown feature family 'nope'"):
        RerankedTagger(base=Tagger(), families=["nope"]).fit(train)
    with pytest.raises(ConfigError, match="needs a base tagger"):
        RerankedTagger().fit(train)
    with pytest.raises(ConfigError, match="the cluster family needs clusters: give clusters=FILE"):
        RerankedTagger(base=Tagger(), families=["cluster", "rank"]).fit(train)
    with pytest.raises(ConfigError, match="no such clusters file"):
        RerankedTagger(base=Tagger(), families=["cluster"], clusters=str(ner_files / "nope.txt")).fit(train)
    with pytest.raises(ConfigError, match="a path is a string of 0 and 1"):
        RerankedTagger(base=Tagger(), families=["cluster"], clusters={"Jan": "PER"}).fit(train)
    with pytest.raises(ConfigError, match="unknown reranker learner"):
        RerankedTagger(base=Tagger(), learner="nope").fit(train)


def test_rerank_fit_command_names_the_line_of_a_malformed_clusters_file(tmp_path, ner_files):
    from typer.testing import CliRunner

    from structperc.cli.main import app
    from structperc.estimator.tagger import Tagger

    base = Tagger(templates=["w[0]", "bias"], epochs=1).fit(read(ner_files / "train.txt"))
    base.model_.metadata["input"] = {"format": "conll", "columns": ["word", "pos", "ne"], "label": "ne"}
    base.save(tmp_path / "base.npz")
    (tmp_path / "bad.txt").write_text("0110\tJan\t3\n0111\tPiet\n01x1\tGent\t2\n", encoding="utf-8")
    runner = CliRunner()

    def fit(*args):
        return runner.invoke(app, ["rerank", "fit", str(ner_files / "train.txt"), "--base", str(tmp_path / "base.npz"),
                                   "--output", str(tmp_path / "out.npz"), *map(str, args)])

    for args, where in (((tmp_path / "bad.txt",), "bad.txt:2:"), ((tmp_path / "none.txt",), "none.txt: no such")):
        result = fit("--families", "cluster,rank", "--clusters", *args)
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert result.exit_code == 2 and len(lines) == 1 and where in lines[0], result.output
        assert not (tmp_path / "out.npz").exists()
    (tmp_path / "bad.txt").write_text("0110\tJan\t3\n01x1\tGent\t2\n", encoding="utf-8")
    result = fit("--families", "cluster", "--clusters", tmp_path / "bad.txt")
    assert result.exit_code == 2 and "bad.txt:2: expected bitstring<TAB>word<TAB>count lines" in result.output, result.output
    result = fit("--families", "cluster")
    assert result.exit_code == 2 and "the cluster family needs clusters" in result.output, result.output
    result = fit("--clusters", tmp_path / "bad.txt")  # the default families leave clusters unread: an error
    assert result.exit_code == 2 and "add cluster to --families" in result.output, result.output


@pytest.mark.slow
def test_rerank_fit_command_writes_a_model_that_eval_reads(tmp_path, ner_files):
    env = dict(os.environ, PYTHONPATH=str(ROOT))

    def run(*args):
        return subprocess.run([sys.executable, "-m", "structperc", *map(str, args)], capture_output=True, text=True,
                              env=env, timeout=900)

    base = tmp_path / "base.npz"
    done = run("train", ner_files / "train.txt", "--model", base, "--templates", "ner", "--epochs", "2",
               "--quiet")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "reranked.npz"
    done = run("rerank", "fit", ner_files / "train.txt", "--base", base, "--dev", ner_files / "dev.txt", "-k", "4",
               "--folds", "3", "--output", out, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["selection"]
    done = run("eval", ner_files / "dev.txt", "--model", out, "--json")
    assert done.returncode == 0, done.stderr
    assert 0 <= json.loads(done.stdout)["f1"] <= 100
    done = run("rerank", "fit", ner_files / "train.txt", "--base", base, "--families", "nope", "--output", out)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    # what needs token features (explain, the report) or the base's own k-best lists (nbest) names the base
    # model, in one line
    for args in (("explain", ner_files / "dev.txt", "--model", out),
                 ("eval", ner_files / "dev.txt", "--model", out, "--report", tmp_path / "r.html")):
        done = run(*args)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert "base model" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    # nbest writes the lists it reranks: its base's
    lists = {name: run("nbest", ner_files / "dev.txt", "--model", path, "-k", "3", "--quiet")
             for name, path in (("reranked", out), ("base", base))}
    assert all(done.returncode == 0 for done in lists.values()), lists["reranked"].stderr
    assert lists["reranked"].stdout == lists["base"].stdout and "# sentence" in lists["base"].stdout


# ------------------------------------------------------------------------------------ against naive references
def rows_by_string(data, vocabulary):
    names = {fid: text for text, fid in vocabulary.items()}
    names[1] = "<score>"
    out = []
    for j in range(data.n_rows):
        a, b = data.row_offsets[j], data.row_offsets[j + 1]
        out.append({names[int(f)]: float(v) for f, v in zip(data.feature_ids[a:b], data.values[a:b])})
    return out


def assert_same_rows(ours, theirs):
    assert len(ours) == len(theirs)
    for row, expected in zip(ours, theirs):
        assert row.keys() == expected.keys()
        for key, value in expected.items():
            assert row[key] == pytest.approx(value, abs=1e-12), key


@pytest.mark.parametrize("k", [1, 4])
def test_featurizing_and_document_counts_match_the_naive_references(ner_files, k):
    from naive_rerank import naive_document_counts, naive_featurize

    from structperc.estimator.tagger import Tagger
    from structperc.rerank.context import FAMILIES

    train, dev = read(ner_files / "train.txt"), read(ner_files / "dev.txt")
    tagger = Tagger(templates=["w[0]", "bias"], epochs=1).fit(train.subset(range(30)))
    clusters = cluster_map(train.columns["word"])
    for corpus in (dev, train.subset(range(40, 100))):
        nb = nbest_corpus(tagger, corpus, k)
        blocks = np.arange(corpus.n_sentences) * 3 // corpus.n_sentences  # three blocks of sentences
        context = ListContext(nb, document_ids(corpus), [Gazetteer.from_corpus(train.subset(range(50)))],
                              np.zeros(corpus.n_sentences, dtype=np.int64), blocks)
        one, many = naive_document_counts(nb, document_ids(corpus))
        one_block, many_block = naive_document_counts(nb, blocks)
        for ours, theirs in ((context.one, one), (context.many, many), (context.over_blocks.one, one_block),
                             (context.over_blocks.many, many_block)):
            assert ours.keys() == theirs.keys()
            for d in theirs:
                assert ours[d].total.keys() == theirs[d].total.keys()
                for key, counts in theirs[d].total.items():
                    assert dict(ours[d].total[key]) == pytest.approx(dict(counts))
        for families in (list(FAMILIES), ["sequence"], ["chunk", "rank"], ["document"], ["corpus"], ["around"],
                         ["cluster"]):
            data, vocabulary = featurize_in_context(nb, families, context, {}, grow=True, clusters=clusters)
            expected, expected_vocabulary = naive_featurize(nb, families, context, {}, grow=True, clusters=clusters)
            assert set(vocabulary) == set(expected_vocabulary)
            assert data.group_offsets.tolist() == expected.group_offsets.tolist()
            assert data.targets.tolist() == expected.targets.tolist()
            assert_same_rows(rows_by_string(data, vocabulary), rows_by_string(expected, expected_vocabulary))
            # a fixed vocabulary drops the unseen strings alike
            small = dict(list(vocabulary.items())[: len(vocabulary) // 2])
            got, _ = featurize_in_context(nb, families, context, dict(small), clusters=clusters)
            want, _ = naive_featurize(nb, families, context, dict(small), clusters=clusters)
            assert got.feature_ids.tolist() == want.feature_ids.tolist()
            assert np.allclose(got.values, want.values)


def test_candidate_spans_kernel_matches_chunk_spans():
    from structperc.chunks import chunk_spans
    from structperc.rerank.spans import label_tables
    from structperc._kernels.rank.candidates import candidate_spans

    names = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "E-LOC", "S-ORG", "I-ORG"]
    tags, types, type_names = label_tables(names)
    rng = np.random.default_rng(5)
    paths = [rng.integers(0, len(names), size=int(rng.integers(0, 9))) for _ in range(300)]
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in paths])]).astype(np.int64)
    flat = np.concatenate(paths).astype(np.int64)
    end_type = type_names.index("_") if "_" in type_names else len(type_names)
    span_offsets, kinds, firsts, lasts = candidate_spans(flat, offsets, tags, types, end_type)
    for c, path in enumerate(paths):
        a, b = span_offsets[c], span_offsets[c + 1]
        ours = [(type_names[k], f, e) for k, f, e in zip(kinds[a:b], firsts[a:b], lasts[a:b])]
        assert ours == chunk_spans([names[i] for i in path]), [names[i] for i in path]


def test_the_defaults_are_what_ned_testa_chose():
    """RerankedTagger's families and learner are the ones `make rerank-ner` chose on testa (its results
    file), so that a rerun that chooses otherwise fails here until the defaults follow."""
    from structperc.rerank.learners import LEARNERS
    from structperc.rerank.tagger import DEFAULT_FAMILIES, DEFAULT_K, DEFAULT_LEARNER, NAMED_LEARNERS

    chosen = json.loads((ROOT / "experiments" / "results" / "rerank_ner.json").read_text())["chosen"]
    assert sorted(DEFAULT_FAMILIES) == sorted(chosen["families"])
    assert DEFAULT_K == chosen["k"]
    learner = chosen["learner"]
    if "update" in learner:  # a loss learner: the named one at those settings
        named = NAMED_LEARNERS[DEFAULT_LEARNER]()
        assert {key: getattr(named, key) for key in learner} == learner
    else:  # the averaged perceptron; its epochs and base-score weight are chosen by fit on a dev corpus
        assert LEARNERS.get(DEFAULT_LEARNER) is not None and DEFAULT_LEARNER == "perceptron"
