"""`structperc serve` as a real server: subprocesses of the command on free ports of 127.0.0.1, under
gunicorn with uvicorn's workers, called over real sockets, stopped in teardown (the whole process group).

Two small models are trained from slices of the corpora mirror: a POS tagger (perceptron, EWT) and a
Dutch NER model (crf, CoNLL-2002), so that spans, their scores, k-best lists and marginals all show.
Every loop here is bounded in count and time.
"""
import hashlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import structperc
from structperc.serve.limits import Limits

ROOT = Path(__file__).resolve().parents[1]
TEXT = "Jan Peeters woont in Gent. Hij werkt bij Philips in Eindhoven sinds maandag."


# ------------------------------------------------------------------------------------ servers
def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """A `structperc serve` process and its port; ``stop`` ends its process group."""

    def __init__(self, *args, folder, ready=True, timeout=90):
        self.port = free_port()
        self.log_path = Path(folder) / f"serve-{self.port}.log"
        self.log = open(self.log_path, "w")
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "structperc", "serve", *map(str, args), "--port", str(self.port)],
            env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        if ready:
            self.wait_ready(timeout)

    def wait_ready(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited ({self.process.returncode}): {self.output()}")
            try:
                if call(self.port, "GET", "/ready", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"not ready within {timeout} s: {self.output()}")

    def output(self):
        self.log.flush()
        return self.log_path.read_text()

    def children(self):
        """The pids of the master's worker processes."""
        found = subprocess.run(["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True)
        return [int(pid) for pid in found.stdout.split()]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # anything of its group still there
        except ProcessLookupError:
            pass
        self.process.wait(10)
        self.log.close()


def call(port, method, path, body=None, headers=None, timeout=30):
    """(status, headers as a dict with lower-case names, body bytes) of one request."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers = {"Content-Type": "application/json", **(headers or {})}
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def call_json(port, method, path, body=None, headers=None, timeout=30):
    status, head, data = call(port, method, path, body, headers, timeout)
    return status, head, json.loads(data)


def first_sentences(source, target, n, encoding="utf-8"):
    blocks = [b for b in Path(source).read_text(encoding=encoding).split("\n\n") if b.strip()]
    target.write_text("\n\n".join(blocks[:n]) + "\n\n", encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def models(corpus_mirror, tmp_path_factory):
    """{"pos": path, "ner": path, "ner2": path}: small models trained here (ner2: another epoch count)."""
    from structperc import Tagger

    folder = tmp_path_factory.mktemp("serve-models")
    ner = first_sentences(corpus_mirror / "conll2002_nl" / "ned.train", folder / "ner.txt", 400, "latin-1")
    pos = first_sentences(corpus_mirror / "ud_english_ewt" / "en_ewt-ud-train.conllu", folder / "pos.conllu", 300)
    out = {}
    for name, epochs in (("ner", 3), ("ner2", 2)):
        Tagger(trainer="crf", templates="ner", epochs=epochs).fit_file(
            ner, format="conll", columns=["word", "tag", "ner"], label="ner").save(folder / f"{name}.npz")
        out[name] = folder / f"{name}.npz"
    Tagger(epochs=3).fit_file(pos, format="conllu", label="upos").save(folder / "pos.npz")
    out["pos"] = folder / "pos.npz"
    return out


@pytest.fixture(scope="module")
def server(models, tmp_path_factory):
    """Both models, two workers, the default limits."""
    running = Server(models["pos"], models["ner"], "--workers", 2, folder=tmp_path_factory.mktemp("serve"))
    yield running
    running.stop()


def tag(port, **payload):
    status, _, answer = call_json(port, "POST", "/v1/tag", payload)
    assert status == 200, answer
    return answer


# ------------------------------------------------------------------------------------ /v1/tag
def test_requests_tagged_together_get_what_each_gets_alone(server):
    """Concurrent requests are tagged as one batch by a worker, the small ones on its event loop and
    the large ones (here the first two, over ``Limits.inline_chars``) on its tagging thread: the
    answers must be those of the requests one at a time, each with its own offsets."""
    large = [long_text(n) for n in (60, 61)]
    assert min(map(len, large)) > Limits.inline_chars
    texts = large + [" ".join(TEXT.split()[i:]) for i in range(12)] + ["", "Gent."]
    alone = [tag(server.port, model="ner", text=text) for text in texts]
    together = [None] * len(texts)

    def send(i):
        together[i] = tag(server.port, model="ner", text=texts[i])

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert together == alone
    assert alone[-2]["sentences"] == [] and alone[-1]["sentences"][0]["tokens"][0] == {"text": "Gent", "start": 0,
                                                                                         "end": 4}


def test_raw_text_gives_tokens_with_their_offsets_tags_and_scored_spans(server):
    answer = tag(server.port, model="ner", text=TEXT)
    assert answer["model"] == "ner"
    sentences = answer["sentences"]
    assert len(sentences) == 2
    words = []
    for sentence in sentences:
        assert len(sentence["tags"]) == len(sentence["tokens"]) > 0
        for token in sentence["tokens"]:
            assert TEXT[token["start"]:token["end"]] == token["text"]
        words += [t["text"] for t in sentence["tokens"]]
        assert sentence["text"] == TEXT[sentence["tokens"][0]["start"]:sentence["tokens"][-1]["end"]]
        for span in sentence["spans"]:  # the chunks of the tags, each with its probability
            assert 0.0 <= span["score"] <= 1.0
            inside = [t for t in sentence["tokens"] if span["start"] <= t["start"] and t["end"] <= span["end"]]
            labels = [sentence["tags"][sentence["tokens"].index(t)] for t in inside]
            assert labels[0] == f"B-{span['label']}" and all(x == f"I-{span['label']}" for x in labels[1:])
        n_chunks = sum(tag_.startswith("B-") for tag_ in sentence["tags"])
        assert len(sentence["spans"]) == n_chunks
    assert words[:3] == ["Jan", "Peeters", "woont"] and words[-1] == "."
    assert any(s["spans"] for s in sentences)


def test_tokens_are_kept_with_kbest_lists_and_marginals(server):
    sentences = [["Jan", "woont", "in", "Gent", "."], ["Hij", "werkt", "bij", "Philips", "."]]
    answer = tag(server.port, model="ner", sentences=sentences, k=3, marginals=True)
    for given, sentence in zip(sentences, answer["sentences"], strict=True):
        assert [t["text"] for t in sentence["tokens"]] == given
        starts = [sum(len(w) + 1 for w in given[:i]) for i in range(len(given))]
        assert [t["start"] for t in sentence["tokens"]] == starts  # into the tokens joined by one space
        kbest = sentence["kbest"]
        assert len(kbest) == 3 and kbest[0]["tags"] == sentence["tags"]
        assert kbest[0]["score"] >= kbest[1]["score"] >= kbest[2]["score"]
        assert len({tuple(c["tags"]) for c in kbest}) == 3
        for row, label in zip(sentence["marginals"], sentence["tags"]):
            assert abs(sum(row.values()) - 1.0) < 1e-3
            assert label in row
    # tokens give the same tags as the same words as text
    as_text = tag(server.port, model="ner", text=" ".join(sentences[0]))
    assert as_text["sentences"][0]["tags"] == answer["sentences"][0]["tags"]


def test_a_pos_model_has_tags_and_no_spans_and_refuses_marginals(server):
    answer = tag(server.port, model="pos", text="Mary left early. She was tired.")
    sentence = answer["sentences"][0]
    assert [t["text"] for t in sentence["tokens"]] == ["Mary", "left", "early", "."]
    assert "spans" not in sentence and sentence["tags"][-1] == "PUNCT"
    status, _, body = call_json(server.port, "POST", "/v1/tag", {"model": "pos", "text": "a", "marginals": True})
    assert status == 400 and body["error"]["kind"] == "unsupported"


def test_explain_gives_the_label_and_its_features(server):
    tokens = ["Jan", "woont", "in", "Gent", "."]
    tags = tag(server.port, model="ner", sentences=[tokens])["sentences"][0]["tags"]
    status, _, e = call_json(server.port, "POST", "/v1/explain", {"model": "ner", "tokens": tokens, "token": 3})
    assert status == 200, e
    assert e["token"] == "Gent" and e["label"] == tags[3] and e["index"] == 3
    assert e["features"] and all({"feature", "weight", "other_weight"} <= set(f) for f in e["features"])
    assert abs(e["emission"] - sum(f["value"] * f["weight"] for f in e["features"])) < 1e-6


def test_models_lists_labels_and_the_sha256_of_each_file(server, models):
    status, _, answer = call_json(server.port, "GET", "/v1/models")
    assert status == 200 and answer["default_model"] == "pos"
    by_name = {m["name"]: m for m in answer["models"]}
    assert set(by_name) == {"pos", "ner"}
    for name in ("pos", "ner"):
        assert by_name[name]["sha256"] == hashlib.sha256(models[name].read_bytes()).hexdigest()
    assert "B-PER" in by_name["ner"]["labels"] and by_name["ner"]["probabilistic"] is True
    assert "NOUN" in by_name["pos"]["labels"] and by_name["pos"]["probabilistic"] is False


# ------------------------------------------------------------------------------------ UDPipe's API
def test_udpipe_process_and_models(server):
    from urllib.parse import urlencode

    form = urlencode({"model": "pos", "tokenizer": "", "tagger": "", "data": "Mary left early. She was tired."})
    status, _, answer = call_json(server.port, "POST", "/process", form.encode(),
                                  {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 200, answer
    assert answer["model"] == "pos" and isinstance(answer["acknowledgements"], list)
    rows = [line.split("\t") for line in answer["result"].splitlines() if line and not line.startswith("#")]
    assert all(len(r) == 10 for r in rows)
    expected = tag(server.port, model="pos", text="Mary left early. She was tired.")["sentences"]
    assert [r[3] for r in rows] == [t for s in expected for t in s["tags"]]
    assert answer["result"].startswith("# text = Mary left early.\n1\tMary\t")
    # pre-tokenized input (horizontal), by GET with a query, the default model
    status, _, again = call_json(server.port, "GET", "/process?" + urlencode({"input": "horizontal",
                                                                             "data": "Mary left early ."}))
    assert status == 200 and again["model"] == "pos"
    assert [r.split("\t")[3] for r in again["result"].splitlines() if r and r[0].isdigit()] == [r[3] for r in rows[:4]]
    status, _, listing = call_json(server.port, "GET", "/models")
    assert status == 200 and listing["default_model"] == "pos" and set(listing["models"]) == {"pos", "ner"}


# ------------------------------------------------------------------------------------ errors
BAD = [
    ("bad JSON", "POST", "/v1/tag", b'{"text": "a",', {"Content-Type": "application/json"}, 400, "bad_json"),
    ("wrong content type", "POST", "/v1/tag", b'{"text": "a"}', {"Content-Type": "text/plain"}, 415,
     "unsupported_media_type"),
    ("not UTF-8", "POST", "/v1/tag", '{"model": "pos", "text": "café"}'.encode("latin-1"),
     {"Content-Type": "application/json"}, 400, "encoding"),
    ("unknown model", "POST", "/v1/tag", b'{"model": "xx", "text": "a"}', {"Content-Type": "application/json"}, 404,
     "unknown_model"),
    ("too large", "POST", "/v1/tag", b'{"model": "pos", "text": "' + b"a " * (600 << 10) + b'"}',
     {"Content-Type": "application/json"}, 413, "too_large"),
    ("too many tokens", "POST", "/v1/tag", json.dumps({"model": "pos", "sentences": [["a"] * 1001]}).encode(),
     {"Content-Type": "application/json"}, 413, "too_many_tokens"),
    ("deep JSON", "POST", "/v1/tag", b"[" * 100_000 + b"]" * 100_000, {"Content-Type": "application/json"}, 400,
     "bad_json"),
    ("a lone surrogate", "POST", "/v1/tag", b'{"model": "pos", "text": "a \\ud800 b"}',
     {"Content-Type": "application/json"}, 400, "encoding"),
    ("a token with a space", "POST", "/v1/tag", b'{"model": "pos", "sentences": [["a b"]]}',
     {"Content-Type": "application/json"}, 400, "bad_request"),
    ("unknown field", "POST", "/v1/tag", b'{"model": "pos", "txt": "a"}', {"Content-Type": "application/json"}, 400,
     "bad_request"),
    ("wrong method", "GET", "/v1/tag", None, {}, 405, "method_not_allowed"),
    ("no such path", "GET", "/v2/tag", None, {}, 404, "not_found"),
    ("process: wrong type", "POST", "/process", b"data=a", {"Content-Type": "text/plain"}, 415,
     "unsupported_media_type"),
]


@pytest.mark.parametrize("what, method, path, body, headers, status, kind", BAD, ids=[b[0] for b in BAD])
def test_client_errors_are_json_with_their_status_and_kind(server, what, method, path, body, headers, status, kind):
    got, head, data = call(server.port, method, path, body, headers)
    assert (got, json.loads(data)["error"]["kind"]) == (status, kind), data[:300]
    assert head["content-type"] == "application/json" and json.loads(data)["error"]["message"]
    assert b"Traceback" not in data
    assert call(server.port, "GET", "/live")[0] == 200  # and it goes on serving


def test_metrics_count_requests_and_tokens_over_both_workers(server):
    def value(text, line_start):
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(line_start))

    before = call(server.port, "GET", "/metrics")[2].decode()
    sentences = [["Jan", "woont", "in", "Gent", "."]]
    for _ in range(6):  # over keep-alive-less connections, so both workers take some
        tag(server.port, model="ner", sentences=sentences)
    call(server.port, "POST", "/v1/tag", b"{", {"Content-Type": "application/json"})
    status, head, after = call(server.port, "GET", "/metrics")
    after = after.decode()
    assert status == 200 and head["content-type"].startswith("text/plain")
    ok = 'structperc_requests_total{route="/v1/tag",status="200"}'
    assert value(after, ok) - value(before, ok) == 6
    bad = 'structperc_requests_total{route="/v1/tag",status="400"}'
    assert value(after, bad) - value(before, bad) == 1
    tokens = 'structperc_tokens_total{model="ner"}'
    assert value(after, tokens) - value(before, tokens) == 30
    assert 'structperc_request_seconds_bucket{le="0.1",route="/v1/tag"}' in after


def test_openapi_names_every_route(server):
    status, _, schema = call_json(server.port, "GET", "/openapi.json")
    assert status == 200 and schema["openapi"].startswith("3.") and schema["info"]["version"] == structperc.__version__
    assert {"/v1/tag", "/v1/explain", "/v1/models", "/process", "/models", "/live", "/ready",
            "/metrics"} <= set(schema["paths"])
    assert schema["paths"]["/v1/tag"]["post"]["requestBody"]["content"]["application/json"]["schema"][
        "properties"]["model"]["enum"] == ["pos", "ner"]


def test_the_page_and_its_parts_load_nothing_from_elsewhere(server):
    status, head, page = call(server.port, "GET", "/")
    assert status == 200 and head["content-type"].startswith("text/html")
    assert "default-src 'self'" in head["content-security-policy"]
    assert b"http://" not in page and b"https://" not in page
    for part in ("/page.js", "/page.css"):
        status, _, body = call(server.port, "GET", part)
        assert status == 200 and body and b"https://" not in body


def test_workers_are_forked_from_a_master_that_holds_the_models(server):
    workers = server.children()
    assert len(workers) == 2
    for pid in workers:  # the weights' pages are shared with the master: a worker's own pages are few
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        fields = {line.split(":")[0]: int(line.split()[1]) for line in rollup.splitlines()[1:]}
        private = fields["Private_Clean"] + fields["Private_Dirty"]
        assert private < fields["Rss"] / 2, rollup


def established_by_worker(port, workers):
    """{pid: how many connections to ``port`` that worker holds open}, from /proc: the inodes of the
    established TCP sockets whose local port is ``port``, against each worker's descriptors."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                inodes.add(fields[9])
    held = {}
    for pid in workers:
        links = []
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                links.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:  # closed meanwhile
                pass
        held[pid] = sum(link[len("socket:["):-1] in inodes for link in links if link.startswith("socket:["))
    return held


def test_clients_that_keep_their_connections_are_shared_among_the_workers(server):
    """Eight clients connect one after another while the earlier ones keep a worker busy, and each
    keeps its connection: the worker that holds fewer connections takes the next one, so each of the
    two workers holds some (left to the race for ``accept``, the busy worker took all eight)."""
    clients, stop, errors = 8, threading.Event(), []
    body = json.dumps({"model": "ner", "text": TEXT}).encode()
    connected = threading.Barrier(clients + 1, timeout=30)

    def client(i):
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        try:
            for n in range(2000):  # bounded: stops at ``stop`` long before
                connection.request("POST", "/v1/tag", body=body, headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    errors.append(response.status)
                if n == 0:
                    connected.wait()
                if stop.is_set():
                    break
        except Exception as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(repr(error))
        finally:
            connection.close()

    threads = []
    for i in range(clients):
        threads.append(threading.Thread(target=client, args=(i,), daemon=True))
        threads[-1].start()
        time.sleep(0.03)
    connected.wait()
    time.sleep(0.2)
    held = established_by_worker(server.port, server.children())
    stop.set()
    for thread in threads:
        thread.join(30)
    assert not errors, errors
    assert sum(held.values()) == clients, held
    assert min(held.values()) >= 2, held


# ------------------------------------------------------------------------------------ fuzz (small)
def test_a_reranked_model_is_served_with_its_own_choices_and_refuses_what_it_lacks(models, tmp_path):
    """``rerank fit``'s model file served: its tags are those the model gives in this process; k-best lists,
    marginals and explanations are refused with a 400 and a JSON body (its base's would not be its own),
    and the server answers on."""
    from structperc import RerankedTagger, Tagger, load_model
    from structperc.readers import read_corpus

    train = read_corpus(models["ner"].parent / "ner.txt", columns=["word", "tag", "ner"], label="ner")
    path = tmp_path / "reranked.npz"
    RerankedTagger(base=Tagger(templates="ner", epochs=2), k=4, folds=3).fit(train).save(path)
    running = Server(path, folder=tmp_path)
    try:
        status, _, listed = call_json(running.port, "GET", "/v1/models")
        assert status == 200
        entry = listed["models"][0]
        assert entry["reranked"] and not (entry["kbest"] or entry["probabilistic"] or entry["explain"])
        sentences = tag(running.port, text=TEXT)["sentences"]
        tokens = [[t["text"] for t in s["tokens"]] for s in sentences]
        assert [s["tags"] for s in sentences] == load_model(path).predict(tokens)
        spans = [span for s in sentences for span in s["spans"]]
        assert spans and all("score" not in span for span in spans)
        for path_, body in (("/v1/tag", {"text": TEXT, "k": 2}), ("/v1/tag", {"text": TEXT, "marginals": True}),
                            ("/v1/explain", {"tokens": tokens[0], "token": 0})):
            status, head, answer = call_json(running.port, "POST", path_, body)
            assert status == 400 and head["content-type"].startswith("application/json")
            assert answer["error"]["kind"] == "unsupported" and "reranked" in answer["error"]["message"]
        assert [s["tags"] for s in tag(running.port, text=TEXT)["sentences"]] == [s["tags"] for s in sentences]
    finally:
        running.stop()


def raw_exchange(port, payload, timeout=10.0):
    """Send raw bytes, read what comes back until the server closes or ``timeout``; the status code
    or None (no answer: the server closed without one)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        try:
            connection.sendall(payload)
        except OSError:  # the server answered and closed early (413): read its answer
            pass
        data = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = connection.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            data += chunk
    if not data.startswith(b"HTTP/1.1 "):
        return None
    return int(data[9:12])


def malformed_requests(rng, n):
    """n malformed requests, each with Connection: close: random bytes, truncated and deeply nested JSON,
    huge numbers, wrong fields, wrong types, wrong methods. (Slow bodies take the server's --body-seconds
    each: ``test_a_slow_body_is_408`` and the benchmark's fuzz send them.)"""
    good = json.dumps({"model": "ner", "text": TEXT}).encode()
    makers = [
        lambda: bytes(rng.integers(0, 256, rng.integers(1, 400), dtype=np.uint8)),
        lambda: good[:rng.integers(1, len(good))],
        lambda: b"[" * int(rng.integers(1000, 50_000)),
        lambda: b'{"model": "ner", "k": ' + b"9" * int(rng.integers(10, 20_000)) + b', "text": "a"}',
        lambda: json.dumps({"model": "ner", "sentences": [[""]]}).encode(),
        lambda: json.dumps({"model": "ner", "sentences": "abc", "k": -1}).encode(),
        lambda: json.dumps({"model": ["ner"], "text": 5}).encode(),
        lambda: json.dumps({"model": "ner", "text": "\ud800" * 3}).encode(),
        lambda: bytes(good).replace(b'"', b"'"),
    ]
    out = []
    for i in range(n):
        body = makers[i % len(makers)]()
        kind = i % 3
        if kind == 0:
            head = f"POST /v1/tag HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        elif kind == 1:
            head = f"POST /process HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n"
        elif kind == 2:
            method = ["PUT", "DELETE", "PATCH", "GET", "OPTIONS"][i % 5]
            head = f"{method} /v1/{['tag', 'explain', 'models'][i % 3]} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
        out.append((head + "Connection: close\r\n\r\n").encode() + body)
    return out


def test_a_small_fuzz_gets_no_5xx_and_the_server_lives_on(server):
    rng = np.random.default_rng(0)
    statuses = []
    requests = malformed_requests(rng, 120)
    started = time.monotonic()
    for payload in requests:
        statuses.append(raw_exchange(server.port, payload))
        assert time.monotonic() - started < 60
    five = [s for s in statuses if s is not None and s >= 500]
    assert five == [], five
    assert statuses.count(None) == 0 and sum(400 <= s < 500 for s in statuses) > 100, statuses
    assert server.process.poll() is None and len(server.children()) == 2
    assert call(server.port, "GET", "/ready")[0] == 200


# ------------------------------------------------------------------------------------ limits, access
@pytest.fixture(scope="module")
def tight(models, tmp_path_factory):
    """One worker, a queue of 1, a time limit of 0.3 s."""
    running = Server(models["ner"], "--workers", 1, "--queue", 1, "--timeout", 0.3, "--body-seconds", 1,
                     folder=tmp_path_factory.mktemp("tight"))
    yield running
    running.stop()


def long_text(n_sentences):
    return " ".join([TEXT] * n_sentences)


def test_a_request_over_its_time_is_504_and_a_full_queue_503_with_retry_after(tight):
    body = {"text": long_text(6000)}  # about 90,000 tokens: longer than 0.3 s
    results = {}

    def slow():
        results["slow"] = call_json(tight.port, "POST", "/v1/tag", body)

    thread = threading.Thread(target=slow)
    thread.start()
    time.sleep(0.1)
    status, head, answer = call_json(tight.port, "POST", "/v1/tag", {"text": "Jan woont in Gent."})
    thread.join(30)
    assert status == 503 and answer["error"]["kind"] == "busy" and head["retry-after"] == "1"
    status, _, answer = results["slow"]
    assert status == 504 and answer["error"]["kind"] == "timeout"
    deadline = time.monotonic() + 20  # the slow job finishes unseen; then the server takes work again
    while time.monotonic() < deadline:
        status = call(tight.port, "POST", "/v1/tag", {"text": "Jan woont in Gent."})[0]
        if status == 200:
            break
        time.sleep(0.2)
    assert status == 200


def test_a_slow_body_is_408(tight):
    with socket.create_connection(("127.0.0.1", tight.port), timeout=10) as connection:
        connection.sendall(b"POST /v1/tag HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                           b"Content-Length: 100\r\n\r\n{\"text\": ")
        started = time.monotonic()
        answer = b""
        while time.monotonic() - started < 5:
            chunk = connection.recv(65536)
            if not chunk:
                break
            answer += chunk
            if answer.count(b"}") >= 2:  # the whole JSON body
                break
        assert time.monotonic() - started < 5
    assert answer.startswith(b"HTTP/1.1 408") and b'"timeout"' in answer


def test_a_token_file_requires_the_bearer_token_and_cors_is_only_when_asked(models, tmp_path):
    token = tmp_path / "token.txt"
    token.write_text("s3cret-token\n")
    running = Server(models["pos"], "--token-file", token, "--cors-origin", "http://localhost:9999", folder=tmp_path)
    try:
        status, head, body = call_json(running.port, "POST", "/v1/tag", {"text": "Mary left."})
        assert status == 401 and body["error"]["kind"] == "unauthorized" and head["www-authenticate"] == "Bearer"
        assert call(running.port, "POST", "/v1/tag", {"text": "a"}, {"Authorization": "Bearer wrong"})[0] == 401
        assert call(running.port, "GET", "/v1/models")[0] == 401
        status, _, body = call_json(running.port, "POST", "/v1/tag", {"text": "Mary left."},
                                    {"Authorization": "Bearer s3cret-token", "Origin": "http://localhost:9999"})
        assert status == 200 and body["sentences"][0]["tags"]
        assert call(running.port, "GET", "/ready")[0] == 200 and call(running.port, "GET", "/")[0] == 200
        head = call(running.port, "GET", "/live", headers={"Origin": "http://localhost:9999"})[1]
        assert head["access-control-allow-origin"] == "http://localhost:9999"
    finally:
        running.stop()


def test_no_cors_headers_unless_asked(server):
    head = call(server.port, "GET", "/v1/models", headers={"Origin": "http://localhost:9999"})[1]
    assert not any(name.startswith("access-control") for name in head)


# ------------------------------------------------------------------------------------ life cycle
def test_sigterm_finishes_the_request_in_flight_then_exits(models, tmp_path):
    running = Server(models["ner"], folder=tmp_path)
    results = {}

    def slow():
        results["slow"] = call_json(running.port, "POST", "/v1/tag", {"text": long_text(400)})

    try:
        thread = threading.Thread(target=slow)
        thread.start()
        time.sleep(0.3)
        running.process.send_signal(signal.SIGTERM)
        thread.join(30)
        status, _, answer = results["slow"]
        assert status == 200 and len(answer["sentences"]) == 800
        assert running.process.wait(20) == 0
    finally:
        running.stop()


def crafted_copy(source, target):
    """``source`` with one weight changed and the old checksum kept: a file that fails its checksum."""
    arrays = dict(np.load(source, allow_pickle=False))
    name = next(k for k, v in arrays.items() if k != "checksum" and v.dtype.kind == "f" and v.size)
    arrays[name] = arrays[name].copy()
    arrays[name].flat[0] += 1.0
    with open(target, "wb") as handle:
        np.savez(handle, **arrays)


def sha256_served(port, name):
    models = call_json(port, "GET", "/v1/models")[2]["models"]
    return next(m["sha256"] for m in models if m["name"] == name)


def wait_for_sha256(port, name, sha256, seconds=30):
    """Wait until 10 answers in a row serve ``sha256``: the old workers drain for a second after a swap
    (``serve.draining``), answering with the old model meanwhile."""
    deadline, in_a_row = time.monotonic() + seconds, 0
    while in_a_row < 10 and time.monotonic() < deadline:
        in_a_row = in_a_row + 1 if sha256_served(port, name) == sha256 else 0
        time.sleep(0.05 if in_a_row else 0.2)
    return in_a_row == 10


def test_sighup_swaps_a_changed_model_without_a_failed_request_and_refuses_a_bad_checksum(models, tmp_path):
    served = tmp_path / "ner.npz"
    served.write_bytes(models["ner"].read_bytes())
    running = Server(served, "--workers", 2, "--graceful-seconds", 10, folder=tmp_path)
    failures, statuses, stop = [], [], threading.Event()

    def load():
        deadline = time.monotonic() + 60
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                statuses.append(call(running.port, "POST", "/v1/tag", {"text": TEXT}, timeout=10)[0])
            except OSError as error:
                failures.append(repr(error))

    try:
        old = sha256_served(running.port, "ner")
        clients = [threading.Thread(target=load) for _ in range(3)]
        for client in clients:
            client.start()
        time.sleep(0.5)
        new_bytes = models["ner2"].read_bytes()
        (tmp_path / "ner.tmp").write_bytes(new_bytes)
        os.replace(tmp_path / "ner.tmp", served)
        running.process.send_signal(signal.SIGHUP)
        new = hashlib.sha256(new_bytes).hexdigest()
        assert wait_for_sha256(running.port, "ner", new) and new != old
        stop.set()
        for client in clients:
            client.join(30)
        assert failures == [] and statuses and set(statuses) == {200}, (failures, set(statuses))
        # a file that fails its checksum: refused, the model swapped in before stays
        crafted_copy(models["ner"], tmp_path / "bad.npz")
        os.replace(tmp_path / "bad.npz", served)
        running.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 20
        while "refused" not in running.output() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert "checksum" in running.output()
        time.sleep(1.5)  # the drain of the workers that the refused swap replaced
        assert wait_for_sha256(running.port, "ner", new, seconds=5)
        assert call(running.port, "POST", "/v1/tag", {"text": TEXT})[0] == 200
    finally:
        stop.set()
        running.stop()


def test_reload_on_change_swaps_the_model_by_itself(models, tmp_path):
    served = tmp_path / "ner.npz"
    served.write_bytes(models["ner"].read_bytes())
    running = Server(served, "--reload-on-change", "--watch-seconds", 0.2, folder=tmp_path)
    try:
        (tmp_path / "ner.tmp").write_bytes(models["ner2"].read_bytes())
        os.replace(tmp_path / "ner.tmp", served)
        new = hashlib.sha256(models["ner2"].read_bytes()).hexdigest()
        assert wait_for_sha256(running.port, "ner", new)
    finally:
        running.stop()


# ------------------------------------------------------------------------------------ the command
def test_without_the_serve_extra_the_command_names_it_in_one_line(models):
    """A package of the server missing (here starlette, hidden from imports) is an exit 2 that names the
    extra to install, before any module of the server is imported."""
    script = ("import sys\nsys.modules['starlette'] = None  # as if not installed\n"
              "from structperc.cli.main import main\n"
              f"sys.argv = ['structperc', 'serve', {str(models['ner'])!r}]\nmain()\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "pip install 'structperc[serve]'" in done.stderr and "starlette" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def run_command(*args, timeout=60):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "structperc", *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_user_errors_are_one_line_and_status_2(models, tmp_path):
    done = run_command("serve", tmp_path / "missing.npz", "--port", free_port())
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "missing.npz" in done.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = run_command("serve", models["pos"], "--port", taken.getsockname()[1])
    assert done.returncode == 2 and done.stderr.startswith("structperc: error: cannot listen on 127.0.0.1:")
    assert "Traceback" not in done.stderr


def test_help_has_a_curl_line_for_every_endpoint():
    done = run_command("serve", "--help")
    assert done.returncode == 0
    curls = [line for line in done.stdout.splitlines() if "curl " in line]
    for path in ("/v1/tag", "/v1/explain", "/v1/models", "/process", "/models", "/live", "/ready", "/metrics",
                 "/openapi.json"):
        assert any(f"localhost:8080{path}" in line for line in curls), path


def test_a_bug_is_a_500_with_an_id_logged_beside_its_traceback(tmp_path):
    """An app that raises, under the server's handler and ``errors.Faults`` as ``app.build_app`` sets
    them, in a real uvicorn process on a real socket."""
    port = free_port()
    script = (
        "import uvicorn\n"
        "from starlette.applications import Starlette\n"
        "from starlette.responses import JSONResponse\n"
        "from starlette.routing import Route\n"
        "from structperc.serve.errors import Faults, internal_error\n"
        "async def broken(request):\n"
        "    raise KeyError('a bug of ours')\n"
        "async def fine(request):\n"
        "    return JSONResponse({'ok': True})\n"
        "app = Faults(Starlette(routes=[Route('/broken', broken), Route('/fine', fine)],\n"
        "                       exception_handlers={Exception: internal_error}))\n"
        f"uvicorn.run(app, host='127.0.0.1', port={port}, log_level='error')\n")
    log = open(tmp_path / "log.txt", "w")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if call(port, "GET", "/fine")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        status, head, body = call_json(port, "GET", "/broken")
        assert status == 500 and body["error"]["kind"] == "internal"
        error_id = head["x-error-id"]
        assert error_id in body["error"]["message"] and "KeyError" not in json.dumps(body)
        assert call(port, "GET", "/fine")[0] == 200  # it goes on serving
        log.flush()
        text = (tmp_path / "log.txt").read_text()
        assert f"internal error {error_id}" in text and "Traceback" in text and "a bug of ours" in text
        assert text.count("Traceback") == 1  # logged once, with its id
    finally:
        process.terminate()
        process.wait(10)
        log.close()
