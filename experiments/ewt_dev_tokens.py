"""The raw-text tokenizer and sentence splitter on UD English EWT dev, scored as the CoNLL 2018 shared
task scores them, with the most frequent word-level errors.

    python experiments/ewt_dev_tokens.py [--mirror ../shared/corpora] [--file en_ewt-ud-dev.conllu] [--top 40]
                                         [--examples REGEX]

The raw text is built as ``benchmarks/bench_rawtext.py`` builds it (each paragraph one line, its
sentences' ``# text`` joined by a space) and split by ``estimator.text.text_corpus``; a word written
against the word before it that ``tokenize.joins_previous`` accepts makes one multiword token with it.
No tagger runs: tokens, words and sentences F1 need only the segmentation.

An error is a stretch of words that the shared task's alignment leaves unaligned on either side (the
overlapping unaligned words of both, merged); it is printed as ``gold words => system words`` and
grouped by kind (the system splits what gold keeps in one word, merges what gold splits, or both) and
by shape (letter runs a/A/Aa, digit runs 9: ``9 a => 9a`` is a unit written against its number).
``--examples`` prints the errors whose gold words match a pattern, in context. The rules are tuned on
the development (or training) file, never on the test file.
"""
import argparse
import os
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from structperc.estimator.text import text_corpus  # noqa: E402
from structperc.evaluate.conll18 import align_words, evaluate, read_conllu_segmented, segment  # noqa: E402
from structperc.readers.tokenize import joins_previous  # noqa: E402


def raw_text(paragraphs):
    return "".join(" ".join(sentences) + "\n" for sentences in paragraphs)


def system_segmentation(text):
    """The Segmented system output of the raw text, untagged (bench_rawtext's, without the taggers)."""
    corpus = text_corpus(text)
    words = corpus.columns["word"]
    starts = [int(v) for v in corpus.columns["start"]]
    ends = [int(v) for v in corpus.columns["end"]]
    offsets = corpus.sentence_offsets.tolist()
    sentences = []
    for a, b in zip(offsets[:-1], offsets[1:]):
        tokens = []
        for i in range(a, b):
            if i > a and starts[i] == ends[i - 1] and joins_previous(words[i], words[i - 1]):
                form, parts = tokens[-1]
                tokens[-1] = (form + words[i], parts + [(words[i],)])
            else:
                tokens.append((words[i], [(words[i],)]))
        sentences.append(tokens)
    return segment(sentences)


def error_stretches(gold, system):
    """(gold forms, system forms) of each stretch of unaligned words, overlapping words merged."""
    aligned = align_words(gold.words, system.words)
    gold_ok = {id(g) for g, _ in aligned}
    system_ok = {id(s) for _, s in aligned}
    items = sorted([(w.start, 0, i, w.end, w.form) for i, w in enumerate(gold.words) if id(w) not in gold_ok]
                   + [(w.start, 1, i, w.end, w.form) for i, w in enumerate(system.words) if id(w) not in system_ok])
    stretches = []
    for start, side, _, end, form in items:
        if stretches and start < stretches[-1][1]:
            stretches[-1][1] = max(stretches[-1][1], end)
        else:
            stretches.append([start, end, [], []])
        stretches[-1][2 + side].append(form)
    return [(tuple(g), tuple(s), start, end) for start, end, g, s in stretches]


def kind(gold_forms, system_forms):
    if not system_forms:
        return "gold words only (system words aligned elsewhere)"
    if not gold_forms:
        return "system words only"
    if len(system_forms) > len(gold_forms):
        return "system splits"
    if len(system_forms) < len(gold_forms):
        return "system merges"
    return "same count, other boundaries or forms"


def shape(forms):
    """A coarse pattern of a word sequence: letter runs a/A, digit runs 9, other characters kept."""
    text = " ".join(forms)
    text = re.sub(r"[A-Z][a-z]+", "Aa", text)
    text = re.sub(r"[a-z]+", "a", text)
    text = re.sub(r"[A-Z]+", "A", text)
    return re.sub(r"\d+", "9", text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", default=os.environ.get("STRUCTPERC_MIRROR")
                        or str(ROOT.parent / "shared" / "corpora"))
    parser.add_argument("--file", default="en_ewt-ud-dev.conllu")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--examples", metavar="REGEX",
                        help="print every error whose gold words match REGEX (re.search), in context")
    args = parser.parse_args()
    gold, paragraphs = read_conllu_segmented(Path(args.mirror) / "ud_english_ewt" / args.file)
    system = system_segmentation(raw_text(paragraphs))
    scores = evaluate(gold, system)
    for name in ("tokens", "words", "sentences"):
        s = scores[name]
        print(f"{name:9s} F1 {100 * s.f1:6.2f}  (gold {s.gold}, system {s.system}, correct {s.correct})")
    stretches = error_stretches(gold, system)
    errors = [(g, s) for g, s, _, _ in stretches]
    by_kind = Counter(kind(g, s) for g, s in errors)
    print(f"\n{len(errors)} error stretches, by kind:")
    for name, count in by_kind.most_common():
        print(f"  {count:5d}  {name}")
    print("\nby shape (gold => system):")
    for (g, s), count in Counter((shape(g), shape(s)) for g, s in errors).most_common(args.top):
        print(f"  {count:5d}  {g}  =>  {s}")
    print("\nmost frequent errors (gold => system):")
    for (g, s), count in Counter(errors).most_common(args.top):
        print(f"  {count:5d}  [{kind(g, s)}]  {' '.join(g)}  =>  {' '.join(s)}")

    if args.examples:
        print(f"\nerrors whose gold words match {args.examples!r} (context: the text without spaces):")
        for g, s, start, end in stretches:
            if re.search(args.examples, " ".join(g)):
                chars = gold.characters
                print(f"  {' '.join(g)}  =>  {' '.join(s)}    ...{chars[start - 25:start]}[{chars[start:end]}]"
                      f"{chars[end:end + 25]}...")


if __name__ == "__main__":
    main()
