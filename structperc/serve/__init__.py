"""``structperc serve``: the models over HTTP, on Starlette and uvicorn, several worker processes under
gunicorn.

- ``served``: the models a server holds, loaded and warmed once in the master before the workers fork,
  swapped whole when a file changes;
- ``tagging``: a request's text or tokens to a Corpus, and the tagged corpus to the answer (JSON, CoNLL-U);
- ``udpipe``: UDPipe 1's REST API (``/process``, ``/models``) on top of it;
- ``limits``: the request's size, reading time, tokens, time limit and the bounded queue; bearer tokens;
- ``errors``: client errors as JSON bodies, bugs as a 500 with an id logged beside the traceback;
- ``metrics``: Prometheus' counters, shared by the workers (multiprocess mode);
- ``app``: the routes; ``page/``: the page at ``/`` (offline: no external resource);
- ``master``: gunicorn's master with the app preloaded, SIGHUP and ``--reload-on-change``; ``worker``: uvicorn's
  worker, which drains (``draining``: ``Connection: close`` for a second) before it stops.
"""
