"""The warm-up: compile and cache every kernel once (``python -m structperc.warmup``).

It sits on the top floor beside the CLI: it runs every rule, reranker and clusterer once. Nothing
imports it but the tests.
"""
