"""The python-crfsuite side of the benchmark: Python feature extraction + CRFsuite training/tagging.

Features are CRFsuite's chunking example templates (the same as structperc's `chunk` preset):
words and POS in a +-2 window, two word bigrams, four POS bigrams, three POS trigrams, a bias.
Each invocation is one whole job, so the benchmark times it as a process, as it times structperc.

usage: python crfsuite_job.py train TRAIN MODEL ALGORITHM EPOCHS C2 [NP]   (C2: a number, or - for none)
       python crfsuite_job.py tag TEST MODEL OUTPUT [NP]
Each prints one JSON line with the in-process split of its time (and the test F1 for `tag`).
"""
import json
import sys
import time

import pycrfsuite

TEMPLATES = (
    [(("w", i),) for i in range(-2, 3)]
    + [(("w", -1), ("w", 0)), (("w", 0), ("w", 1))]
    + [(("pos", i),) for i in range(-2, 3)]
    + [(("pos", -2), ("pos", -1)), (("pos", -1), ("pos", 0)), (("pos", 0), ("pos", 1)), (("pos", 1), ("pos", 2))]
    + [(("pos", -2), ("pos", -1), ("pos", 0)), (("pos", -1), ("pos", 0), ("pos", 1)),
       (("pos", 0), ("pos", 1), ("pos", 2))]
)


def read(path, np_only):
    sentences, current = [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            fields = line.split()
            if not fields:
                if current:
                    sentences.append(current)
                    current = []
                continue
            word, pos, chunk = fields
            if np_only and chunk != "O" and chunk[2:] != "NP":
                chunk = "O"
            current.append((word, pos, chunk))
    if current:
        sentences.append(current)
    return sentences


def features(sentence):
    n = len(sentence)
    cols = {"w": [t[0] for t in sentence], "pos": [t[1] for t in sentence]}
    out = []
    for i in range(n):
        feats = ["bias"]
        for template in TEMPLATES:
            values = []
            for field, offset in template:
                j = i + offset
                values.append(cols[field][j] if 0 <= j < n else ("__BOS__" if j < 0 else "__EOS__"))
            name = "|".join(f"{f}[{o}]" for f, o in template)
            feats.append(f"{name}={'|'.join(values)}")
        out.append(feats)
    return out


def train(train_path, model_path, algorithm, epochs, c2, np_only):
    t0 = time.perf_counter()
    sentences = read(train_path, np_only)
    trainer = pycrfsuite.Trainer(verbose=False)
    for sentence in sentences:
        trainer.append(features(sentence), [t[2] for t in sentence])
    t1 = time.perf_counter()
    params = {"max_iterations": int(epochs)}
    if c2 != "-":
        params["c2"] = float(c2)  # l2sgd's own default is 1.0; the benchmark passes structperc's
    trainer.select(algorithm)
    trainer.set_params(params)
    trainer.train(model_path)
    t2 = time.perf_counter()
    return {"extract_seconds": t1 - t0, "train_seconds": t2 - t1}


def tag(test_path, model_path, output_path, np_only):
    t0 = time.perf_counter()
    sentences = read(test_path, np_only)
    tagger = pycrfsuite.Tagger()
    tagger.open(model_path)
    predicted = [tagger.tag(features(s)) for s in sentences]
    with open(output_path, "w", encoding="utf-8") as out:
        for sentence, labels in zip(sentences, predicted):
            for (word, pos, chunk), label in zip(sentence, labels):
                out.write(f"{word} {pos} {chunk} {label}\n")
            out.write("\n")
    t1 = time.perf_counter()
    from seqeval.metrics import f1_score

    f1 = 100 * f1_score([[t[2] for t in s] for s in sentences], predicted)
    return {"tag_seconds": t1 - t0, "test_tokens": sum(len(s) for s in sentences), "f1": f1}


def main():
    command, *args = sys.argv[1:]
    np_only = args[-1] == "NP"
    if np_only:
        args = args[:-1]
    if command == "train":
        result = train(args[0], args[1], args[2], args[3], args[4], np_only)
    else:
        result = tag(args[0], args[1], args[2], np_only)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
