"""Corpus readers: one module per input format behind `base.Parser`, and the streaming layer.

To add a format, write a Parser subclass in its own module and add it to `registry.FORMATS`.
"""

from structperc.readers.registry import FORMATS, detect_format
from structperc.readers.stream import iter_corpus, read_corpus, read_ptb_files
from structperc.readers.writer import write_tagged

__all__ = ["FORMATS", "detect_format", "iter_corpus", "read_corpus", "read_ptb_files",
           "write_tagged"]
