"""Progress of a training run on stderr, for the command line: a bar on a terminal, a line per
finished epoch, fold and checkpoint."""
import sys
import time
from pathlib import Path

import typer


def examples(text):
    """A command's epilog whose example paragraphs click prints as written, each line as it is
    (click's \\b marker), so that a long example keeps its line breaks and can be pasted."""
    head, *paragraphs = text.strip("\n").split("\n\n")
    return "\n\n".join([head] + ["\b\n" + paragraph for paragraph in paragraphs])


def announce_compiling(kernels):
    """Say on stderr, before a command's first call of the kernels ``kernels`` compiles them, that
    it does (once), so that the wait does not look like a hang."""
    from structperc._kernels.cache import cold

    if cold(kernels):
        typer.echo("compiling kernels, once", err=True)


def checkpoint_path(model):
    """Where ``train --checkpoint-every`` writes: MODEL.npz -> MODEL.checkpoint.npz."""
    model = Path(model)
    return model.with_name((model.name[:-4] if model.name.endswith(".npz") else model.name) + ".checkpoint.npz")


class Progress:
    """Progress on stderr: a one-line bar (sentences/s) on a terminal, and a line per finished epoch
    (and per checkpoint written)."""

    def __init__(self, epochs, quiet, checkpoint=None, checkpoint_every=0, header=None):
        """header : None, or a callable giving a line (or None) printed before the first epoch's:
        what the run chose from the data."""
        self.epochs = epochs
        self.header = header
        self.quiet = quiet
        self.checkpoint, self.checkpoint_every = checkpoint, checkpoint_every
        self.tty = sys.stderr.isatty()

    def __call__(self, epoch, done, total, stats):
        if self.quiet or not self.tty:
            return
        if getattr(self, "epoch", None) != epoch:
            self.epoch, self.epoch_started = epoch, time.perf_counter()
        elapsed = max(time.perf_counter() - self.epoch_started, 1e-9)
        width = 30
        filled = int(width * done / max(total, 1))
        bar = "#" * filled + "." * (width - filled)
        sys.stderr.write(
            f"\repoch {epoch}/{self.epochs} [{bar}] {done}/{total} sentences  {done / elapsed:,.0f} sent/s "
        )
        sys.stderr.flush()

    def fold_done(self, fold, folds, seconds):
        if not self.quiet:
            typer.echo(f"fold {fold}/{folds} jackknifed  {seconds:6.2f}s", err=True)

    def epoch_done(self, record):
        if self.quiet:
            return
        if self.tty:
            sys.stderr.write("\r" + " " * 100 + "\r")
        if self.header is not None:
            line, self.header = self.header(), None
            if line:
                typer.echo(line, err=True)
        parts = [f"epoch {record.epoch:3d}", f"{record.seconds:6.2f}s"]
        for key, value in record.stats.items():
            parts.append(f"{key}={value:.6g}" if isinstance(value, float) else f"{key}={value}")
        if record.dev:
            parts.append(f"dev={record.dev['score']:.2f}")
        typer.echo("  ".join(parts), err=True)
        if self.checkpoint is not None and record.epoch % self.checkpoint_every == 0:
            typer.echo(f"checkpoint {self.checkpoint} (epoch {record.epoch})", err=True)
