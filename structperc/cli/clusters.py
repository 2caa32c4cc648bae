"""The ``clusters`` command, as a plain function with typer annotations.

``cli/main.py`` registers it as ``clusters``, with the epilog ``examples(CLUSTERS_EPILOG)``.

The library function it wraps is ``structperc.clusters.brown.brown_clusters`` (which never prints).
"""
import json
import time
from pathlib import Path
from typing import List, Optional

import typer

from structperc.cli.options import Json, Output, Quiet, check_json, choices, hidden, renamed, value_of
from structperc.cli.progress import Bar, announce_compiling
from structperc.readers.registry import FORMATS

CLUSTERS_EPILOG = """Examples:

  structperc clusters ../shared/corpora/unlabeled_en/*.txt corpora/ud_english_ewt/en_ewt-ud-train.conllu \\
      --n-clusters 256 --min-count 3 --output paths.txt

  structperc clusters raw.txt --format raw --n-clusters 100 > paths.txt

  structperc clusters corpora/conll2000/train.txt --n-clusters 50 --quiet --json --output np_paths.txt
"""


ClusterFormat = choices("ClusterFormat", ("auto", "raw", *(name for name in FORMATS if name != "raw")))
N_CLUSTERS = 256


class MergeProgress(Bar):
    """The merges as rich's bar on a terminal; remembers when merging started (for merges/s)."""

    def __init__(self, quiet):
        super().__init__(quiet, "merges")
        self.merge_start = time.perf_counter()

    def __call__(self, done, total):
        if done == 0:  # reading is over, merging starts
            self.merge_start = time.perf_counter()
        self.update("clustering", done, total)


def clusters(
    inputs: List[Path] = typer.Argument(..., help="Text files: raw text, CoNLL columns, CoNLL-U or PTB .pos."),
    n_clusters: Optional[int] = typer.Option(None, "--n-clusters", "-c", min=1,
                                             help=f"Clusters kept while words are added (C; default {N_CLUSTERS})."),
    old_clusters: Optional[int] = hidden("--clusters"),
    min_count: int = typer.Option(1, "--min-count", min=1, help="Drop words seen fewer times than this."),
    output: Output = None,
    format: ClusterFormat = typer.Option(
        "auto", "--format", help="auto: .conllu and .pos by extension, other files are CoNLL when their lines "
        "have a constant number of columns, raw text otherwise."),
    encoding: str = typer.Option("utf-8", help="Input encoding."),
    quiet: Quiet = False,
    json_output: Json = False,
):
    """Brown word clusters (Liang's windowed algorithm): one 'bitstring TAB word TAB count' line per word.

    Words are ranked by frequency; the C most frequent start as clusters, then each next word is added
    and the pair of clusters whose merge loses the least average mutual information of the class
    bigram model is merged. When all words are in, the C clusters are merged down to one; a word's
    bit string is its cluster's path in that tree. Raw text is one sentence per line, split into
    Penn Treebank / UD tokens (n't 's 're 'll 've 'd 'm and punctuation split off). Bigrams never
    span a sentence.
    """
    from structperc.clusters.brown import brown_clusters, write_paths
    from structperc._kernels.cache import CLUSTERING

    n_clusters = renamed(n_clusters, old_clusters, "--clusters", "--n-clusters", default=N_CLUSTERS)
    check_json(json_output, output, "the paths")
    announce_compiling(CLUSTERING)
    start = time.perf_counter()
    with MergeProgress(quiet) as progress:
        result = brown_clusters(inputs, n_clusters=n_clusters, min_count=min_count, format=value_of(format),
                                encoding=encoding, progress=progress)
    merge_seconds = time.perf_counter() - getattr(progress, "merge_start", start)
    if output is not None:
        write_paths(result, output)
    else:
        lines = result.lines()
        typer.echo("\n".join(lines) if lines else "", nl=bool(lines))
    seconds = time.perf_counter() - start
    n_merges = len(result.merges)
    summary = {
        "output": None if output is None else str(output), "words": len(result.words),
        "tokens": int(result.counts.sum()), "bigrams": result.n_bigrams, "clusters": result.n_clusters,
        "merges": n_merges, "merges_per_second": n_merges / max(merge_seconds, 1e-9),
        # AMI of the C clusters when every word is in (after the last windowed merge)
        "ami": (float(result.ami[n_merges - result.n_clusters])
                if len(result.words) > result.n_clusters else None),
        "seconds": seconds,
    }
    if json_output:
        typer.echo(json.dumps(summary))
    elif not quiet:
        typer.echo(f"{summary['words']:,} words in {summary['clusters']} clusters, "
                   f"AMI {summary['ami'] or 0.0:.4f} nats, {n_merges:,} merges, "
                   f"{summary['merges_per_second']:,.0f} merges/s, {seconds:.1f}s", err=True)
