"""Checkpoints: a run continued from the checkpoint of an earlier epoch ends with the same model
file, byte for byte, as the run that was never stopped."""
import signal

import numpy as np
import pytest

from builders import random_sentences, structperc_process
from structperc.errors import ConfigError, ModelFileError
from structperc.estimator.tagger import Tagger
from structperc.train.checkpoint import read_checkpoint

TAGS = ("B-NP", "I-NP", "O", "B-VP")


def _data(seed, n):
    rng = np.random.default_rng(seed)
    X, y = random_sentences(rng, n, 4, max_len=8, tags=TAGS)
    # legal BIO: I-NP only after B-NP or I-NP
    y = [[("B-NP" if label == "I-NP" and (i == 0 or s[i - 1] not in ("B-NP", "I-NP")) else label)
          for i, label in enumerate(s)] for s in y]
    return X, y


CONFIGS = [
    dict(trainer="perceptron"),
    dict(trainer="perceptron", average=False, order=2, constrain="bio"),
    dict(trainer="crf", constrain="bio"),
    dict(trainer="memm", order=2),
    dict(trainer="hinge"),
]


@pytest.mark.parametrize("config, with_dev",
                         [(c, False) for c in CONFIGS] + [(CONFIGS[0], True), (CONFIGS[2], True)],
                         ids=lambda c: "-".join(str(v) for v in c.values()) if isinstance(c, dict) else ("dev" if c else "nodev"))
def test_resumed_run_gives_the_uninterrupted_model(config, with_dev, tmp_path):
    X, y = _data(0, 40)
    dev = _data(1, 15) if with_dev else (None, None)
    options = dict(templates=["w[0]", "w[-1]", "pos[0]", "suffix2[0]"], seed=5, columns=["word", "pos"], **config)
    Tagger(epochs=5, **options).fit(X, y, *dev).save(tmp_path / "whole.npz")

    checkpoint = tmp_path / "run.checkpoint.npz"
    first = Tagger(epochs=2, **options).fit(X, y, *dev, checkpoint=checkpoint)
    assert read_checkpoint(checkpoint).epoch == 2
    if not with_dev:  # (with a dev set, the model is the best epoch's, the checkpoint the last one's)
        # the checkpoint is a model too: it tags as the model of epoch 2 does
        assert Tagger.load(checkpoint).predict(X) == first.predict(X)

    resumed = Tagger(epochs=5, **options).fit(X, y, *dev, resume=checkpoint, checkpoint=checkpoint,
                                              checkpoint_every=2)
    resumed.save(tmp_path / "resumed.npz")
    assert (tmp_path / "resumed.npz").read_bytes() == (tmp_path / "whole.npz").read_bytes()
    assert [r.epoch for r in resumed.history_] == [1, 2, 3, 4, 5]
    assert read_checkpoint(checkpoint).epoch == 4  # every 2 epochs


def test_checkpoint_of_another_run_is_refused(tmp_path):
    X, y = _data(0, 20)
    checkpoint = tmp_path / "c.npz"
    Tagger(templates=["w[0]"], epochs=1, seed=1).fit(X, y, checkpoint=checkpoint)
    with pytest.raises(ConfigError, match="differs in: seed"):
        Tagger(templates=["w[0]"], epochs=3, seed=2).fit(X, y, resume=checkpoint)
    with pytest.raises(ConfigError, match="n_sentences"):
        Tagger(templates=["w[0]"], epochs=3, seed=1).fit(X[:-1], y[:-1], resume=checkpoint)
    with pytest.raises(ConfigError, match="beyond the 0 epochs"):
        Tagger(templates=["w[0]"], epochs=0, seed=1).fit(X, y, resume=checkpoint)
    plain = tmp_path / "plain.npz"
    Tagger(templates=["w[0]"], epochs=1, seed=1).fit(X, y).save(plain)
    with pytest.raises(ModelFileError, match="not a checkpoint"):
        Tagger(templates=["w[0]"], epochs=3, seed=1).fit(X, y, resume=plain)


def test_sigint_after_a_checkpoint_then_resume_gives_the_uninterrupted_model(tmp_path):
    """A real process, interrupted by a real SIGINT once epoch 2 is reported, then resumed."""
    X, y = _data(3, 3000)
    lines = []
    for sentence, labels in zip(X, y):
        lines += [f"{word} {pos} {label}" for (word, pos), label in zip(sentence, labels)] + [""]
    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(lines) + "\n")
    common = [corpus, "--columns", "word,pos,chunk", "--seed", 7, "--epochs", 6]

    whole = structperc_process("train", *common, "--model", tmp_path / "whole.npz", "--quiet")
    model = tmp_path / "m.npz"
    process = structperc_process("train", *common, "--model", model, "--checkpoint-every", 1)
    seen = []
    for line in process.stderr:
        seen.append(line)
        if line.startswith("checkpoint") and "(epoch 2)" in line:
            break
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=300)
    assert process.returncode == 130, "".join(seen) + rest
    assert rest.splitlines()[-1] == "interrupted; no model written"
    assert not model.exists()
    checkpoint = tmp_path / "m.checkpoint.npz"
    reached = read_checkpoint(checkpoint).epoch
    assert 2 <= reached < 6, "".join(seen) + rest

    resumed = structperc_process("train", *common, "--model", model, "--checkpoint-every", 1, "--resume", checkpoint)
    _, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    epochs_run = [line.split()[1] for line in err.splitlines() if line.startswith("epoch")]
    assert epochs_run == [str(e) for e in range(reached + 1, 7)]
    _, err = whole.communicate(timeout=600)
    assert whole.returncode == 0, err
    assert model.read_bytes() == (tmp_path / "whole.npz").read_bytes()

    # the same command with another seed: exit 2 and one line naming the difference
    other = structperc_process("train", *common[:-4], "--seed", 8, "--epochs", 6, "--model", model, "--resume", checkpoint)
    _, err = other.communicate(timeout=300)
    assert other.returncode == 2
    assert err.strip().splitlines() == [
        f"structperc: error: {checkpoint}: checkpoint of another run (it differs in: seed)"]


@pytest.mark.parametrize("config, with_dev", [(dict(trainer="perceptron"), False),
                                              (dict(trainer="crf", eta0=0.1), True)], ids=["perceptron", "crf-dev"])
def test_mixing_writes_checkpoints_and_resumes_to_the_uninterrupted_model(config, with_dev, tmp_path):
    """Parameter mixing on 2 workers runs the serial engine's loop: ``Tagger(workers=2)`` writes a
    checkpoint after every epoch as the serial run does, and a run resumed from the checkpoint of
    epoch 2 on a LocalCluster (2 single-threaded workers, threads of this process) ends with the
    model file of the run that was never stopped, byte for byte."""
    pytest.importorskip("dask.distributed")
    from structperc.train.mixing import dask_client
    from structperc.utils.npz import read_npz

    X, y = _data(0, 40)
    dev = _data(1, 15) if with_dev else (None, None)
    options = dict(templates=["w[0]", "w[-1]", "pos[0]", "suffix2[0]"], seed=5, columns=["word", "pos"], **config)
    whole_checkpoint = tmp_path / "whole.checkpoint.npz"
    # a LocalCluster of the Tagger's own, as `train --workers 2` makes (one cluster at a time in a
    # process: dask loses the actors of two in-process clusters open together)
    Tagger(epochs=4, workers=2, **options).fit(X, y, *dev, checkpoint=whole_checkpoint).save(tmp_path / "whole.npz")
    state = read_checkpoint(whole_checkpoint)
    assert state.epoch == 4 and state.rule_state["shards"] == 2 and [r.epoch for r in state.history] == [1, 2, 3, 4]

    checkpoint = tmp_path / "run.checkpoint.npz"
    with dask_client(workers=2) as client:
        first = Tagger(epochs=2, **options).fit(X, y, *dev, checkpoint=checkpoint, client=client)
        assert read_checkpoint(checkpoint).epoch == 2
        if not with_dev:  # the checkpoint is a model of the weights of epoch 2
            assert Tagger.load(checkpoint).predict(X) == first.predict(X)
        resumed = Tagger(epochs=4, **options).fit(X, y, *dev, resume=checkpoint, client=client)
    resumed.save(tmp_path / "resumed.npz")
    assert [r.epoch for r in resumed.history_] == [1, 2, 3, 4]
    # the same model file but for the order of the metadata keys (a run on a given client records
    # its workers last): every array, bytes and all, and the same metadata
    (arrays, metadata), (whole_arrays, whole_metadata) = (read_npz(tmp_path / name) for name in
                                                          ("resumed.npz", "whole.npz"))
    assert arrays.keys() == whole_arrays.keys() and metadata == whole_metadata
    assert all(arrays[k].tobytes() == whole_arrays[k].tobytes() for k in arrays)
    # a mixing checkpoint holds every shard's state: a serial run cannot continue it
    with pytest.raises(ConfigError, match="parameter mixing over 2 shards"):
        Tagger(epochs=4, **options).fit(X, y, *dev, resume=checkpoint)


def test_a_resumable_model_is_not_trained_by_mixing():
    """A resumable model keeps one perceptron's raw weights and sums; mixing has one per shard: an
    error before any cluster is started (it was an AttributeError after training)."""
    with pytest.raises(ConfigError, match="resumable"):
        Tagger(workers=2, resumable=True).check_engine()
    Tagger(workers=2).check_engine()
    Tagger(resumable=True).check_engine()
