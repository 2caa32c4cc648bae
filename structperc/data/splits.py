"""Standard train/dev/test splits of the corpora that ``structperc data fetch`` gets.

- ``load_np``: CoNLL-2000 NP chunking (every non-NP chunk mapped to O), dev = the last sentences of
  train.txt;
- ``load_ewt``: UD English EWT, PTB-style tags (xpos), its own train/dev/test files;
- ``load_wsj_sample``: the NLTK 10% sample of the WSJ, split by file number;
- ``load_ptb``: a full Penn Treebank WSJ, split by section as Collins (2002) did (0-18/19-21/22-24).

``load_dataset(name, ...)`` picks one of them by name (``DATASETS``).
"""
import re
from dataclasses import dataclass
from pathlib import Path

from structperc.corpus import Corpus
from structperc.readers import read_corpus, read_ptb_files
from structperc.errors import ConfigError

NP_DEV_SENTENCES = 1000  # the last 1,000 sentences of CoNLL-2000 train.txt are the NP dev set
WSJ_SAMPLE_SPLIT = {"train": (1, 159), "dev": (160, 179), "test": (180, 199)}  # wsj_NNNN file numbers
PTB_SPLIT = {"train": (0, 18), "dev": (19, 21), "test": (22, 24)}  # sections, inclusive


@dataclass
class DatasetSplit:
    """Train/dev/test corpora of one dataset, with the task ("np" or "pos") and how they were cut."""

    name: str
    task: str
    title: str
    description: str
    train: Corpus
    dev: Corpus
    test: Corpus


_WSJ_FILE = re.compile(r"^wsj_(\d\d)(\d\d)\.pos$", re.IGNORECASE)


def ptb_files_by_section(root):
    """Tagged WSJ files under ``root`` grouped by section: {section (int): [paths, sorted by name]}.

    The section is read from the file name wsj_SSNN.pos, so both a flat directory and one with
    SS/ subfolders (at any depth) work. Other files are ignored.
    """
    root = Path(root)
    if not root.is_dir():
        raise ConfigError(f"ptb_root {str(root)!r} is not a directory")
    sections = {}
    for path in root.rglob("*"):
        match = _WSJ_FILE.match(path.name)
        if match and path.is_file():
            sections.setdefault(int(match.group(1)), []).append(path)
    return {s: sorted(paths, key=lambda p: p.name.lower()) for s, paths in sorted(sections.items())}


def ptb_split_files(root, split_sections=PTB_SPLIT):
    """{"train": [...], "dev": [...], "test": [...]} files of the sections 0-18 / 19-21 / 22-24."""
    sections = ptb_files_by_section(root)
    out = {}
    for part, (lo, hi) in split_sections.items():
        out[part] = [p for s in range(lo, hi + 1) for p in sections.get(s, [])]
        if not out[part]:
            raise ConfigError(
                f"ptb_root {str(root)!r}: no wsj_SSNN.pos files of sections {lo:02d}-{hi:02d} ({part}); "
                f"found sections {sorted(sections) or 'none'}")
    return out


def split_by_file_number(paths, ranges):
    """Files wsj_NNNN.pos into parts by the number NNNN: ranges {part: (first, last)} inclusive."""
    out = {part: [] for part in ranges}
    for path in sorted(paths, key=lambda p: Path(p).name.lower()):
        match = _WSJ_FILE.match(Path(path).name)
        if not match:
            continue
        number = int(match.group(1) + match.group(2))
        for part, (lo, hi) in ranges.items():
            if lo <= number <= hi:
                out[part].append(Path(path))
    return out


def _need(path, corpus_name):
    if not Path(path).is_file():
        raise ConfigError(f"{path}: not found; fetch it with `structperc data fetch {corpus_name}`")
    return path


def load_np(corpora_dir, train_sentences=None, dev_sentences=NP_DEV_SENTENCES):
    """CoNLL-2000 NP chunking: train.txt minus its last ``dev_sentences`` sentences (optionally
    only the first ``train_sentences`` of them), those last sentences as dev, test.txt as test."""
    root = Path(corpora_dir) / "conll2000"
    read = dict(columns=["word", "pos", "chunk"], only_types=["NP"])
    full = read_corpus(_need(root / "train.txt", "conll2000"), **read)
    test = read_corpus(_need(root / "test.txt", "conll2000"), **read)
    n = full.n_sentences
    if n <= dev_sentences:  # the dev slice would take every sentence, or more than there are
        raise ConfigError(f"{root / 'train.txt'}: {n:,} sentences, too few to split: the last {dev_sentences:,} "
                          f"are the dev set and at least one must be left to train on")
    cut = n - dev_sentences
    train = full.subset(range(cut if train_sentences is None else min(train_sentences, cut)))
    dev = full.subset(range(cut, n))
    first = "" if train_sentences is None else f", of which the first {train.n_sentences:,}"
    description = (
        f"CoNLL-2000 with every non-NP chunk mapped to O. train: sentences 1-{cut:,} of train.txt "
        f"(WSJ 15-18){first}; dev: the last {dev_sentences:,} sentences of train.txt ({cut + 1:,}-{n:,}; "
        "Collins' dev set, WSJ 21, is not part of CoNLL-2000; this dev slice comes from the same sections "
        "as the training sentences); test: test.txt (WSJ 20).")
    return DatasetSplit("np", "np", "NP chunking, CoNLL-2000", description, train, dev, test)


def load_ewt(corpora_dir):
    """UD English EWT with its xpos (PTB-style) tags as labels."""
    root = Path(corpora_dir) / "ud_english_ewt"
    parts = {p: read_corpus(_need(root / f"en_ewt-ud-{p}.conllu", "ud_english_ewt"), label="xpos")
             for p in ("train", "dev", "test")}
    description = ("UD English EWT, PTB-style tags (xpos), its own train/dev/test files. Web text "
                   "(blogs, reviews, e-mail), not the WSJ: error rates are not comparable to Collins'.")
    return DatasetSplit("ewt", "pos", "POS tagging, UD English EWT (xpos)", description, **parts)


def load_wsj_sample(corpora_dir, split_files=WSJ_SAMPLE_SPLIT):
    """The NLTK WSJ sample, split by file number (``split_files``: {part: (first, last)})."""
    root = Path(corpora_dir) / "wsj_sample" / "tagged"
    if not root.is_dir():
        raise ConfigError(f"{root}: not found; fetch it with `structperc data fetch wsj_sample`")
    files = split_by_file_number(root.glob("*.pos"), split_files)
    for part, paths in files.items():
        if not paths:
            raise ConfigError(f"{root}: no files for the {part} part {split_files[part]}")
    parts = {p: read_ptb_files(paths) for p, paths in files.items()}
    ranges = "; ".join(f"{p}: wsj_{lo:04d}-wsj_{hi:04d} ({len(files[p])} files)"
                       for p, (lo, hi) in split_files.items())
    description = f"The NLTK 10% sample of the Penn Treebank WSJ (section 00-01), split by file: {ranges}."
    return DatasetSplit("wsj", "pos", "POS tagging, WSJ sample", description, **parts)


def load_ptb(ptb_root):
    """A full Penn Treebank WSJ (wsj_SSNN.pos files under ``ptb_root``), sections 0-18/19-21/22-24."""
    files = ptb_split_files(ptb_root)
    parts = {p: read_ptb_files(paths) for p, paths in files.items()}
    counts = ", ".join(f"{p} {len(v)} files" for p, v in files.items())
    description = (f"Penn Treebank WSJ tagged files under {ptb_root}: sections 00-18 train, 19-21 dev, "
                   f"22-24 test ({counts}), Collins' split.")
    return DatasetSplit("ptb", "pos", "POS tagging, Penn Treebank WSJ", description, **parts)


DATASETS = ("np", "ewt", "wsj", "ptb")


def load_dataset(name, corpora_dir, ptb_root=None, train_sentences=None):
    """The split called ``name`` (one of ``DATASETS``). ``ptb`` reads ``ptb_root``, the others
    ``corpora_dir``; ``train_sentences`` shortens the NP training part."""
    if name == "np":
        return load_np(corpora_dir, train_sentences)
    if name == "ewt":
        return load_ewt(corpora_dir)
    if name == "wsj":
        return load_wsj_sample(corpora_dir)
    if name == "ptb":
        if ptb_root is None:
            raise ConfigError("dataset 'ptb' needs ptb_root (a Penn Treebank tagged directory)")
        return load_ptb(ptb_root)
    raise ConfigError(f"unknown dataset {name!r}: choose from {', '.join(DATASETS)}")
