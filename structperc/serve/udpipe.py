"""UDPipe 1's REST API, so that its clients work unchanged: ``GET /models`` and ``/process`` (GET with a
query, or POST with form fields, urlencoded or multipart).

``/process`` takes ``model`` (default: the first model served), ``data``, ``input`` (conllu, the default,
horizontal: a sentence a line, tokens split by spaces; vertical: a token a line, a blank line between
sentences), ``tokenizer`` (when present, ``data`` is raw text and ``input`` is ignored), ``tagger``
(tagging is what this server does: always on), ``parser`` (accepted; nothing here parses, HEAD and
DEPREL stay "_"), ``output`` (conllu only). It answers ``{"model", "acknowledgements", "result"}``, the
CoNLL-U in ``result`` (``tagging.conllu``); the words of CoNLL-U input are tagged afresh.
"""
from __future__ import annotations

from urllib.parse import parse_qsl

from structperc.serve.errors import ApiError
from structperc.serve.payloads import content_type, decode, served_model
from structperc.serve.tagging import text_corpus, tokens_corpus

FIELDS = {"model", "data", "input", "tokenizer", "tagger", "parser", "output"}
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def models_answer(models) -> dict:
    return {"models": {name: ["tokenizer", "tagger"] for name in models.names()}, "default_model": models.default}


async def form_fields(request, body: bytes) -> dict:
    """The fields of a ``/process`` request: its query (GET), or its form (POST; 415 for another type)."""
    if request.method == "GET":
        return dict(request.query_params)
    kind = content_type(request)
    if kind == "application/x-www-form-urlencoded":
        try:
            return dict(parse_qsl(body.decode("ascii"), keep_blank_values=True, encoding="utf-8", errors="strict"))
        except UnicodeDecodeError:
            raise ApiError(400, "encoding", "the form is not UTF-8") from None
    if kind == "multipart/form-data":
        from starlette.requests import Request

        async def replay():
            return {"type": "http.request", "body": body, "more_body": False}

        try:
            form = await Request(request.scope, replay).form()
        except (ValueError, AssertionError, KeyError) as error:  # python-multipart's and Starlette's errors
            raise ApiError(400, "bad_form", f"not a multipart form: {error}") from None
        fields = {}
        for key, value in form.multi_items():
            fields[key] = decode(await value.read()) if hasattr(value, "read") else value
        return fields
    raise ApiError(415, "unsupported_media_type", f"send the fields as {' or '.join(FORM_TYPES)}")


def conllu_words(data: str) -> list[list[str]]:
    """The word forms of CoNLL-U, per sentence (multiword ranges and empty nodes left out)."""
    sentences, words = [], []
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            if words:
                sentences.append(words)
                words = []
        elif not line.startswith("#"):
            fields = line.split("\t")
            if len(fields) != 10:
                raise ApiError(400, "bad_input", f"CoNLL-U line {number}: {len(fields)} fields, not 10")
            if fields[0].isdigit():
                words.append(fields[1])
    if words:
        sentences.append(words)
    return sentences


def input_corpus(fields: dict):
    """The Corpus of ``data`` as ``tokenizer`` and ``input`` say, and whether its offsets are into ``data``."""
    data = fields.get("data", "")
    if "tokenizer" in fields:
        return text_corpus(data)
    kind = fields.get("input", "conllu")
    if kind == "horizontal":
        sentences = [line.split() for line in data.splitlines() if line.split()]
    elif kind == "vertical":
        sentences = [block.split() for block in data.replace("\r\n", "\n").split("\n\n") if block.split()]
    elif kind == "conllu":
        sentences = conllu_words(data)
    else:
        raise ApiError(400, "bad_input", f"unknown input format {kind[:40]!r}: conllu, horizontal or vertical "
                                         f"(or tokenizer= for raw text)")
    for i, sentence in enumerate(sentences, 1):
        for token in sentence:
            if any(c.isspace() for c in token):
                raise ApiError(400, "bad_input", f"sentence {i}: a token holds white space")
    return tokens_corpus(sentences)


def process_request(fields: dict, models):
    """(the ServedModel, its acknowledgements) of a ``/process`` request's fields, checked."""
    unknown = sorted(set(fields) - FIELDS)
    if unknown:
        raise ApiError(400, "bad_request",
                       f"unknown field {unknown[0][:40]!r}; the fields are {', '.join(sorted(FIELDS))}")
    if fields.get("output", "conllu") != "conllu":
        raise ApiError(400, "bad_request", "output: only conllu is written here")
    name = fields.get("model") or models.default
    served = served_model(models, name)
    licence = served.description.get("licence")
    acknowledgements = ["structperc serve"] + ([f"{served.name}: {licence}"] if licence else [])
    return served, acknowledgements
