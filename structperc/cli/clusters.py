"""The ``clusters`` command, as a plain function with typer annotations.

``cli.py`` registers it as ``clusters``, with the epilog ``examples(CLUSTERS_EPILOG)``, wrapped by
``handles_errors``.

The library function it wraps is ``structperc.clusters.brown.brown_clusters`` (which never prints).
"""
import json
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer

from structperc.cli.progress import announce_compiling
from structperc.errors import ConfigError

CLUSTERS_EPILOG = """Examples:

  structperc clusters ../shared/corpora/unlabeled_en/*.txt corpora/ud_english_ewt/en_ewt-ud-train.conllu \\
      --clusters 256 --min-count 3 --output paths.txt

  structperc clusters raw.txt --format raw --clusters 100 > paths.txt

  structperc clusters corpora/conll2000/train.txt --clusters 50 --quiet --json --output np_paths.txt
"""


class MergeProgress:
    """A one-line progress bar on stderr with merges per second (only on a terminal)."""

    def __init__(self, quiet):
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.merge_start = time.perf_counter()

    def __call__(self, done, total):
        if done == 0:  # reading is over, merging starts
            self.merge_start = time.perf_counter()
        if self.quiet or not self.tty:
            return
        elapsed = max(time.perf_counter() - self.merge_start, 1e-9)
        width = 30
        filled = int(width * done / max(total, 1))
        bar = "#" * filled + "." * (width - filled)
        sys.stderr.write(f"\rclustering [{bar}] {done:,}/{total:,} merges  {done / elapsed:,.0f} merges/s ")
        sys.stderr.flush()

    def finish(self):
        if not self.quiet and self.tty:
            sys.stderr.write("\r" + " " * 100 + "\r")
            sys.stderr.flush()


def clusters(
    inputs: List[Path] = typer.Argument(..., help="Text files: raw text, CoNLL columns, CoNLL-U or PTB .pos."),
    n_clusters: int = typer.Option(256, "--clusters", "-c", help="Clusters kept while words are added (C)."),
    min_count: int = typer.Option(1, "--min-count", help="Drop words seen fewer times than this."),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="Write the paths here (atomically) instead of stdout."),
    format: str = typer.Option(
        "auto", "--format", help="raw, conll, conllu, ptb, or auto: .conllu and .pos by extension, other "
        "files are CoNLL when their lines have a constant number of columns, raw text otherwise."),
    encoding: str = typer.Option("utf-8", help="Input encoding."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress output."),
    json_output: bool = typer.Option(False, "--json", help="Print a JSON summary on stdout (needs --output)."),
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

    if json_output and output is None:
        raise ConfigError("--json prints a summary on stdout: give --output for the paths")
    announce_compiling(CLUSTERING)
    start = time.perf_counter()
    progress = MergeProgress(quiet)
    try:
        result = brown_clusters(inputs, n_clusters=n_clusters, min_count=min_count, format=format,
                                encoding=encoding, progress=progress)
    finally:
        progress.finish()
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
