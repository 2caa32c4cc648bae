"""`structperc serve` under load, beside python-crfsuite behind the same stack; writes benchmarks/serve.md.

Every server is a whole process (``structperc serve``, or ``serve_crfsuite_app.py serve``: the peer,
python-crfsuite behind the same Starlette, uvicorn and gunicorn, the same tokenizer and the same answer),
on 127.0.0.1 only. The load is locust's, headless (this file is also its locustfile), each timed job
``--runs`` times (medians reported), both services in the same run, one after the other per
configuration. Every loop is bounded in count and in time.

- jobs: en-ewt-upos and nl-conll2002-ner; one sentence (about 20 tokens) or one document (about 500
  tokens) of the test data's raw text a request; 1, 8 and 64 clients; 1 and 2 workers. Figures:
  requests/s, tokens/s, p50/p95/p99 latency, errors, and the memory of each worker (RSS, PSS and USS
  from /proc/PID/smaps_rollup) read during the last run at the most clients;
- start to /ready, with numba's cache warm and cold (an empty NUMBA_CACHE_DIR);
- the soak: ``--soak-seconds`` (default 600) at 70 % of the saturation measured above (one-sentence
  requests, 8 clients, 2 workers), errors and the workers' RSS over time;
- the swap under load: SIGHUP twice during a locust run, the model file replaced each time;
- the fuzz: ``--fuzz`` malformed requests on raw sockets (random bytes, truncated and deeply nested
  JSON, huge numbers, 10 MB bodies, slow bodies, wrong methods and headers);
- the cost of each part of a request (parse, tokenize, encode, decode, span scores, serialize), in
  process, and what the server adds to it (the latency at one client less the parts).

usage: python benchmarks/bench_serve.py [--mirror ../shared/corpora] [--quick] [--seconds S] [--runs R]
                                        [--soak-seconds S] [--fuzz N] [--out benchmarks/serve.md]
"""
import argparse
import csv
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "corpora" / "bench_serve"  # gitignored: the peer's models, payloads, locust's csv files
MODELS = ("en-ewt-upos", "nl-conll2002-ner")
PEER_TRAINING = {  # the peer trains on the named model's training file, read the same way
    "en-ewt-upos": ("ud_english_ewt/en_ewt-ud-train.conllu", "conllu", "upos", None),
    "nl-conll2002-ner": ("conll2002_nl/ned.train", "conll", "ner", "word,tag,ner"),
}
SETTLE_SECONDS = 2.0
TEST_FILES = {"en-ewt-upos": "ud_english_ewt/en_ewt-ud-test.conllu", "nl-conll2002-ner": "conll2002_nl/ned.testb"}


# ------------------------------------------------------------------------------------ locust's side
if __name__ != "__main__" and os.environ.get("BENCH_SERVE_PAYLOADS"):
    from locust import FastHttpUser, constant, constant_throughput, task

    _BODIES = json.loads(Path(os.environ["BENCH_SERVE_PAYLOADS"]).read_text())["bodies"]
    _RATE = float(os.environ.get("BENCH_SERVE_RATE") or 0)  # requests/s of one client; 0: back to back

    class Client(FastHttpUser):
        wait_time = constant_throughput(_RATE) if _RATE else constant(0)
        network_timeout = 60.0
        connection_timeout = 10.0

        @task
        def tag(self):
            body = _BODIES[random.randrange(len(_BODIES))]
            self.client.post("/v1/tag", data=body, headers={"Content-Type": "application/json"}, name="tag")


# ------------------------------------------------------------------------------------ processes
def python_env(**extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.update({k: str(v) for k, v in extra.items()})
    return env


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http(port, method, path, body=None, headers=None, timeout=30):
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


class Service:
    """A server process (its own process group) on a free port; ``ready_seconds``: from start to the
    first 200 of /ready. The first worker answers /ready before the others have forked and warmed up, so
    the service is handed over only once it has all its workers and ``SETTLE_SECONDS`` have passed: a
    client that connects earlier keeps its connection to the first worker."""

    def __init__(self, kind, model, workers, extra=(), env=None, timeout=300):
        self.kind, self.model, self.workers, self.port = kind, model, workers, free_port()
        if kind == "structperc":
            command = [sys.executable, "-m", "structperc", "serve", model, "--workers", str(workers), *extra]
        elif kind == "stack":
            command = [sys.executable, str(ROOT / "benchmarks" / "serve_crfsuite_app.py"), "stack", "--workers",
                       str(workers)]
        else:
            path = WORK / f"crfsuite-{model}.crfsuite"
            command = [sys.executable, str(ROOT / "benchmarks" / "serve_crfsuite_app.py"), "serve",
                       f"{model}={path}", "--workers", str(workers)]
        self.log = tempfile.NamedTemporaryFile("w+", prefix=f"bench-serve-{kind}-", suffix=".log", delete=False)
        start = time.perf_counter()
        self.process = subprocess.Popen(command + ["--port", str(self.port)], env=env or python_env(),
                                        stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{kind} {model} exited: {self.output()[-2000:]}")
            try:
                if http(self.port, "GET", "/ready", timeout=2)[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.05)
        else:
            self.stop()
            raise RuntimeError(f"{kind} {model} not ready in {timeout} s")
        self.ready_seconds = time.perf_counter() - start
        while len(self.workers_pids()) < workers and time.monotonic() < deadline:
            time.sleep(0.05)
        if workers > 1:
            time.sleep(SETTLE_SECONDS)

    def output(self):
        self.log.flush()
        return Path(self.log.name).read_text()

    def workers_pids(self):
        found = subprocess.run(["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True)
        return sorted(int(pid) for pid in found.stdout.split())

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(10)
        self.log.close()
        os.unlink(self.log.name)


def memory(pid):
    """{rss, pss, uss} in MiB of a process, from /proc/PID/smaps_rollup (USS: its private pages)."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value = line.split(":", 1)
        fields[name] = int(value.split()[0])
    return {"rss": fields["Rss"] / 1024, "pss": fields["Pss"] / 1024,
            "uss": (fields["Private_Clean"] + fields["Private_Dirty"]) / 1024}


def cpu_seconds(pids):
    """The CPU seconds (user and system) that the processes ``pids`` have used, from /proc/PID/stat; a
    process gone (a worker replaced by a swap) counts as None."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            return None
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def locust(service, payloads, clients, seconds, rate=0.0, sample_memory_at=None):
    """One headless locust run against ``service``: requests, errors, requests/s, p50/p95/p99 (ms), the
    workers' CPU ms a request (``cpu_ms``: the CPU time its worker processes used over the run, divided
    by the requests); with ``sample_memory_at`` (seconds into the run), the memory of the master and
    each worker then."""
    prefix = Path(tempfile.mkdtemp(prefix="bench-serve-locust-")) / "run"
    command = [sys.executable, "-m", "locust", "-f", __file__, "--headless", "-u", str(clients), "-r", str(clients),
               "-t", f"{round(seconds)}s", "--host", f"http://127.0.0.1:{service.port}", "--csv", str(prefix),
               "--only-summary", "--stop-timeout", "10", "--loglevel", "ERROR", "--exit-code-on-error", "0"]
    env = python_env(BENCH_SERVE_PAYLOADS=payloads, BENCH_SERVE_RATE=rate)
    sampled = {}

    def sample():
        time.sleep(sample_memory_at)
        sampled["master"] = memory(service.process.pid)
        sampled["workers"] = [memory(pid) for pid in service.workers_pids()]

    sampler = threading.Thread(target=sample) if sample_memory_at is not None else None
    if sampler:
        sampler.start()
    workers = service.workers_pids()
    cpu_before = cpu_seconds(workers)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=seconds + 120)
    cpu_after = cpu_seconds(workers)
    cpu_used = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    if sampler:
        sampler.join(seconds + 10)
    stats, failures = Path(f"{prefix}_stats.csv"), Path(f"{prefix}_failures.csv")
    rows = list(csv.DictReader(open(stats))) if stats.exists() else []
    failed = [f"{r['Occurrences']}× {r['Error']}" for r in csv.DictReader(open(failures))] if failures.exists() else []
    shutil.rmtree(prefix.parent, ignore_errors=True)
    total = next((r for r in rows if r["Name"] == "Aggregated"), None)
    if total is None or done.returncode != 0:
        raise RuntimeError(f"locust failed ({done.returncode}): {done.stderr[-2000:]}")
    return {"requests": int(total["Request Count"]), "errors": int(total["Failure Count"]),
            "rps": float(total["Requests/s"]), "p50": float(total["50%"]), "p95": float(total["95%"]),
            "p99": float(total["99%"]), "memory": sampled or None, "failures": failed,
            "cpu_ms": None if cpu_used is None else 1000 * cpu_used / max(1, int(total["Request Count"]))}


# ------------------------------------------------------------------------------------ data
def ensure_models(mirror):
    for name in (*MODELS, "en-ewt-xpos"):  # en-ewt-xpos: the file swapped in under load
        subprocess.run([sys.executable, "-m", "structperc", "models", "build", name, "--mirror", str(mirror),
                        "--quiet"], env=python_env(), check=True, capture_output=True, timeout=1800)
    for name, (corpus, format, label, columns) in PEER_TRAINING.items():
        path = WORK / f"crfsuite-{name}.crfsuite"
        if not path.exists():
            print(f"training the python-crfsuite peer of {name} ...", file=sys.stderr, flush=True)
            command = [sys.executable, str(ROOT / "benchmarks" / "serve_crfsuite_app.py"), "train",
                       str(Path(mirror) / corpus), format, label, str(path)]
            subprocess.run(command + (["--columns", columns] if columns else []), env=python_env(), check=True,
                           timeout=3600)


def test_texts(mirror, model):
    """The raw text of each test sentence: CoNLL-U's ``# text``; the words joined by spaces otherwise."""
    path = Path(mirror) / TEST_FILES[model]
    if path.suffix == ".conllu":
        return [line[len("# text = "):] for line in path.read_text(encoding="utf-8").splitlines()
                if line.startswith("# text = ")]
    blocks = path.read_text(encoding="latin-1").split("\n\n")
    return [" ".join(line.split()[0] for line in block.splitlines()
                     if line.strip() and not line.startswith("-DOCSTART"))
            for block in blocks if block.strip()]


def payload_files(mirror):
    """{(model, kind): path} of the request bodies: "sentence" (test sentences of 15 to 25 tokens) and
    "document" (consecutive test sentences, about 500 tokens together); each file holds the bodies and
    their mean token count (by structperc's tokenizer, which both services use)."""
    sys.path.insert(0, str(ROOT))
    from structperc.estimator.text import text_corpus

    out = {}
    for model in MODELS:
        texts = [t for t in test_texts(mirror, model) if t.strip()]
        counts = [int(text_corpus(t).sentence_offsets[-1]) for t in texts]
        sentences = [t for t, n in zip(texts, counts) if 15 <= n <= 25][:300]
        documents, current, size = [], [], 0
        for text, n in zip(texts, counts):
            current.append(text)
            size += n
            if size >= 500:
                documents.append(" ".join(current))
                current, size = [], 0
            if len(documents) == 40:
                break
        for kind, chosen in (("sentence", sentences), ("document", documents)):
            tokens = [int(text_corpus(t).sentence_offsets[-1]) for t in chosen]
            path = WORK / f"payload-{model}-{kind}.json"
            path.write_text(json.dumps({"tokens": statistics.mean(tokens),
                                        "bodies": [json.dumps({"model": model, "text": t}) for t in chosen]}))
            out[model, kind] = path
    return out


# ------------------------------------------------------------------------------------ the jobs
def median_of(runs, name):
    """The median of the runs' figure ``name``, over the runs that have it (None when none has)."""
    values = [r[name] for r in runs if r[name] is not None]
    return statistics.median(values) if values else None


def load_jobs(payloads, workers_list, clients_list, seconds, runs, report):
    """{(service, model, workers, kind, clients): {median figures, runs}} and the memory of each config."""
    results, memories = {}, {}
    for model in MODELS:
        for workers in workers_list:
            for kind_of_service in ("structperc", "crfsuite"):
                service = Service(kind_of_service, model, workers)
                try:
                    for kind in ("sentence", "document"):
                        tokens = json.loads(payloads[model, kind].read_text())["tokens"]
                        for clients in clients_list:
                            runs_out = []
                            for run in range(runs):
                                sample = seconds / 2 if (kind, clients, run) == ("sentence", max(clients_list),
                                                                                  runs - 1) else None
                                figures = locust(service, payloads[model, kind], clients, seconds,
                                                 sample_memory_at=sample)
                                if figures["memory"]:
                                    memories[kind_of_service, model, workers] = figures["memory"]
                                runs_out.append(figures)
                            key = (kind_of_service, model, workers, kind, clients)
                            results[key] = {name: median_of(runs_out, name)
                                            for name in ("rps", "p50", "p95", "p99", "cpu_ms")}
                            results[key]["tokens_s"] = results[key]["rps"] * tokens
                            results[key]["errors"] = sum(r["errors"] for r in runs_out)
                            results[key]["requests"] = sum(r["requests"] for r in runs_out)
                            report(f"{key}: {results[key]}")
                finally:
                    service.stop()
    if 2 in workers_list and 8 in clients_list:  # the stack alone: the ceiling of any service on it
        service = Service("stack", MODELS[0], 2)
        try:
            runs_out = [locust(service, payloads[MODELS[0], "sentence"], 8, seconds) for _ in range(runs)]
        finally:
            service.stop()
        key = ("stack", MODELS[0], 2, "sentence", 8)
        results[key] = {name: median_of(runs_out, name) for name in ("rps", "p50", "p95", "p99", "cpu_ms")}
        results[key]["errors"] = sum(r["errors"] for r in runs_out)
        report(f"{key}: {results[key]}")
    return results, memories


def startup(runs, report):
    """Start to /ready of structperc serve (both models, 2 workers) with numba's cache warm and cold, and
    of the peer, ``runs`` times each: {label: [seconds]}."""
    out = {"warm": [], "cold": [], "crfsuite": []}
    for run in range(runs):
        service = Service("structperc", MODELS[0], 2, extra=[MODELS[1]])
        out["warm"].append(service.ready_seconds)
        service.stop()
        cache = tempfile.mkdtemp(prefix="bench-serve-numba-")
        service = Service("structperc", MODELS[0], 2, extra=[MODELS[1]], env=python_env(NUMBA_CACHE_DIR=cache))
        out["cold"].append(service.ready_seconds)
        service.stop()
        shutil.rmtree(cache, ignore_errors=True)
        service = Service("crfsuite", MODELS[0], 2)
        out["crfsuite"].append(service.ready_seconds)
        service.stop()
        report(f"startup run {run + 1}: warm {out['warm'][-1]:.2f} s, cold {out['cold'][-1]:.2f} s, "
               f"crfsuite {out['crfsuite'][-1]:.2f} s")
    return out


def soak(payloads, rate, seconds, report):
    """structperc serve, 2 workers, en-ewt-upos, one-sentence requests at ``rate`` requests/s over 8
    clients for ``seconds``: the locust figures and each worker's RSS every 10 s."""
    service = Service("structperc", MODELS[0], 2)
    samples, stop = [], threading.Event()

    def sample():
        started = time.monotonic()
        while not stop.wait(10) and time.monotonic() - started < seconds + 60:
            samples.append([memory(pid)["rss"] for pid in service.workers_pids()])

    sampler = threading.Thread(target=sample)
    try:
        sampler.start()
        figures = locust(service, payloads[MODELS[0], "sentence"], 8, seconds, rate=rate / 8)
    finally:
        stop.set()
        sampler.join(30)
        service.stop()
    figures["rss"] = samples
    report(f"soak: {figures['requests']} requests, {figures['errors']} errors, RSS {samples[0]} -> {samples[-1]}")
    return figures


def swap_under_load(payloads, seconds, report):
    """structperc serve on a copy of en-ewt-upos's file, 2 workers, 8 clients for ``seconds``; the file
    replaced by en-ewt-xpos's at a third of the run and by en-ewt-upos's again at two thirds, each time
    with SIGHUP. The locust figures and the server's swap lines."""
    from structperc.models import cache

    folder = Path(tempfile.mkdtemp(prefix="bench-serve-swap-"))
    served = folder / "model.npz"
    shutil.copyfile(cache.model_file("en-ewt-upos"), served)
    service = Service("structperc", str(served), 2)

    def swapper():
        for at, source in ((seconds / 3, "en-ewt-xpos"), (2 * seconds / 3, "en-ewt-upos")):
            time.sleep(at - (seconds / 3 if source == "en-ewt-upos" else 0))
            shutil.copyfile(cache.model_file(source), folder / "next.npz")
            os.replace(folder / "next.npz", served)
            service.process.send_signal(signal.SIGHUP)

    thread = threading.Thread(target=swapper)
    try:
        thread.start()
        figures = locust(service, payloads[MODELS[0], "sentence"], 8, seconds)
        thread.join(seconds)
        time.sleep(1)
        figures["swaps"] = [line for line in service.output().splitlines() if "swapped in" in line or "refused" in line]
    finally:
        service.stop()
        shutil.rmtree(folder, ignore_errors=True)
    report(f"swap: {figures['requests']} requests, {figures['errors']} errors {figures['failures']}, "
           f"{figures['swaps']}")
    return figures


# ------------------------------------------------------------------------------------ the fuzz
def exchange(port, chunks, pause=0.0, timeout=15.0):
    """Send ``chunks`` (pausing ``pause`` s between them), read until the server closes or ``timeout``;
    the answer's status code, or None when it closed without one."""
    deadline = time.monotonic() + timeout
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        for i, chunk in enumerate(chunks):
            try:
                connection.sendall(chunk)
            except OSError:  # it answered (413, 408) and closed: read the answer
                break
            if pause and i + 1 < len(chunks):
                time.sleep(pause)
            if time.monotonic() > deadline:
                break
        data = b""
        while time.monotonic() < deadline:
            try:
                chunk = connection.recv(65536)
            except (ConnectionResetError, TimeoutError, socket.timeout):
                break
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data and len(data) > 12:
                head = data.split(b"\r\n\r\n", 1)[0].lower()
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.startswith(b"content-length:")), None)
                if length is not None and len(data.split(b"\r\n\r\n", 1)[1]) >= length:
                    break
    return int(data[9:12]) if data.startswith(b"HTTP/1.1 ") else None


def fuzz_cases(rng, n):
    """n malformed exchanges (label, chunks, pause)."""
    good = json.dumps({"model": "en-ewt-upos", "text": "Mary left early. She was tired."}).encode()

    def post(path, body, content_type="application/json", length=None, extra=""):
        length = len(body) if length is None else length
        return (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n"
                f"{extra}Connection: close\r\n\r\n").encode() + body

    makers = [
        ("random bytes", lambda: [post("/v1/tag", rng.randbytes(rng.randrange(1, 2000)))]),
        ("random request line", lambda: [rng.randbytes(rng.randrange(1, 300)) + b"\r\n\r\n"]),
        ("truncated JSON", lambda: [post("/v1/tag", good[:rng.randrange(1, len(good))])]),
        ("deep nesting", lambda: [post("/v1/tag", b"[" * rng.randrange(1000, 1_000_000))]),
        ("deep objects", lambda: [post("/v1/tag", b'{"a":' * rng.randrange(1000, 100_000))]),
        ("huge number", lambda: [post("/v1/tag", b'{"model": "en-ewt-upos", "k": ' + b"9" * rng.randrange(5000, 500_000)
                                      + b', "text": "a"}')]),
        ("huge float", lambda: [post("/v1/tag", b'{"k": 1e' + b"9" * rng.randrange(10, 5000) + b"}")]),
        ("10 MB body", lambda: [post("/v1/tag", b"x" * (10 << 20))]),
        ("10 MB chunked", lambda: [b"POST /v1/tag HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                   b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                                   + b"".join(b"100000\r\n" + b"y" * (1 << 20) + b"\r\n" for _ in range(10))
                                   + b"0\r\n\r\n"]),
        ("wrong types", lambda: [post("/v1/tag", json.dumps(rng.choice([
            {"text": 5}, {"sentences": "a"}, {"sentences": [[1, 2]]}, {"sentences": [[""]]}, {"k": "2", "text": "a"},
            {"marginals": "yes", "text": "a"}, {"model": None, "text": None}, [], "text", None, {"text": "a" * 10,
                                                                                               "k": 0}])).encode())]),
        ("not UTF-8", lambda: [post("/v1/tag", b'{"text": "' + bytes([rng.randrange(128, 256)]) * 5 + b'"}')]),
        ("lone surrogates", lambda: [post("/v1/tag", b'{"text": "\\ud800\\udfff\\ud800 a"}')]),
        ("wrong method", lambda: [(f"{rng.choice(['PUT', 'DELETE', 'PATCH', 'TRACE', 'GET'])} "
                                   f"{rng.choice(['/v1/tag', '/v1/explain', '/process', '/metrics'])} HTTP/1.1\r\n"
                                   f"Host: x\r\nConnection: close\r\n\r\n").encode()]),
        ("bad content length", lambda: [post("/v1/tag", good, length=rng.choice(["abc", "-5", "1e3"]))]),
        ("wrong content type", lambda: [post("/v1/tag", good, rng.choice(["text/plain", "application/xml", "",
                                                                           "multipart/form-data"]))]),
        ("form garbage", lambda: [post("/process", rng.randbytes(rng.randrange(1, 500)),
                                       "application/x-www-form-urlencoded")]),
        ("multipart garbage", lambda: [post("/process", rng.randbytes(rng.randrange(1, 500)),
                                            "multipart/form-data; boundary=xyz")]),
        ("explain out of range", lambda: [post("/v1/explain", json.dumps(
            {"tokens": ["a", "b"], "token": rng.choice([-1, 2, 10 ** 30, 1.5, True])}).encode())]),
        ("long sentence", lambda: [post("/v1/tag", json.dumps({"sentences": [["w"] * 5000]}).encode())]),
        ("long header", lambda: [b"GET /live HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * (200 << 10)
                                 + b"\r\nConnection: close\r\n\r\n"]),
    ]
    cases = []
    for i in range(n):
        label, make = makers[i % len(makers)]
        cases.append((label, make(), 0.0))
    for i in range(max(8, n // 100)):  # slow bodies: a byte every 0.5 s, longer than --body-seconds 2
        head = post("/v1/tag", b"", length=200)
        cases.append(("slow body", [head] + [b"{"] * 10, 0.5))
    return cases


def fuzz(n, report):
    """structperc serve, 2 workers, en-ewt-upos, --body-seconds 2: ``n`` malformed requests and the slow
    bodies, 8 at a time; statuses, 5xx, crashes (a worker replaced, the master gone), memory."""
    from concurrent.futures import ThreadPoolExecutor

    rng = random.Random(0)
    service = Service("structperc", MODELS[0], 2, extra=["--body-seconds", "2"])
    try:
        workers_before = service.workers_pids()
        memory_before = [memory(pid)["rss"] for pid in workers_before]
        cases = fuzz_cases(rng, n)
        started = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(lambda case: (case[0], exchange(service.port, case[1], case[2])), cases))
        seconds = time.perf_counter() - started
        workers_after = service.workers_pids()
        memory_after = [memory(pid)["rss"] for pid in workers_after]
        alive = service.process.poll() is None and http(service.port, "GET", "/ready")[0] == 200
    finally:
        service.stop()
    by_label = {}
    for label, status in statuses:
        by_label.setdefault(label, {}).setdefault(str(status), 0)
        by_label[label][str(status)] += 1
    figures = {"requests": len(cases), "seconds": seconds, "by_label": by_label,
               "5xx": sum(1 for _, s in statuses if s is not None and s >= 500),
               "no_answer": sum(1 for _, s in statuses if s is None),
               "crashes": (0 if workers_before == workers_after else len(set(workers_before) - set(workers_after)))
               + (0 if alive else 1), "rss_before": memory_before, "rss_after": memory_after}
    report(f"fuzz: {figures['requests']} requests in {seconds:.0f} s, 5xx {figures['5xx']}, "
           f"crashes {figures['crashes']}, RSS {memory_before} -> {memory_after}")
    return figures


# ------------------------------------------------------------------------------------ costs
def median_seconds(job, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def costs(payloads, results, repeat=30):
    """{(service, model, kind): {part: ms}}: each part of a request timed in process (medians of
    ``repeat``), and the server's share: the median latency at one client, 2 workers, less the parts."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import pycrfsuite
    from serve_crfsuite_app import sentence_features

    from structperc.estimator.text import add_input_columns, tag_corpus
    from structperc.estimator.text import text_corpus as split_text
    from structperc.serve import tagging
    from structperc.serve.app import TaggedResponse
    from structperc.serve.served import load_served

    out = {}
    for model in MODELS:
        served = load_served(model)
        peer = pycrfsuite.Tagger()
        peer.open(str(WORK / f"crfsuite-{model}.crfsuite"))
        for kind in ("sentence", "document"):
            bodies = json.loads(payloads[model, kind].read_text())["bodies"][:5]
            parts, peer_parts = {}, {}
            for name in ("parse", "tokenize", "encode", "decode", "span scores", "serialize"):
                parts[name] = peer_parts[name] = 0.0
            for body in bodies:
                text = json.loads(body)["text"]
                corpus = add_input_columns(served.tagger, split_text(text))
                encode = median_seconds(lambda: served.tagger.encode_input(corpus), repeat)
                predict = median_seconds(lambda: served.tagger.predict_corpus(corpus), repeat)
                tagged = median_seconds(lambda: tag_corpus(served.tagger, corpus), repeat)
                sentence_texts = [text] * corpus.n_sentences
                answer = median_seconds(lambda: tagging.answer(served, corpus, tagging.TagOptions(), sentence_texts),
                                        repeat)
                sentences = tagging.answer(served, corpus, tagging.TagOptions(), sentence_texts)
                parts["parse"] += median_seconds(lambda: json.loads(body), repeat)
                parts["tokenize"] += median_seconds(lambda: split_text(text), repeat)
                parts["encode"] += encode
                parts["decode"] += max(0.0, predict - encode)
                parts["span scores"] += max(0.0, tagged - predict)
                parts["serialize"] += max(0.0, answer - tagged) + median_seconds(
                    lambda: TaggedResponse({"model": model, "sentences": sentences}), repeat)
                words, offsets = corpus.columns["word"], corpus.sentence_offsets.tolist()
                features = [sentence_features(words[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]
                peer_parts["parse"] += median_seconds(lambda: json.loads(body), repeat)
                peer_parts["tokenize"] += median_seconds(lambda: split_text(text), repeat)
                peer_parts["encode"] += median_seconds(
                    lambda: [sentence_features(words[a:b]) for a, b in zip(offsets[:-1], offsets[1:])], repeat)
                peer_parts["decode"] += median_seconds(lambda: [peer.tag(f) for f in features], repeat)
                peer_parts["serialize"] += median_seconds(
                    lambda: json.dumps({"model": model, "sentences": sentences}), repeat)
            for service, figures in (("structperc", parts), ("crfsuite", peer_parts)):
                ms = {name: 1000 * value / len(bodies) for name, value in figures.items()}
                latency = results.get((service, model, 2, kind, 1), {}).get("p50")
                ms["server (p50 at 1 client less the parts)"] = None if latency is None else latency - sum(ms.values())
                out[service, model, kind] = ms
    return out


# ------------------------------------------------------------------------------------ the page
def ratio(a, b):
    return a / b if b else float("nan")


def cpu_floor(results, cost_figures, stack):
    """Lines on what bounds the ratio of one-sentence requests/s (8 clients, 2 workers): the workers'
    CPU a request of each service, against what both spend alike (the stack's, and the tokenizer's
    that both call)."""
    lines = []
    for model in MODELS:
        ours = results.get(("structperc", model, 2, "sentence", 8))
        peer = results.get(("crfsuite", model, 2, "sentence", 8))
        tokenize = (cost_figures or {}).get(("structperc", model, "sentence"), {}).get("tokenize")
        if not (ours and peer and tokenize is not None and None not in (ours["cpu_ms"], peer["cpu_ms"],
                                                                         stack["cpu_ms"])):
            continue
        shared = stack["cpu_ms"] + tokenize
        lines.append(f"- {model}: the workers' CPU a one-sentence request is {ours['cpu_ms']:.3f} ms (structperc) "
                     f"against {peer['cpu_ms']:.3f} ms (the peer), {ratio(peer['cpu_ms'], ours['cpu_ms']):.2f}× "
                     f"less. Both spend the stack's {stack['cpu_ms']:.3f} ms and the tokenizer's {tokenize:.3f} ms: "
                     f"{shared:.3f} ms. Twice the peer's rate on the same CPU would leave structperc "
                     f"{peer['cpu_ms'] / 2 - shared:.3f} ms a request for all the rest (encode, decode, span scores, "
                     f"serialize, the app's own work), against the {ours['cpu_ms'] - shared:.3f} ms it spends.")
    return ["What bounds the one-sentence ratio:", "", *lines, ""] if lines else []


def write_markdown(path, settings, results, memories, start, soak_figures, swap_figures, fuzz_figures, cost_figures,
                   workers_list, clients_list):
    lines = ["# `structperc serve` under load, beside python-crfsuite behind the same stack", "",
             "Written by `benchmarks/bench_serve.py` (`make bench-serve`); every figure below was measured by it "
             "in one run.",
             "", f"Run: {settings}", ""]
    key = ("sentence", 8)
    targets = []
    for model in MODELS:
        ours = results.get(("structperc", model, 2, *key))
        peer = results.get(("crfsuite", model, 2, *key))
        if ours and peer:
            targets.append((f"one-sentence requests, 8 clients, 2 workers: requests/s ({model})", "≥ 2× the peer's",
                            f"{ours['rps']:.0f} against {peer['rps']:.0f}: {ratio(ours['rps'], peer['rps']):.2f}×",
                            ratio(ours["rps"], peer["rps"]) >= 2))
            targets.append((f"the same: p99 latency ({model})", "≤ the peer's",
                            f"{ours['p99']:.0f} ms against {peer['p99']:.0f} ms", ours["p99"] <= peer["p99"]))
        ours = results.get(("structperc", model, 2, "document", 8))
        peer = results.get(("crfsuite", model, 2, "document", 8))
        if ours and peer:
            targets.append((f"500-token documents, 8 clients, 2 workers: tokens/s ({model})", "≥ 3× the peer's",
                            f"{ours['tokens_s']:,.0f} against {peer['tokens_s']:,.0f}: "
                            f"{ratio(ours['tokens_s'], peer['tokens_s']):.2f}×",
                            ratio(ours["tokens_s"], peer["tokens_s"]) >= 3))
    for model in MODELS:
        sampled = memories.get(("structperc", model, 2))
        if sampled and len(sampled["workers"]) == 2:
            first, second = sampled["workers"]
            targets.append((f"the second worker's USS against the first's RSS ({model})", "≤ 25 %",
                            f"{second['uss']:.0f} MiB of {first['rss']:.0f} MiB: "
                            f"{100 * second['uss'] / first['rss']:.0f} %",
                            second["uss"] <= 0.25 * first["rss"]))
    if start:
        warm, cold = statistics.median(start["warm"]), statistics.median(start["cold"])
        targets.append(("start to /ready, numba cache warm / cold (both models, 2 workers)", "≤ 5 s / ≤ 20 s",
                        f"{warm:.1f} s / {cold:.1f} s", warm <= 5 and cold <= 20))
    if soak_figures:
        rss = soak_figures["rss"]
        growth = max(100 * (last - first) / first for first, last in zip(rss[0], rss[-1])) if len(rss) > 1 else 0.0
        targets.append((f"the soak ({soak_figures['seconds']:.0f} s at {soak_figures['rate']:.0f} requests/s)",
                        "0 errors; RSS grows ≤ 5 %",
                        f"{soak_figures['errors']} errors in {soak_figures['requests']:,} requests; RSS grew "
                        f"{growth:+.1f} % at most", soak_figures["errors"] == 0 and growth <= 5))
    if swap_figures:
        targets.append(("the swap under load (two SIGHUP swaps, 8 clients)", "0 failed requests",
                        f"{swap_figures['errors']} failed of {swap_figures['requests']:,}; "
                        f"{sum('swapped in' in s for s in swap_figures['swaps'])} swaps",
                        swap_figures["errors"] == 0))
    if fuzz_figures:
        grew = max(after - before for before, after in zip(fuzz_figures["rss_before"], fuzz_figures["rss_after"]))
        targets.append((f"the fuzz ({fuzz_figures['requests']:,} malformed requests)",
                        "0 answers of 5xx, 0 crashes, memory bounded",
                        f"{fuzz_figures['5xx']} of 5xx, {fuzz_figures['crashes']} crashes, worker RSS "
                        f"{'/'.join(f'{x:.0f}' for x in fuzz_figures['rss_before'])} → "
                        f"{'/'.join(f'{x:.0f}' for x in fuzz_figures['rss_after'])} MiB",
                        fuzz_figures["5xx"] == 0 and fuzz_figures["crashes"] == 0 and grew < 100))
    lines += ["## Targets of issue 39", "", "| measure | target | measured | met |", "|---|---|---|---|"]
    lines += [f"| {m} | {t} | {v} | {'yes' if ok else '**no**'} |" for m, t, v, ok in targets]
    lines += ["", "The wheel test's line is not this benchmark's: it runs in `make test`.", ""]
    stack = results.get(("stack", MODELS[0], 2, "sentence", 8))
    if stack:
        peers = [(model, results.get(("crfsuite", model, 2, "sentence", 8))) for model in MODELS]
        lines += [f"The stack alone (`serve_crfsuite_app.py stack`: the same Starlette, uvicorn and gunicorn, "
                  f"answering each one-sentence body with no sentences after reading its JSON) answered "
                  f"{stack['rps']:.0f} requests/s at 8 clients and 2 workers (p99 {stack['p99']:.0f} ms), "
                  f"{stack['errors']} errors, its workers' CPU {stack['cpu_ms']:.3f} ms a request: the most that any "
                  f"service on this stack answers on this machine, whatever its tagger. Twice the peer's "
                  f"requests/s would be "
                  + ", ".join(f"{2 * peer['rps'] / stack['rps']:.2f}× the stack's ({model})"
                              for model, peer in peers if peer) + ".", ""]
        lines += cpu_floor(results, cost_figures, stack)
    lines += ["## Load (locust, headless; medians of the runs)", "",
              "The workers' CPU is the CPU time of the service's worker processes over a run divided by its "
              "requests (locust and the master not counted).", "",
              "| model | workers | request | clients | service | requests/s | tokens/s | p50 ms | p95 ms | p99 ms | "
              "workers' CPU ms a request | errors | ratio requests/s |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for model in MODELS:
        for workers in workers_list:
            for kind in ("sentence", "document"):
                for clients in clients_list:
                    for service in ("structperc", "crfsuite"):
                        r = results.get((service, model, workers, kind, clients))
                        if r is None:
                            continue
                        peer = results.get(("crfsuite", model, workers, kind, clients))
                        share = f"{ratio(r['rps'], peer['rps']):.2f}×" if service == "structperc" and peer else ""
                        cpu = "" if r["cpu_ms"] is None else f"{r['cpu_ms']:.3f}"
                        lines.append(f"| {model} | {workers} | {kind} | {clients} | {service} | {r['rps']:.1f} | "
                                     f"{r['tokens_s']:,.0f} | {r['p50']:.0f} | {r['p95']:.0f} | {r['p99']:.0f} | "
                                     f"{cpu} | {r['errors']} of {r['requests']:,} | {share} |")
    lines += ["", "## Memory of each process (MiB, /proc/PID/smaps_rollup, read during the last run at the most "
              "clients, one-sentence requests)", "",
              "| service | model | workers | process | RSS | PSS | USS |", "|---|---|---|---|---|---|---|"]
    for (service, model, workers), sampled in sorted(memories.items()):
        rows = [("master", sampled["master"])] + [(f"worker {i + 1}", w) for i, w in enumerate(sampled["workers"])]
        for name, m in rows:
            lines.append(f"| {service} | {model} | {workers} | {name} | {m['rss']:.0f} | {m['pss']:.0f} | "
                         f"{m['uss']:.0f} |")
    if start:
        lines += ["", "## Start to /ready (s; each run a whole process)", "",
                  "| start | runs | median |", "|---|---|---|"]
        for label, name in (("warm", "structperc serve, both models, numba's cache warm"),
                            ("cold", "the same, numba's cache empty (NUMBA_CACHE_DIR)"),
                            ("crfsuite", "the peer, en-ewt-upos")):
            runs = ", ".join(f"{x:.2f}" for x in start[label])
            lines.append(f"| {name} | {runs} | {statistics.median(start[label]):.2f} |")
    if soak_figures:
        lines += ["", "## Soak", "", f"{soak_figures['seconds']:.0f} s of one-sentence en-ewt-upos requests at "
                  f"{soak_figures['rate']:.0f} requests/s (70 % of the saturation measured above), 8 clients, "
                  f"2 workers: {soak_figures['requests']:,} requests, {soak_figures['errors']} errors, p50 "
                  f"{soak_figures['p50']:.0f} ms, p99 {soak_figures['p99']:.0f} ms. Workers' RSS (MiB) every 10 s: "
                  + "; ".join("/".join(f"{x:.0f}" for x in row) for row in soak_figures["rss"]) + "."]
    if swap_figures:
        lines += ["", "## Swap under load", "", f"{swap_figures['seconds']:.0f} s, 8 clients, 2 workers: "
                  f"{swap_figures['requests']:,} requests, {swap_figures['errors']} failed, p99 "
                  f"{swap_figures['p99']:.0f} ms; failures: {'; '.join(swap_figures['failures']) or 'none'}. "
                  f"The server's lines:", ""]
        lines += [f"    {s}" for s in swap_figures["swaps"]]
    if fuzz_figures:
        lines += ["", "## Fuzz", "", f"{fuzz_figures['requests']:,} malformed requests, 8 at a time, in "
                  f"{fuzz_figures['seconds']:.0f} s (the server started with --body-seconds 2); answers by kind "
                  f"(None: the server closed the connection without an answer, as uvicorn does for a request "
                  f"line or header it cannot parse):", "", "| request | answers |", "|---|---|"]
        for label, counts in fuzz_figures["by_label"].items():
            lines.append(f"| {label} | {', '.join(f'{s}: {c}' for s, c in sorted(counts.items()))} |")
    if cost_figures:
        parts = list(next(iter(cost_figures.values())))
        lines += ["", "## The cost of each part of a request (ms, in process, medians)", "",
                  "Encode is structperc's feature encoding, or the peer's Python features; decode is Viterbi "
                  "(structperc) or CRFsuite's tagger; span scores are structperc's span probabilities (crf "
                  "models); serialize is building the answer and writing its JSON (orjson for structperc, the "
                  "standard library's json, as Starlette's JSONResponse, for the peer). The server's share is the "
                  "median latency at one client less the parts.", "",
                  "| service | model | request | " + " | ".join(parts) + " |",
                  "|---|---|---|" + "---|" * len(parts)]
        for (service, model, kind), ms in cost_figures.items():
            lines.append(f"| {service} | {model} | {kind} | "
                         + " | ".join("" if v is None else f"{v:.2f}" for v in ms.values()) + " |")
    Path(path).write_text("\n".join(lines) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", default=str(ROOT.parent / "shared" / "corpora"))
    parser.add_argument("--quick", action="store_true", help="5 s jobs; 2 workers at 1, 8, 64 clients, 1 worker "
                                                             "at 8; a 60 s soak, a 300-request fuzz")
    parser.add_argument("--seconds", type=float, default=15.0, help="length of one locust run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--clients", default="1,8,64")
    parser.add_argument("--soak-seconds", type=float, default=600.0)
    parser.add_argument("--swap-seconds", type=float, default=30.0)
    parser.add_argument("--fuzz", type=int, default=1200)
    parser.add_argument("--skip", default="", help="comma-separated parts to leave out: load,startup,soak,swap,"
                                                   "fuzz,costs")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "serve.md"))
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.soak_seconds, args.fuzz = 5.0, 60.0, 300
    skip = set(args.skip.split(",")) - {""}
    workers_list = [int(w) for w in args.workers.split(",")]
    clients_list = [int(c) for c in args.clients.split(",")]
    WORK.mkdir(parents=True, exist_ok=True)
    log = WORK / "bench_serve.log"

    def report(line):
        print(line, file=sys.stderr, flush=True)
        with open(log, "a") as handle:
            handle.write(line + "\n")

    ensure_models(args.mirror)
    payloads = payload_files(args.mirror)
    settings = (f"`{' '.join(['python benchmarks/bench_serve.py', *(argv if argv is not None else sys.argv[1:])])}`"
                f" — {args.runs} runs of {args.seconds:g} s a job, workers {args.workers}, clients {args.clients}; "
                f"{os.cpu_count()} cores shared with locust (one process) and whatever else ran; mean tokens a "
                f"request: " + ", ".join(f"{m} {k} {json.loads(p.read_text())['tokens']:.0f}"
                                         for (m, k), p in payloads.items()))
    results, memories = ({}, {}) if "load" in skip else load_jobs(payloads, workers_list, clients_list,
                                                                   args.seconds, args.runs, report)
    start = None if "startup" in skip else startup(args.runs, report)
    soak_figures = swap_figures = fuzz_figures = cost_figures = None
    if "soak" not in skip:
        saturation = results.get(("structperc", MODELS[0], 2, "sentence", 8), {}).get("rps")
        if saturation:
            soak_figures = soak(payloads, 0.7 * saturation, args.soak_seconds, report)
            soak_figures.update(seconds=args.soak_seconds, rate=0.7 * saturation)
    if "swap" not in skip:
        swap_figures = swap_under_load(payloads, args.swap_seconds, report)
        swap_figures["seconds"] = args.swap_seconds
    if "fuzz" not in skip:
        fuzz_figures = fuzz(args.fuzz, report)
    if "costs" not in skip:
        cost_figures = costs(payloads, results)
    write_markdown(args.out, settings, results, memories, start, soak_figures, swap_figures, fuzz_figures,
                   cost_figures, workers_list, clients_list)
    report(f"wrote {args.out}")


if __name__ == "__main__":
    main()
