"""The python-crfsuite peer of `structperc serve`, for ``bench_serve.py``: the same stack (Starlette on
uvicorn's workers under gunicorn, the model loaded before the workers fork), the same tokenizer
(structperc's raw-text splitting, ``estimator.text.text_corpus``) and the same ``POST /v1/tag`` answer
(tokens with their offsets, tags, and the spans of a chunk label set, without scores: a tagger of
python-crfsuite gives none per span). The features are computed in Python, as python-crfsuite's and
sklearn-crfsuite's users write them (their tutorial's word features), and the tagging runs on Starlette's
thread pool, as a FastAPI example's would.

``stack`` serves the same stack with no tagger at all: ``POST /v1/tag`` reads the JSON body and answers
an empty list of sentences. Its requests/s is the most that any service on this stack can answer on this
machine, whatever its tagger: the ceiling of a ratio between two services on it.

usage: python serve_crfsuite_app.py train CORPUS FORMAT LABEL MODEL [--columns a,b,c] [--encoding E]
       python serve_crfsuite_app.py serve NAME=MODEL [NAME=MODEL ...] --port P --workers N
       python serve_crfsuite_app.py stack --port P --workers N
"""
import argparse
import json
import os
import sys
import time


def word_features(words, i):
    """The features of token i: sklearn-crfsuite's tutorial's, on the words alone."""
    word = words[i]
    features = ["bias", "w=" + word.lower(), "s3=" + word[-3:], "s2=" + word[-2:], "p3=" + word[:3],
                "up=%d" % word.isupper(), "ti=%d" % word.istitle(), "dg=%d" % word.isdigit()]
    for offset in (-2, -1, 1, 2):
        j = i + offset
        if 0 <= j < len(words):
            other = words[j]
            features += [f"{offset}w=" + other.lower(), f"{offset}ti=%d" % other.istitle(),
                         f"{offset}up=%d" % other.isupper()]
        elif offset in (-1, 1):
            features.append("BOS" if offset < 0 else "EOS")
    return features


def sentence_features(words):
    return [word_features(words, i) for i in range(len(words))]


def train(corpus, format, label, model, columns=None, encoding=None):
    import pycrfsuite

    from structperc import read_corpus

    options = {"encoding": encoding} if encoding else {}
    data = read_corpus(corpus, format=format, columns=columns, label=label, **options)
    words, labels, offsets = data.columns["word"], data.labels(), data.sentence_offsets.tolist()
    trainer = pycrfsuite.Trainer(verbose=False)
    for a, b in zip(offsets[:-1], offsets[1:]):
        trainer.append(sentence_features(words[a:b]), labels[a:b])
    trainer.set_params({"c1": 0.1, "c2": 0.01, "max_iterations": 100, "feature.possible_transitions": True})
    start = time.perf_counter()
    trainer.train(model)
    print(json.dumps({"model": model, "sentences": len(offsets) - 1, "seconds": time.perf_counter() - start}))


# ------------------------------------------------------------------------------------ the app
def build_app(models):
    """The Starlette app over {name: pycrfsuite.Tagger}."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from structperc.chunks import chunk_spans
    from structperc.estimator.text import text_corpus

    default = next(iter(models))

    def tag_text(tagger, text):
        corpus = text_corpus(text, "<request>")
        words = corpus.columns["word"]
        starts = [int(v) for v in corpus.columns["start"]]
        ends = [int(v) for v in corpus.columns["end"]]
        offsets = corpus.sentence_offsets.tolist()
        out = []
        for a, b in zip(offsets[:-1], offsets[1:]):
            if a == b:
                continue
            tags = tagger.tag(sentence_features(words[a:b]))
            sentence = {"text": text[starts[a]:ends[b - 1]],
                        "tokens": [{"text": words[i], "start": starts[i], "end": ends[i]} for i in range(a, b)],
                        "tags": tags}
            if any(t.startswith("B-") for t in tagger.labels()):
                sentence["spans"] = [{"start": starts[a + first], "end": ends[a + last], "label": kind}
                                     for kind, first, last in chunk_spans(tags)]
            out.append(sentence)
        return out

    async def tag_endpoint(request):
        payload = json.loads(await request.body())
        name = payload.get("model") or default
        sentences = await run_in_threadpool(tag_text, models[name], payload["text"])
        return JSONResponse({"model": name, "sentences": sentences})

    async def ready(request):
        return JSONResponse({"status": "ready"})

    for tagger in models.values():  # warm: the first tagging opens the model's tables
        tag_text(tagger, "Mary met John in Amsterdam.")
    return Starlette(routes=[Route("/v1/tag", tag_endpoint, methods=["POST"]),
                             Route("/ready", ready), Route("/live", ready)])


def build_stack_app():
    """The same stack with no tagger: ``POST /v1/tag`` parses the body and answers no sentences."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def tag_endpoint(request):
        payload = json.loads(await request.body())
        return JSONResponse({"model": payload.get("model"), "sentences": []})

    async def ready(request):
        return JSONResponse({"status": "ready"})

    return Starlette(routes=[Route("/v1/tag", tag_endpoint, methods=["POST"]), Route("/ready", ready),
                             Route("/live", ready)])


def serve(specs, port, workers, host="127.0.0.1"):
    """The peer over the python-crfsuite models ``specs`` (NAME=PATH); none: the stack alone."""
    import pycrfsuite

    models = {}
    for spec in specs:
        name, path = spec.split("=", 1)
        tagger = pycrfsuite.Tagger()
        tagger.open(path)
        models[name] = tagger
    run_gunicorn(build_app(models) if models else build_stack_app(), port, workers, host)


def run_gunicorn(app, port, workers, host):
    from gunicorn.app.base import BaseApplication

    class Application(BaseApplication):
        def load_config(self):
            for key, value in {"bind": f"{host}:{port}", "workers": workers, "preload_app": True,
                               "worker_class": "structperc.serve.worker.ServeWorker", "keepalive": 5,
                               "loglevel": "warning", "errorlog": "-", "graceful_timeout": 30}.items():
                self.cfg.set(key, value)

        def load(self):
            return app

    Application().run()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    training = commands.add_parser("train")
    training.add_argument("corpus")
    training.add_argument("format")
    training.add_argument("label")
    training.add_argument("model")
    training.add_argument("--columns")
    training.add_argument("--encoding")
    serving = commands.add_parser("serve")
    serving.add_argument("models", nargs="+")
    serving.add_argument("--port", type=int, required=True)
    serving.add_argument("--workers", type=int, default=1)
    stack = commands.add_parser("stack")
    stack.add_argument("--port", type=int, required=True)
    stack.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    if args.command == "train":
        train(args.corpus, args.format, args.label, args.model,
              args.columns.split(",") if args.columns else None, args.encoding)
    else:
        serve(getattr(args, "models", []), args.port, args.workers)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    main()
