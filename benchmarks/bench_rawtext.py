"""The named models on raw text: UD English EWT's test set from its ``# text`` lines, scored as the
CoNLL 2018 shared task scored systems (``structperc.evaluate.conll18``), beside UDPipe 1.2's published
figures; and every named model's build.

    python benchmarks/bench_rawtext.py [--mirror ../shared/corpora]

The raw text is the test file's sentences, each paragraph (``# newpar``, ``# newdoc``) one line, its
sentences joined by a space. ``load_model("en-ewt-upos")`` and ``load_model("en-ewt-xpos")`` split it
into sentences and words and tag it; a word written against the word before it as a clitic (do|n't)
makes one multiword token with it, as in UD. Scores: tokens, sentences and words F1; UPOS and XPOS F1
over the aligned words. With gold tokens: the models' test accuracy, measured when they were built.

Every named model is built in a fresh cache (``XDG_CACHE_HOME`` a temporary folder) by a process of
its own, which times ``load_model(NAME)`` built on first use; a second process times it loading the
built model. Writes benchmarks/rawtext.md and benchmarks/models.md, which docs/models.md quotes
between figures markers.
"""
import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

from process import run_process  # benchmarks/process.py (the script's folder is on sys.path)
from sections import refresh_figures  # benchmarks/sections.py

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
# UDPipe 1.2 with its UD 2.5 models, en_ewt, from the table of that release's README (raw text;
# gold tokenization)
UDPIPE = {"tokens": None, "words": 98.9, "sentences": 77.4, "upos": 93.3, "xpos": 92.8,
          "gold upos": 94.4, "gold xpos": 93.9}
TARGETS = {"words": 99.0, "sentences": 80.0, "upos": 94.0, "xpos": 93.5}
# first use: load_model(NAME) builds the model; then, in a new process, the commands' loader (no
# scikit-learn) and load_model, whose Tagger imports scikit-learn
FIRST = """
import json, sys, time
start = time.perf_counter()
import structperc
structperc.load_model(sys.argv[1])
print(json.dumps({"load_model": time.perf_counter() - start}))
"""
AGAIN = """
import json, sys, time
start = time.perf_counter()
import structperc
from structperc.models import load_named
import structperc.estimator.core
imported = time.perf_counter()
load_named(sys.argv[1])
read = time.perf_counter()
import sklearn.base
sklearn_imported = time.perf_counter()
structperc.load_model(sys.argv[1])
print(json.dumps({"imports": imported - start, "read": read - imported, "sklearn": sklearn_imported - read,
                  "load_model": time.perf_counter() - sklearn_imported}))
"""


def load_seconds(name, env):
    """(load_model(name) built on first use, its process's wall seconds, then in a new process: the
    model read by the commands' loader, load_model once scikit-learn is imported, the imports of
    structperc and of scikit-learn, that process's wall seconds)."""
    first = run_process([PYTHON, "-c", FIRST, name], env=env)
    again = run_process([PYTHON, "-c", AGAIN, name], env=env)
    built = json.loads(first.stdout.strip().splitlines()[-1])
    loaded = json.loads(again.stdout.strip().splitlines()[-1])
    return (built["load_model"], first.seconds, loaded["read"], loaded["load_model"], loaded["imports"],
            loaded["sklearn"], again.seconds)


def raw_text(paragraphs):
    return "".join(" ".join(sentences) + "\n" for sentences in paragraphs)


def system_segmentation(text, upos_tagger, xpos_tagger):
    """The Segmented system output of the raw text, tagged by both models."""
    from structperc.estimator.text import add_input_columns, text_corpus
    from structperc.evaluate.conll18 import segment
    from structperc.readers.tokenize import joins_previous

    corpus = text_corpus(text)
    upos = upos_tagger.predict_corpus(add_input_columns(upos_tagger, corpus))[0]
    xpos = xpos_tagger.predict_corpus(add_input_columns(xpos_tagger, corpus))[0]
    words = corpus.columns["word"]
    starts = [int(v) for v in corpus.columns["start"]]
    ends = [int(v) for v in corpus.columns["end"]]
    sentences = []
    offsets = corpus.sentence_offsets.tolist()
    for a, b in zip(offsets[:-1], offsets[1:]):
        tokens = []
        for i in range(a, b):
            word = (words[i], upos[i], xpos[i])
            if i > a and starts[i] == ends[i - 1] and joins_previous(words[i], words[i - 1]):
                form, parts = tokens[-1]
                tokens[-1] = (form + words[i], parts + [word])
            else:
                tokens.append((words[i], [word]))
        sentences.append(tokens)
    return segment(sentences)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", default=os.environ.get("STRUCTPERC_MIRROR")
                        or str(ROOT.parent / "shared" / "corpora"))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "rawtext.md"))
    parser.add_argument("--models-out", default=str(ROOT / "benchmarks" / "models.md"))
    args = parser.parse_args()
    cache = tempfile.mkdtemp(prefix="structperc-bench-models-")
    env = {**os.environ, "XDG_CACHE_HOME": cache, "STRUCTPERC_MIRROR": args.mirror}
    os.environ.update({"XDG_CACHE_HOME": cache, "STRUCTPERC_MIRROR": args.mirror})
    sys.path.insert(0, str(ROOT))
    import structperc
    from structperc.evaluate.conll18 import evaluate, read_conllu_segmented
    from structperc.models import list_models
    from structperc.models.build import corpus_folder
    from structperc.models.recipes import all_recipes

    recipes = all_recipes()
    timings = {}
    for name in recipes:
        timings[name] = load_seconds(name, env)
        first, first_process, read, again, imports, sklearn, again_process = timings[name]
        print(f"{name}: first load {first:.1f} s (process {first_process:.1f} s), then read {read:.2f} s, "
              f"load_model {again:.2f} s, imports {imports:.2f} s + scikit-learn {sklearn:.2f} s "
              f"(process {again_process:.2f} s)", file=sys.stderr)

    folder = corpus_folder(recipes["en-ewt-upos"])
    gold, paragraphs = read_conllu_segmented(folder / recipes["en-ewt-upos"].test)
    upos_tagger, xpos_tagger = structperc.load_model("en-ewt-upos"), structperc.load_model("en-ewt-xpos")
    scores = evaluate(gold, system_segmentation(raw_text(paragraphs), upos_tagger, xpos_tagger))
    entries = {e["name"]: e for e in list_models()}
    gold_upos = entries["en-ewt-upos"]["test"]["accuracy"]
    gold_xpos = entries["en-ewt-xpos"]["test"]["accuracy"]

    def cell(value):
        return "—" if value is None else f"{value:.1f}"

    rows = [("tokens F1", 100 * scores["tokens"].f1, UDPIPE["tokens"], None),
            ("words F1", 100 * scores["words"].f1, UDPIPE["words"], TARGETS["words"]),
            ("sentences F1", 100 * scores["sentences"].f1, UDPIPE["sentences"], TARGETS["sentences"]),
            ("UPOS F1, aligned words", 100 * scores["upos"].f1, UDPIPE["upos"], TARGETS["upos"]),
            ("XPOS F1, aligned words", 100 * scores["xpos"].f1, UDPIPE["xpos"], TARGETS["xpos"]),
            ("UPOS, gold tokens", gold_upos, UDPIPE["gold upos"], None),
            ("XPOS, gold tokens", gold_xpos, UDPIPE["gold xpos"], None)]
    lines = ["| UD English EWT test | structperc (named models) | UDPipe 1.2, published | target | met |",
             "|---|---:|---:|---:|:---:|"]
    for label, ours, theirs, target in rows:
        met = "" if target is None else ("yes" if ours >= target else "no")
        lines.append(f"| {label} | {ours:.2f} | {cell(theirs)} | {cell(target)} | {met} |")
    first, first_process, read, again, imports, sklearn, again_process = timings["en-ewt-upos"]
    lines.append(f"| `load_model(\"en-ewt-upos\")`, built on first use | {first:.1f} s | — | 60 s | "
                 f"{'yes' if first <= 60 else 'no'} |")
    lines.append(f"| then, built: the model read and checked as `structperc tag --model en-ewt-upos` does | "
                 f"{read:.2f} s | — | 1 s | {'yes' if read <= 1 else 'no'} |")
    lines.append(f"| then `load_model(\"en-ewt-upos\")` | {again:.2f} s | — | 1 s | {'yes' if again <= 1 else 'no'} |")
    lines.append(f"| the imports before: structperc, scikit-learn | {imports:.2f} s, {sklearn:.2f} s | — | — | |")
    release = read_release(folder, Path(args.mirror) / "ud_english_ewt")
    text = "\n".join(lines) + "\n\n" + (
        f"Tokens and sentences from the raw text of the test set (each paragraph one line); words aligned as the "
        f"CoNLL 2018 shared task aligned them. UDPipe's figures are those its authors published for UDPipe 1.2 "
        f"with its UD 2.5 models; our corpus is a newer release of UD English EWT "
        f"({release}), so the test sets differ. UDPipe's table gives no token F1 beside words. "
        f"The load times are measured inside fresh processes (first: a fresh cache, the corpus already "
        f"fetched, whole process {first_process:.1f} s; then: the commands' loader, after the imports of "
        f"structperc, and `load_model`, after that of scikit-learn, which its `Tagger` needs; whole process "
        f"{again_process:.1f} s), on "
        f"{platform.machine()} with {os.cpu_count()} cores shared with other jobs (load average "
        f"{os.getloadavg()[0]:.1f} at the end of the run).\n")
    Path(args.out).write_text(text, encoding="utf-8")

    model_lines = ["| model | task | labels | training data (licence) | test score | build |",
                   "|---|---|---|---|---:|---:|"]
    for name, entry in entries.items():
        (metric, value), = entry["test"].items()
        model_lines.append(f"| `{name}` | {entry['task']} | {entry['labels']} | {entry['corpus']} ({entry['licence']}) "
                           f"| {metric} {value:.2f} | {timings[name][0]:.0f} s |")
    model_text = "\n".join(model_lines) + "\n\n" + (
        "Test scores measured when each model was built: token accuracy on the test file (EWT test with its "
        "gold tokens; UPOS+FEATS counts a token right when both are), chunk F1 (conlleval's) on CoNLL-2000 "
        "test and CoNLL-2002 Dutch ned.testb, with the gold POS tags of CoNLL-2000 (from raw text, the chunkers "
        "read the tags of `en-ewt-xpos`). Build: `load_model(NAME)` built on first use in a fresh process, "
        "including the models it reads its input columns from when those are not built yet.\n")
    Path(args.models_out).write_text(model_text, encoding="utf-8")
    refresh_figures(ROOT)
    print(text + "\n" + model_text)


def read_release(*folders):
    """The release line of the corpus's README (UD English EWT v2.x -- date), from the first folder
    that has it (``data fetch`` copies the treebank's files, not its README; the mirror has it)."""
    for folder in folders:
        readme = Path(folder) / "README.md"
        if readme.is_file():
            for line in readme.read_text(encoding="utf-8").splitlines():
                if "English Web Treebank v" in line:
                    return line.strip().strip("#").strip()
    return "release unknown"


if __name__ == "__main__":
    main()
