"""The OpenAPI 3.1 schema of the server (``GET /openapi.json``), written out by hand: the routes are few,
and their bodies are read by ``payloads``, not by a schema library."""
ERROR = {"type": "object", "required": ["error"], "properties": {"error": {
    "type": "object", "required": ["kind", "message"],
    "properties": {"kind": {"type": "string"}, "message": {"type": "string"}}}}}
TOKEN = {"type": "object", "properties": {"text": {"type": "string"}, "start": {"type": "integer"},
                                          "end": {"type": "integer"}}}
SPAN = {"type": "object", "properties": {"start": {"type": "integer"}, "end": {"type": "integer"},
                                         "label": {"type": "string"}, "score": {"type": "number"}}}
SENTENCE = {"type": "object", "required": ["text", "tokens", "tags"], "properties": {
    "text": {"type": "string"}, "tokens": {"type": "array", "items": TOKEN},
    "tags": {"type": "array", "items": {"type": "string"}},
    "spans": {"type": "array", "items": SPAN, "description": "chunk label sets only"},
    "kbest": {"type": "array", "items": {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string"}}, "score": {"type": "number"}}}},
    "marginals": {"type": "array", "items": {"type": "object", "additionalProperties": {"type": "number"}}}}}


def errors(*codes):
    return {str(code): {"description": "an error", "content": {"application/json": {"schema": ERROR}}}
            for code in codes}


def ok(schema, media="application/json"):
    return {"200": {"description": "OK", "content": {media: {"schema": schema}}}}


def json_body(schema):
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def openapi_schema(model_names, version):
    model = {"type": "string", "enum": list(model_names), "description": "may be left out when one model is served"}
    tag = {"type": "object", "properties": {
        "model": model, "text": {"type": "string", "description": "raw text (or give sentences)"},
        "sentences": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
        "k": {"type": "integer", "minimum": 1, "description": "the k best labelings (first-order models)"},
        "marginals": {"type": "boolean", "description": "P(label | x) per token (crf, memm)"},
        "span_scores": {"type": "boolean", "description": "each span's probability (default: when defined)"}}}
    explain = {"type": "object", "required": ["tokens", "token"], "properties": {
        "model": model, "tokens": {"type": "array", "items": {"type": "string"}}, "token": {"type": "integer"}}}
    process_fields = {"type": "object", "properties": {name: {"type": "string"} for name in
                                                       ("model", "data", "input", "tokenizer", "tagger", "parser",
                                                        "output")}}
    process = {"summary": "UDPipe 1's /process: CoNLL-U in result",
               "responses": {**ok({"type": "object", "properties": {
                   "model": {"type": "string"}, "acknowledgements": {"type": "array", "items": {"type": "string"}},
                   "result": {"type": "string"}}}), **errors(400, 404, 413, 415, 503, 504)}}
    status = ok({"type": "object"})
    return {
        "openapi": "3.1.0",
        "info": {"title": "structperc serve", "version": version},
        "paths": {
            "/v1/tag": {"post": {"summary": "Tag raw text or tokens", "requestBody": json_body(tag),
                                 "responses": {**ok({"type": "object", "properties": {
                                     "model": {"type": "string"},
                                     "sentences": {"type": "array", "items": SENTENCE}}}),
                                     **errors(400, 401, 404, 408, 413, 415, 503, 504)}}},
            "/v1/explain": {"post": {"summary": "Why a token has its label", "requestBody": json_body(explain),
                                     "responses": {**status, **errors(400, 401, 404, 413, 415, 503, 504)}}},
            "/v1/models": {"get": {"summary": "The models: name, task, labels, licence, test score, sha256",
                                   "responses": status}},
            "/process": {"post": {**process, "requestBody": {"content": {
                "application/x-www-form-urlencoded": {"schema": process_fields},
                "multipart/form-data": {"schema": process_fields}}}},
                "get": {**process, "parameters": [{"name": name, "in": "query", "schema": {"type": "string"}}
                                                  for name in process_fields["properties"]]}},
            "/models": {"get": {"summary": "UDPipe 1's /models", "responses": status}},
            "/live": {"get": {"summary": "The process answers", "responses": status}},
            "/ready": {"get": {"summary": "Every model loaded and warm (503 before)",
                               "responses": {**status, **errors(503)}}},
            "/metrics": {"get": {"summary": "Prometheus' text format",
                                 "responses": ok({"type": "string"}, "text/plain")}},
            "/": {"get": {"summary": "The page: paste text, see its tags",
                          "responses": ok({"type": "string"}, "text/html")}},
        },
    }
