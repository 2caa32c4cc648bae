"""Tokenisers and sentence splitters for English raw text, on UD English EWT's development set, scored
as the CoNLL 2018 shared task scored them (``structperc.evaluate.conll18``): how structperc's rules
(``readers/tokenize.py``, ``readers/sentences.py``) were chosen against well-kept libraries.

    python benchmarks/bench_tokenizers.py [--mirror ../shared/corpora]

Rows: structperc's rules; the rules structperc had before (``PREVIOUS`` below, one sentence a line);
SoMaJo (``en_PTB``, its sentence splitter on) and syntok, when installed (``pip install somajo
syntok``; neither is a dependency). Tokens and words: each sentence's ``# text`` on its own, so that
sentence splitting does not count; a library's words are its tokens (neither makes multiword
tokens). Sentences: each paragraph one line, its sentences joined by a space. Writes
benchmarks/tokenizers.md, which docs/models.md quotes between figures markers.
"""
import argparse
import os
import re
import sys
import time
from pathlib import Path

from sections import refresh_figures  # benchmarks/sections.py

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# structperc's rules before named models (one sentence a line, no multiword tokens)
_CLITIC = r"['’](?i:s|re|ll|ve|d|m)(?!\w)"
PREVIOUS = re.compile(
    r"(?:https?://|www\.)\S+[^\s.,;:!?)\]}'\"]|[\w.+-]+@\w+(?:\.\w+)+|(?:[A-Za-z]\.){2,}"
    r"|(?<!\w)(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|etc|Inc|Corp|Co|Ltd|Mt|Jan|Feb|Aug|Sept|Oct|Nov|Dec)\."
    r"|\d+(?:[.,:/]\d+)+|\w+(?=(?i:n['’]t)(?!\w))|(?i:n['’]t)(?!\w)|(?i:can)(?=(?i:not)(?!\w))"
    r"|(?i:gon|wan)(?=(?i:na)(?!\w))|(?i:got)(?=(?i:ta)(?!\w))|" + _CLITIC +
    r"|\w+(?:-\w+|['’](?!(?i:s|re|ll|ve|d|m)(?!\w))\w+)*|\.{2,}|-{2,}|``|''|\S")


def plain(words):
    return [(w, [(w, "_", "_")]) for w in words]


def structperc_tokens(text):
    from structperc.readers.tokenize import word_spans

    tokens = []
    for span in word_spans(text):
        word = text[span.start:span.end]
        if span.joined and tokens:
            form, parts = tokens[-1]
            tokens[-1] = (form + word, parts + [(word, "_", "_")])
        else:
            tokens.append((word, [(word, "_", "_")]))
    return tokens


def structperc_sentences(paragraph):
    from structperc.readers.sentences import sentence_ends
    from structperc.readers.tokenize import word_spans

    spans = word_spans(paragraph)
    ends = sentence_ends(paragraph, spans)
    return [structperc_tokens(paragraph[spans[a].start:spans[b - 1].end]) for a, b in zip([0] + ends, ends)]


def systems():
    """name -> (tokens of one sentence's text, sentences of a paragraph or None), those installed."""
    found = {"structperc (this version)": (structperc_tokens, structperc_sentences),
             "structperc (previous rules, one sentence a line)": (lambda t: plain(PREVIOUS.findall(t)),
                                                                  lambda p: [plain(PREVIOUS.findall(p))])}
    try:
        from somajo import SoMaJo

        somajo_tokens = SoMaJo("en_PTB", split_sentences=False)
        somajo_sentences = SoMaJo("en_PTB", split_sentences=True)
        found["SoMaJo (en_PTB)"] = (
            lambda t: plain([tok.text for s in somajo_tokens.tokenize_text([t]) for tok in s]),
            lambda p: [plain([tok.text for tok in s]) for s in somajo_sentences.tokenize_text([p])])
    except ImportError:
        found["SoMaJo (en_PTB)"] = None
    try:
        from syntok.segmenter import analyze
        from syntok.tokenizer import Tokenizer

        tokenizer = Tokenizer()
        found["syntok"] = (lambda t: plain([tok.value for tok in tokenizer.tokenize(t)]),
                           lambda p: [plain([tok.value for tok in s]) for para in analyze(p) for s in para])
    except ImportError:
        found["syntok"] = None
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", default=os.environ.get("STRUCTPERC_MIRROR")
                        or str(ROOT.parent / "shared" / "corpora"))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "tokenizers.md"))
    args = parser.parse_args()
    from structperc.errors import DataError
    from structperc.evaluate.conll18 import evaluate, read_conllu_segmented, segment

    gold, paragraphs = read_conllu_segmented(Path(args.mirror) / "ud_english_ewt" / "en_ewt-ud-dev.conllu")
    lines = ["| UD English EWT dev | tokens F1 | words F1 | sentences F1 | seconds |", "|---|---:|---:|---:|---:|"]
    for name, functions in systems().items():
        if functions is None:
            lines.append(f"| {name} | not installed | | | |")
            continue
        tokenize, split = functions
        start = time.perf_counter()
        try:
            words = evaluate(gold, segment([tokenize(t) for p in paragraphs for t in p]))
            sentences = evaluate(gold, segment([s for p in paragraphs for s in split(" ".join(p))]))
        except DataError as error:
            lines.append(f"| {name} | fails: its tokens lose or change characters of the text ({error}) | | | |")
            continue
        seconds = time.perf_counter() - start
        lines.append(f"| {name} | {100 * words['tokens'].f1:.2f} | {100 * words['words'].f1:.2f} | "
                     f"{100 * sentences['sentences'].f1:.2f} | {seconds:.1f} |")
    text = "\n".join(lines) + "\n\n" + (
        "Tokens and words from each sentence's text alone; sentences from each paragraph as one line. Seconds: "
        "both passes over the development set.\n")
    Path(args.out).write_text(text, encoding="utf-8")
    refresh_figures(ROOT)
    print(text)


if __name__ == "__main__":
    main()
