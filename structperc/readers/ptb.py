"""Penn Treebank tagged .pos files: word/TAG tokens, "[ ... ]" chunk brackets, "=====" separators."""

from __future__ import annotations

import warnings

from structperc.errors import StructpercWarning
from structperc.readers.base import Parser

PTB_COLUMNS = ["word", "pos"]
# PTB tags of tokens that may follow the sentence-final "." and still belong to the sentence
_PTB_CLOSING_TAGS = frozenset(["''", ")", "-RRB-", "}", "-RCB-"])
# A sentence longer than this suggests a file with one sentence per line and no "." tags
LONG_SENTENCE = 250


def _is_ptb_separator(line: str) -> bool:
    return line.startswith("===") and not line.strip("=")


class PtbParser(Parser):
    """Penn Treebank tagged .pos files.

    Blank lines in these files also occur inside sentences (the original tagging chunks), so a
    blank line ends a sentence only when the sentence ends with a token tagged "." (possibly
    followed by closing quotes or brackets). A block of only closing quotes/brackets after a
    finished sentence belongs to that sentence. "=====" lines and end of file always end a
    sentence. On the NLTK WSJ sample this gives 3,934 sentences against 3,914 trees in the
    combined/*.mrg files; splitting at every blank line would give 4,979.

    The first sentence of more than LONG_SENTENCE tokens in a file gives a StructpercWarning:
    such files are usually one sentence per line, for the tagged format.
    """

    format = "ptb"
    extensions = (".pos",)
    title = "PTB"
    fixed_columns = PTB_COLUMNS
    default_label = "pos"
    keeps_lines = False

    def __init__(self, path, builder, columns, label, require_label, options):
        super().__init__(path, builder, columns, label, require_label, options)
        self.block_size = None  # tokens in the current blank-line block; None between blocks
        self.warned_long = False

    def feed(self, first_line: int, lines: list[str]) -> None:
        words, tags = self.builder.cols
        line_numbers = self.builder.line_numbers
        for offset, line in enumerate(lines):
            if not line:
                self._end_block()
                continue
            if _is_ptb_separator(line):
                self._end_block()
                self._close_sentence()
                continue
            line_number = first_line + offset
            n_before = len(words)
            for item in line.split():
                if item == "[" or item == "]":
                    continue
                word, tag = self._split_token(item, line_number)
                words.append(word)
                tags.append(tag)
                line_numbers.append(line_number)
            self.block_size = (self.block_size or 0) + len(words) - n_before

    def _split_token(self, item: str, line_number: int) -> tuple[str, str]:
        slash = item.rfind("/")
        while slash > 0 and item[slash - 1] == "\\":
            slash = item.rfind("/", 0, slash - 1)
        if slash <= 0 or slash == len(item) - 1:
            raise self.bad_token(item, line_number, "word/TAG")
        tag = item[slash + 1:]
        if "|" in tag:
            tag = tag.split("|", 1)[0]  # ambiguous tag such as NN|JJ: keep the first
        word = item[:slash]
        if "\\/" in word:
            word = word.replace("\\/", "/")
        return word, tag

    def _end_block(self) -> None:
        block_size = self.block_size
        self.block_size = None
        if not block_size:
            return
        builder = self.builder
        tags = builder.cols[1]
        start = len(tags) - block_size
        if (builder.n_closed and builder.open_sentence_start == start
                and all(tag in _PTB_CLOSING_TAGS for tag in tags[start:])):
            builder.reopen_last_sentence()  # closing quotes after the final period belong to it
        sentence_start = builder.open_sentence_start
        index = len(tags) - 1
        while index > sentence_start and tags[index] in _PTB_CLOSING_TAGS:
            index -= 1
        if tags[index] == ".":
            self._close_sentence()

    def _close_sentence(self) -> None:
        builder = self.builder
        start = builder.open_sentence_start
        n_tokens = len(builder.line_numbers) - start
        if n_tokens > LONG_SENTENCE and not self.warned_long:
            self.warned_long = True
            first, last = builder.line_numbers[start], builder.line_numbers[-1]
            warnings.warn(StructpercWarning(
                f"a sentence of {n_tokens} tokens (lines {first}-{last}): the PTB reader joins "
                f"lines until a token tagged '.'; if the file has one sentence per line, read it "
                f"with format='tagged'", path=self.path, line=first), stacklevel=2)
        builder.close_sentence()

    def finish(self) -> None:
        self._end_block()
        self._close_sentence()
