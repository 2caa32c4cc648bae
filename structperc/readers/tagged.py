"""One sentence per line of word<SEP>TAG tokens (default separator "/"); blank lines are skipped."""

from __future__ import annotations

from structperc.errors import ConfigError
from structperc.readers.base import Parser
from structperc.readers.ptb import PTB_COLUMNS


class TaggedParser(Parser):
    """Every non-blank line is a sentence; each whitespace-separated token is split at the last
    occurrence of `tag_sep` into word and tag, both non-empty. Columns as for the PTB format."""

    format = "tagged"
    extensions = (".tagged",)
    title = "tagged"
    fixed_columns = PTB_COLUMNS
    default_label = "pos"
    keeps_lines = False
    options = {"tag_sep": "/"}

    def __init__(self, path, builder, columns, label, require_label, options):
        super().__init__(path, builder, columns, label, require_label, options)
        self.tag_sep = self.option_values["tag_sep"]
        if not isinstance(self.tag_sep, str) or not self.tag_sep or self.tag_sep != "".join(
                self.tag_sep.split()):
            raise ConfigError(f"tag_sep must be a non-empty string without whitespace, "
                              f"got {self.tag_sep!r}")

    def feed(self, first_line: int, lines: list[str]) -> None:
        builder = self.builder
        words, tags = builder.cols
        line_numbers = builder.line_numbers
        tag_sep = self.tag_sep
        shape = f"word{tag_sep}TAG"
        for offset, line in enumerate(lines):
            if not line:
                continue
            line_number = first_line + offset
            for item in line.split():
                word, _, tag = item.rpartition(tag_sep)
                if not word or not tag:
                    raise self.bad_token(item, line_number, shape)
                words.append(word)
                tags.append(tag)
                line_numbers.append(line_number)
            builder.close_sentence()
