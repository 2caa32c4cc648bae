"""The encoder against a naive Python encoder, the hash table against a dict, feature hashing."""
from collections import Counter
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import template_keys as naive_template_keys

from structperc.features import encode as encode_module
from structperc.features import lookup as lookup_module
from structperc.features import vocabulary as vocabulary_module
from structperc._kernels.encode import hashing
from structperc._kernels.encode.keys import bucket_of
from structperc.features.encode import FIRST_ID, UNKNOWN, FeatureEncoder
from structperc.errors import ConfigError
from structperc.model.linear_chain import LinearChainModel
from structperc.corpus import as_corpus
from structperc.features.templates import ATTRIBUTES, load_templates
from structperc.train import Problem, make_rule, train_online

WORDS = ["the", "cat", "Sat", "on", "mat-2", "a", "dog", "ran", "Big", "red", "x1", "of"]
TEMPLATES = ["w[0]", "w[-1]|w[0]", "pos[1]", "pos[-2]|pos[-1]|pos[0]", "suffix2[0]", "shape[-1]|shape[0]",
             "prefix1[0]@rare", "w[2]|suffix3[-2]@rare", "bias", "pair:pos[0]", "pair:w[-1]|pos[0]", "pair:bias"]
GOLDEN = np.uint64(11400714819323198485)


def random_corpus(rng, n_sentences, words=WORDS, n_tags=3, labels=("A", "B", "C")):
    X, y = [], []
    for _ in range(n_sentences):
        n = int(rng.integers(1, 7))
        X.append([(words[i], f"P{p}") for i, p in zip(rng.integers(0, len(words), n), rng.integers(0, n_tags, n))])
        y.append([labels[i] for i in rng.integers(0, len(labels), n)])
    return as_corpus(X, y, ["word", "pos"])


# ---------------------------------------------------------------------------- naive encoder
class NaiveEncoder:
    """Today's encoding spelled out in plain Python: vocabularies and features in first-seen order,
    features numbered by first occurrence over (token, template), kept when seen min_count times."""

    def __init__(self, templates, min_count=0, rare_threshold=5):
        parsed = load_templates(templates)
        self.kinds = {"feature": [t for t in parsed if not t.pair], "pair": [t for t in parsed if t.pair]}
        self.fields = sorted({f for t in parsed for f in t.fields} | {"word"})
        self.min_count, self.rare_threshold = min_count, rare_threshold

    def _column(self, corpus, field):
        if field in ATTRIBUTES:
            return [ATTRIBUTES[field](w) for w in corpus.columns["word"]]
        return corpus.columns[field]

    def _values(self, corpus):
        values = {}
        for f in self.fields:
            index = {v: i + FIRST_ID for i, v in enumerate(self.vocab[f])}
            values[f] = [index.get(v, UNKNOWN) for v in self._column(corpus, f)]
        rare = [self.word_count.get(w, 0) < self.rare_threshold for w in corpus.columns["word"]]
        return values, rare

    def _rows(self, corpus, kind):
        values, rare = self._values(corpus)
        radix = {f: len(self.vocab[f]) + FIRST_ID for f in self.fields}
        return naive_template_keys(self.kinds[kind], values, radix, rare, corpus.sentence_offsets)

    def fit_transform(self, corpus):
        self.vocab = {f: list(dict.fromkeys(self._column(corpus, f))) for f in self.fields}
        self.word_count = {}
        for w in corpus.columns["word"]:
            self.word_count[w] = self.word_count.get(w, 0) + 1
        self.index = {}
        for kind in self.kinds:
            counts = {}
            for row in self._rows(corpus, kind):
                for key in row:
                    if key >= 0:
                        counts[key] = counts.get(key, 0) + 1
            kept = [key for key, c in counts.items() if c >= max(self.min_count, 1)]
            self.index[kind] = {key: i for i, key in enumerate(kept)}
        return self.transform(corpus)

    def transform(self, corpus):
        out = {}
        for kind in self.kinds:
            rows = [[self.index[kind][k] for k in row if k in self.index[kind]] for row in self._rows(corpus, kind)]
            out[kind] = (np.cumsum([0] + [len(r) for r in rows]), [i for r in rows for i in r])
        return out


def assert_same_encoding(encoded, naive):
    for kind, (offsets, ids) in naive.items():
        assert getattr(encoded, f"{kind}_offsets").tolist() == offsets.tolist()
        assert getattr(encoded, f"{kind}_ids").tolist() == ids


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), min_count=st.sampled_from([0, 1, 2, 3]), rare=st.sampled_from([1, 2, 5]),
       threads=st.sampled_from([1, 2, 3]))
def test_encoder_matches_naive_encoder(seed, min_count, rare, threads):
    """Whatever the number of threads interning the templates (--workers N encodes with N)."""
    rng = np.random.default_rng(seed)
    train, test = random_corpus(rng, 15), random_corpus(rng, 6, words=WORDS + ["new", "Unseen"], n_tags=4)
    enc = FeatureEncoder(TEMPLATES, min_count=min_count, rare_threshold=rare)
    naive = NaiveEncoder(TEMPLATES, min_count=min_count, rare_threshold=rare)
    encoded = enc.fit_transform(train, train.columns["label"], threads=threads)
    assert_same_encoding(encoded, naive.fit_transform(train))
    # the ids own a buffer of their own size (the interning buffer, shrunk in place)
    assert encoded.feature_ids.flags.owndata and encoded.feature_ids.base is None
    assert_same_encoding(enc.transform(test), naive.transform(test))
    keys = sorted(naive.index["feature"], key=naive.index["feature"].get)
    assert enc.feature_keys_.tolist() == keys


@pytest.mark.parametrize("direct", [False, True])
def test_direct_and_hashed_template_tables_agree(monkeypatch, direct):
    """Each template is indexed by a direct array or a hash table by the size of its value range;
    forcing every template to one kind gives the same encoding."""
    rng = np.random.default_rng(5)
    train, test = random_corpus(rng, 40), random_corpus(rng, 10)
    reference = FeatureEncoder(TEMPLATES, min_count=2)
    expected = reference.fit_transform(train, train.columns["label"]), reference.transform(test)
    for module in (encode_module, lookup_module):  # where templates are interned, and where their tables are built
        monkeypatch.setattr(module, "use_direct", lambda space, n_items: direct)
    enc = FeatureEncoder(TEMPLATES, min_count=2)
    got = enc.fit_transform(train, train.columns["label"]), enc.transform(test)
    for a, b in zip(expected, got):
        for name in ("feature_offsets", "feature_ids", "pair_offsets", "pair_ids", "labels", "word_ids"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


@pytest.mark.parametrize("share", [0, 10**9])
def test_attributes_from_the_vocabulary_table_or_computed_agree(monkeypatch, share):
    """Known words may read their attributes from a table over the vocabulary (when a corpus has
    many distinct words) or compute them; unseen words always compute them. Both give the naive
    encoding."""
    monkeypatch.setattr(vocabulary_module, "_ATTRIBUTE_TABLE_SHARE", share)
    rng = np.random.default_rng(7)
    train, test = random_corpus(rng, 30), random_corpus(rng, 30, words=WORDS + ["new-1", "Unseen", "x9"])
    enc, naive = FeatureEncoder(TEMPLATES, rare_threshold=3), NaiveEncoder(TEMPLATES, rare_threshold=3)
    enc.fit_transform(train, train.columns["label"])
    naive.fit_transform(train)
    assert_same_encoding(enc.transform(test), naive.transform(test))
    assert ("_attribute_cache" in enc.__dict__) == (share == 10**9)


@pytest.mark.parametrize("kept", [2, 1 << 16])
def test_unseen_words_kept_between_transforms_encode_as_computed(monkeypatch, kept):
    """A prepared encoder reads known words' attributes from its table and keeps the rows of unseen
    words for later transforms (at most ``kept``, then let go): every transform, the first and those
    that find the kept rows, gives the naive encoding."""
    monkeypatch.setattr(vocabulary_module, "_UNSEEN_KEPT", kept)
    rng = np.random.default_rng(11)
    train = random_corpus(rng, 30)
    enc, naive = FeatureEncoder(TEMPLATES, rare_threshold=3), NaiveEncoder(TEMPLATES, rare_threshold=3)
    enc.fit_transform(train, train.columns["label"])
    naive.fit_transform(train)
    enc.prepare()
    for _ in range(3):
        test = random_corpus(rng, 4, words=WORDS + ["new-1", "Unseen", "x9", "Zz-2", "q"])
        assert_same_encoding(enc.transform(test), naive.transform(test))
    unseen = [rows for key, rows in enc.__dict__["_attribute_cache"].items() if key[0] == "unseen"]
    assert len(unseen) == 1 and 0 < len(unseen[0]) <= max(kept, 5)


def test_bias_only_templates_fire_at_every_token():
    corpus = as_corpus([["a", "b", "c"], ["d"]], [["X", "Y", "X"], ["Y"]])
    encoded = FeatureEncoder(["bias"]).fit_transform(corpus, corpus.columns["label"])
    assert encoded.feature_offsets.tolist() == [0, 1, 2, 3, 4]
    assert encoded.feature_ids.tolist() == [0, 0, 0, 0]


# ---------------------------------------------------------------------------- hash table
def colliding_keys(base, count, rng):
    """Non-negative int64 keys whose Fibonacci hash differs from base's only in its lowest bits, so
    that they share base's home slot in any table of up to 2**40 slots."""
    inverse = pow(int(GOLDEN), -1, 2**64)
    out = []
    for t in rng.permutation(1 << 20)[: 4 * count]:
        key = (base + int(t) * inverse) % 2**64
        if key < 2**63 and key != base:
            out.append(key)
        if len(out) == count:
            break
    return out


def home_slot(key, bits):
    return (key * int(GOLDEN)) % 2**64 >> (64 - bits)


def test_colliding_keys_share_a_home_slot():
    rng = np.random.default_rng(0)
    keys = colliding_keys(12345, 50, rng)
    assert len(set(keys)) == 50
    for bits in (4, 12, 20):
        assert {home_slot(k, bits) for k in keys} == {home_slot(12345, bits)}


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_collide=st.sampled_from([0, 10, 300]), pool=st.sampled_from([50, 30_000]))
def test_table_matches_a_dict(seed, n_collide, pool):
    """intern, table_with_ids and lookup against a plain dict, on 10**5 random int64 queries drawn with
    repeats from a pool of keys that includes a cluster sharing one home slot."""
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 2**63 - 1, size=pool, dtype=np.int64).tolist()
    keys += colliding_keys(keys[0], n_collide, rng)
    queries = np.array(keys, dtype=np.int64)[rng.integers(0, len(keys), size=100_000)]
    queries[rng.random(queries.shape[0]) < 0.05] = -1  # "no key"
    ids, distinct, counts = hashing.intern(queries)
    first_seen = {}
    for q in queries.tolist():
        if q >= 0:
            first_seen.setdefault(q, len(first_seen))
    assert distinct.tolist() == list(first_seen)
    assert ids.tolist() == [first_seen[q] if q >= 0 else -1 for q in queries.tolist()]
    occurrences = Counter(q for q in queries.tolist() if q >= 0)
    assert counts.tolist() == [occurrences[k] for k in first_seen]

    table = hashing.table_with_ids(distinct, np.arange(distinct.shape[0], dtype=np.int64))
    absent = rng.integers(0, 2**63 - 1, size=1000, dtype=np.int64)
    probe = np.concatenate([queries, absent, np.array(colliding_keys(keys[0], 20, rng), dtype=np.int64)])
    expected = [first_seen.get(q, -1) if q >= 0 else -1 for q in probe.tolist()]
    assert hashing.lookup(*table, probe).tolist() == expected


@settings(max_examples=10, deadline=None)
@given(n=st.integers(0, 5000))
def test_tables_stay_at_most_half_full(n):
    """Linear probing ends only at an empty slot: every table keeps more than half its slots free,
    however many keys collide."""
    rng = np.random.default_rng(n)
    keys = np.array(colliding_keys(7, n, rng) if n <= 2000 else rng.permutation(10 * n)[:n], dtype=np.int64)
    slot_keys, _ = hashing.table_with_ids(keys, np.arange(keys.shape[0], dtype=np.int64))
    assert 2 * len(keys) < slot_keys.shape[0]
    assert int((slot_keys >= 0).sum()) == len(keys)


def test_template_keys_past_the_int64_range_are_refused():
    """A template whose combined values could overflow the 62-bit key space is an error, not a
    silent wrap-around."""
    words = [f"w{i}" for i in range(1000)]
    corpus = as_corpus([words], [["X"] * len(words)])
    wide = "|".join(f"w[{o}]" for o in range(-3, 4))  # 1003 ** 7 > 2 ** 62
    with pytest.raises(ConfigError, match="too many distinct values"):
        FeatureEncoder([wide]).fit_transform(corpus, corpus.columns["label"])
    narrow = "|".join(f"w[{o}]" for o in range(-2, 4))  # 1003 ** 6 < 2 ** 62 / 1
    FeatureEncoder([narrow]).fit_transform(corpus, corpus.columns["label"])


# ---------------------------------------------------------------------------- feature hashing
def naive_mix64(key):
    x = key % 2**64
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) % 2**64
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) % 2**64
    x ^= x >> 33
    return x


def test_hashed_ids_are_the_mixed_template_keys():
    rng = np.random.default_rng(1)
    train, test = random_corpus(rng, 20), random_corpus(rng, 5, words=WORDS + ["zz"])
    bits = 9
    exact = FeatureEncoder(TEMPLATES)
    exact.fit_transform(train, train.columns["label"])
    hashed = FeatureEncoder(TEMPLATES, hash_bits=bits)
    hashed.fit_transform(train, train.columns["label"])
    encoded = hashed.transform(test)
    values, rare = exact._field_values(test, fit=False)
    for kind, templates in (("feature", exact._emission_templates), ("pair", exact._pair_templates)):
        rows = exact._keys(templates, values, rare, test.sentence_offsets)
        expected = [[naive_mix64(int(k)) % 2**bits for k in row if k >= 0] for row in rows.tolist()]
        offsets, ids = getattr(encoded, f"{kind}_offsets"), getattr(encoded, f"{kind}_ids")
        assert [ids[a:b].tolist() for a, b in pairwise(offsets)] == expected
    assert all(bucket_of(k, bits) == naive_mix64(k) % 2**bits for k in (0, 1, 2**40 + 3, 2**62 - 1))


@pytest.mark.parametrize("bits", [4, 6, 12])
def test_collision_rate_against_a_naive_count(bits):
    rng = np.random.default_rng(bits)
    train = random_corpus(rng, 30)
    hashed = FeatureEncoder(TEMPLATES, hash_bits=bits)
    hashed.fit_transform(train, train.columns["label"])
    exact = NaiveEncoder(TEMPLATES)
    exact.fit_transform(train)
    keys = [k for kind in ("feature", "pair") for k in exact.index[kind]]
    n_ids = sum(len({naive_mix64(k) % 2**bits for k in exact.index[kind]}) for kind in ("feature", "pair"))
    stats = hashed.hash_stats_
    assert (stats["keys"], stats["ids"]) == (len(keys), n_ids)
    assert stats["collision_rate"] == pytest.approx(1 - n_ids / len(keys))
    if bits == 4:  # hundreds of keys in 16 ids
        assert stats["collision_rate"] > 0.5


def trained(encoder, corpus, epochs=3):
    encoded = encoder.fit_transform(corpus, corpus.columns["label"])
    model = LinearChainModel(encoder)
    train_online(make_rule("perceptron", average=True), Problem(model, model.data(encoded)), epochs, seed=3)
    return model, encoded


def test_hashing_without_collisions_trains_the_model_of_the_exact_ids(tmp_path):
    """With no collision, a hashed model is the exact model with its feature rows moved to the
    hashed ids: same weights, same predictions, before and after pruning and a save/load."""
    rng = np.random.default_rng(1)
    train, test = random_corpus(rng, 40), random_corpus(rng, 10)
    templates = [t for t in TEMPLATES if not t.startswith("pair:")]
    bits = 22  # 181 keys, none sharing an id (checked below)
    exact_model, _ = trained(FeatureEncoder(templates), train)
    hashed_encoder = FeatureEncoder(templates, hash_bits=bits)
    hashed_model, _ = trained(hashed_encoder, train)
    assert hashed_encoder.hash_stats_["collision_rate"] == 0
    bucket = np.array([naive_mix64(int(k)) % 2**bits for k in exact_model.encoder.feature_keys_])
    np.testing.assert_array_equal(hashed_model.emission_weights()[bucket], exact_model.emission_weights())
    np.testing.assert_array_equal(hashed_model.transition_weights(), exact_model.transition_weights())
    expected = exact_model.decode(exact_model.encoder.transform(test))
    for model in (hashed_model, hashed_model.prune()):
        labels, scores = model.decode(model.encoder.transform(test))
        np.testing.assert_array_equal(labels, expected[0])
        np.testing.assert_array_equal(scores, expected[1])
    assert hashed_model.encoder.n_features_ < 2**bits
    loaded = LinearChainModel.load(hashed_model.save(tmp_path / "hashed.npz"))
    assert loaded.encoder.hash_bits == bits
    assert loaded.encoder.hash_stats_ == hashed_encoder.hash_stats_
    labels, scores = loaded.decode(loaded.encoder.transform(test))
    np.testing.assert_array_equal(labels, expected[0])


@pytest.mark.parametrize("bits", [8, 16])
def test_hashing_min_count_counts_each_id(bits):
    """min_count applies to an id's total count: at 8 bits "b" (seen twice) and "c" (once) share an
    id, which is kept with both; at 16 bits "c" has its own id, which is dropped."""
    corpus = as_corpus([["a", "b"], ["a", "c"], ["a", "b"]], [["X", "Y"]] * 3)
    encoder = FeatureEncoder(["w[0]"], hash_bits=bits, min_count=2)
    encoded = encoder.fit_transform(corpus, corpus.columns["label"])
    exact = FeatureEncoder(["w[0]"])
    exact.fit_transform(corpus, corpus.columns["label"])
    bucket = {exact.describe_feature(i).split("=")[1]: naive_mix64(int(k)) % 2**bits
              for i, k in enumerate(exact.feature_keys_)}
    shared = bucket["b"] == bucket["c"]
    assert shared == (bits == 8)
    expected = ["a", "b", "a"] + (["c"] if shared else []) + ["a", "b"]
    assert encoded.feature_ids.tolist() == [bucket[w] for w in expected]


@pytest.mark.parametrize("bits", [0, 41, 2.5, "8"])
def test_hash_bits_out_of_range_is_an_error(bits):
    corpus = as_corpus([["a"]], [["X"]])
    with pytest.raises(ConfigError, match="hash_bits"):
        FeatureEncoder(["w[0]"], hash_bits=bits).fit_transform(corpus, corpus.columns["label"])


@pytest.mark.parametrize("templates", ["chunk", "pos", ["w[0]", "pos[0]|w[1]", "pair:pos[0]"]])
def test_releasing_the_corpus_gives_the_same_encoding_and_empties_it(templates):
    """fit_file hands its corpus over (release=True): the string columns go before the feature ids
    are built, the encoding is the one of a caller-held corpus, and the caller's labels are not needed."""
    rng = np.random.default_rng(3)
    kept, released = random_corpus(rng, 40), random_corpus(np.random.default_rng(3), 40)
    expected = FeatureEncoder(templates).fit_transform(kept, kept.columns[kept.label])
    encoder = FeatureEncoder(templates)
    encoded = encoder.fit_transform(released, release=True)
    assert released.columns == {} and len(released.line_numbers) == 0
    assert kept.columns  # the default leaves the caller's corpus alone
    for name in ("sentence_offsets", "feature_offsets", "feature_ids", "pair_offsets", "pair_ids", "labels"):
        np.testing.assert_array_equal(getattr(encoded, name), getattr(expected, name), err_msg=name)
    np.testing.assert_array_equal(np.asarray(encoded.word_ids, dtype=np.int64), expected.word_ids)
