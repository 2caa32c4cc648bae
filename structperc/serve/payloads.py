"""Reading a request: its content type, its JSON, and the fields of ``/v1/tag`` and ``/v1/explain``, each
error a 4xx ``ApiError`` that says what was wrong."""
from __future__ import annotations

import json

from structperc.serve.errors import ApiError
from structperc.serve.served import refusal
from structperc.serve.tagging import TagOptions

TAG_FIELDS = {"model", "text", "sentences", "k", "marginals", "span_scores"}
EXPLAIN_FIELDS = {"model", "tokens", "token"}


def content_type(request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def require_type(request, *types):
    if content_type(request) not in types:
        raise ApiError(415, "unsupported_media_type", f"send the body as {' or '.join(types)} (Content-Type: "
                                                      f"{content_type(request) or 'none'})")


def decode(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ApiError(400, "encoding", f"the body is not UTF-8 (byte {error.start})") from None


def parse_json(body: bytes) -> dict:
    """The JSON object of a body: 400 for text that is not UTF-8, not JSON (deep nesting and numbers too
    long to read included), or not an object."""
    text = decode(body)
    try:
        value = json.loads(text)
    except RecursionError:
        raise ApiError(400, "bad_json", "the JSON is nested too deeply") from None
    except ValueError as error:  # JSONDecodeError, and an integer of more digits than Python reads
        raise ApiError(400, "bad_json", f"not JSON: {error}") from None
    if not isinstance(value, dict):
        raise ApiError(400, "bad_request", f"the body must be a JSON object, not {type(value).__name__}")
    return value


def check_fields(payload: dict, allowed: set):
    unknown = sorted(set(payload) - allowed)
    if unknown:
        raise ApiError(400, "bad_request", f"unknown field {unknown[0]!r}; the fields are {', '.join(sorted(allowed))}")


def served_model(models, name):
    """The ServedModel a request names: 404 for an unknown name; 400 when none is named and several
    are served."""
    if name is not None and not isinstance(name, str):
        raise ApiError(400, "bad_request", "model must be a string")
    served = models.get(name)
    if served is None:
        if name is None:
            raise ApiError(400, "bad_request", f"name a model: this server has {', '.join(models.names())}")
        raise ApiError(404, "unknown_model",
                       f"no model {name[:100]!r} here; the models are {', '.join(models.names())}")
    return served


def check_encodable(text: str, what: str) -> str:
    """``text`` when it is Unicode that UTF-8 can hold: JSON's \\ud800 escapes give lone surrogates,
    which no answer could carry."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ApiError(400, "encoding", f"{what}: a lone surrogate (\\u{ord(text[error.start]):04x}) is no "
                                        f"character") from None
    return text


def token_list(value, what) -> list[str]:
    if not isinstance(value, list) or not value:
        raise ApiError(400, "bad_request", f"{what} must be a non-empty list of tokens (strings)")
    for token in value:
        if not isinstance(token, str) or not token or token != token.strip() or any(c.isspace() for c in token):
            raise ApiError(400, "bad_request", f"{what}: a token must be a non-empty string without white space, "
                                               f"got {json.dumps(token)[:60]}")
        check_encodable(token, what)
    return value


def tag_request(payload: dict, models, limits):
    """(the ServedModel, the text or None, the sentences or None, TagOptions) of a ``/v1/tag`` body."""
    check_fields(payload, TAG_FIELDS)
    served = served_model(models, payload.get("model"))
    text, sentences = payload.get("text"), payload.get("sentences")
    if (text is None) == (sentences is None):
        raise ApiError(400, "bad_request", "give either text (a string) or sentences (lists of tokens)")
    if text is not None and not isinstance(text, str):
        raise ApiError(400, "bad_request", "text must be a string")
    if text is not None:
        check_encodable(text, "text")
    if sentences is not None:
        if not isinstance(sentences, list):
            raise ApiError(400, "bad_request", "sentences must be a list of lists of tokens")
        sentences = [token_list(s, f"sentence {i + 1}") for i, s in enumerate(sentences)]
    k = payload.get("k")
    if k is not None:
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= limits.max_k:
            raise ApiError(400, "bad_request", f"k must be an integer from 1 to {limits.max_k}")
        if not served.description["kbest"]:
            raise ApiError(400, "unsupported", refusal(served, "kbest"))
    flags = {}
    for name in ("marginals", "span_scores"):
        value = payload.get(name)
        if value is not None and not isinstance(value, bool):
            raise ApiError(400, "bad_request", f"{name} must be true or false")
        flags[name] = value
    if flags["marginals"] and not served.description["probabilistic"]:
        raise ApiError(400, "unsupported", refusal(served, "marginals"))
    return served, text, sentences, TagOptions(k, bool(flags["marginals"]), flags["span_scores"])


def explain_request(payload: dict, models, limits):
    """(the ServedModel, the tokens, the token's index) of a ``/v1/explain`` body."""
    check_fields(payload, EXPLAIN_FIELDS)
    served = served_model(models, payload.get("model"))
    if not served.description["explain"]:
        raise ApiError(400, "unsupported", refusal(served, "explain"))
    tokens = token_list(payload.get("tokens"), "tokens")
    if len(tokens) > limits.max_tokens:
        raise ApiError(413, "too_many_tokens", f"{len(tokens)} tokens; at most {limits.max_tokens} a sentence "
                                               f"(--max-tokens)")
    token = payload.get("token")
    if isinstance(token, bool) or not isinstance(token, int) or not 0 <= token < len(tokens):
        raise ApiError(400, "bad_request", f"token must be the index of a token, from 0 to {len(tokens) - 1}")
    return served, tokens, token
