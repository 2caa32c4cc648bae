"""Progress on stderr, for the command line: rich's bar on a terminal, and a plain line per finished
epoch, fold and checkpoint (the only output when stderr is not a terminal)."""
import sys
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
    from structperc._kernels.cache import NOTICE, cold, compiling_said, say_compiling

    if not compiling_said() and cold(kernels):
        typer.echo(NOTICE, err=True)
        say_compiling(log=False)  # said: numba's compile event does not say it again


def checkpoint_path(model):
    """Where ``train --checkpoint-every`` writes: MODEL.npz -> MODEL.checkpoint.npz."""
    model = Path(model)
    return model.with_name((model.name[:-4] if model.name.endswith(".npz") else model.name) + ".checkpoint.npz")


class Bar:
    """rich's progress bar on stderr, shown only on a terminal and without --quiet; ``line`` prints
    a line above it (or alone, without a terminal). A context manager: the bar is gone on exit."""

    def __init__(self, quiet, unit):
        self.quiet, self.unit = quiet, unit
        self.live = not quiet and sys.stderr.isatty()
        self.progress = self.task = None

    def __enter__(self):
        if self.live:
            # rich is imported only when a bar is shown (start-up of piped and quiet runs)
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TextColumn(self.unit), TimeElapsedColumn(), console=Console(stderr=True),
                                     transient=True)
            self.progress.start()
        return self

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    def update(self, description, done, total):
        if self.progress is None:
            return
        if self.task is None or self.description != description:
            if self.task is not None:
                self.progress.remove_task(self.task)
            self.task, self.description = self.progress.add_task(description, total=total), description
        self.progress.update(self.task, completed=done, total=total)

    def line(self, text):
        if self.quiet:
            return
        if self.progress is not None:
            self.progress.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            typer.echo(text, err=True)


class Progress(Bar):
    """A training run: a bar over the sentences of each epoch, and a line per finished epoch (and
    per checkpoint written) and per jackknife fold."""

    def __init__(self, epochs, quiet, checkpoint=None, checkpoint_every=0, header=None, estimate=False):
        """header : None, or a callable giving a line (or None) printed before the first epoch's:
        what the run chose from the data. estimate : end each epoch's line with how long the epochs
        left would take at the pace of the last one (at most: a run with dev data may stop early)."""
        super().__init__(quiet, "sentences")
        self.epochs = epochs
        self.header = header
        self.checkpoint, self.checkpoint_every = checkpoint, checkpoint_every
        self.estimate = estimate

    def __call__(self, epoch, done, total, stats):
        self.update(f"epoch {epoch}/{self.epochs}", done, total)

    def time_left(self, record):
        """"(about N s left)": the epochs left times the last epoch's seconds, from the second epoch on
        (the first holds the compiling of the kernels, once); "" after the first and the last."""
        if record.epoch < 2 or record.epoch >= self.epochs:
            return ""
        return f"(about {(self.epochs - record.epoch) * record.seconds:.0f} s left)"

    def fold_done(self, fold, folds, seconds):
        self.line(f"fold {fold}/{folds} jackknifed  {seconds:6.2f}s")

    def epoch_done(self, record):
        if self.header is not None:
            line, self.header = self.header(), None
            if line:
                self.line(line)
        parts = [f"epoch {record.epoch:3d}", f"{record.seconds:6.2f}s"]
        for key, value in record.stats.items():
            parts.append(f"{key}={value:.6g}" if isinstance(value, float) else f"{key}={value}")
        if record.dev:
            parts.append(f"dev={record.dev['score']:.2f}")
        left = self.time_left(record) if self.estimate else ""
        if left:
            parts.append(left)
        self.line("  ".join(parts))
        if self.checkpoint is not None and record.epoch % self.checkpoint_every == 0:
            self.line(f"checkpoint {self.checkpoint} (epoch {record.epoch})")
