"""CoNLL-U (Universal Dependencies), parsed by the conllu package.

Multiword token ranges ("1-2") and empty nodes ("8.1") are skipped; their words are read.

A label may join columns with "+": ``upos+feats`` is a further column whose value is the token's
upos and feats joined with "|" (``NOUN|Number=Sing``), as for morphological tagging.
"""

from __future__ import annotations

from structperc.errors import ConfigError, InputFormatError
from structperc.readers.base import Parser

# The last column is derived from MISC: "0" when the token is written with no space after it
# (SpaceAfter=No, on the word or on the multiword token it ends; the words inside a multiword token
# have none), "1" otherwise.
CONLLU_COLUMNS = ["word", "lemma", "upos", "xpos", "feats", "head", "deprel", "space_after"]
# conllu token keys of the columns read as they are, in the order of CONLLU_COLUMNS
_CONLLU_KEYS = ["form", "lemma", "upos", "xpos", "feats", "head", "deprel"]


class ConlluParser(Parser):
    format = "conllu"
    extensions = (".conllu",)
    title = "CoNLL-U"
    fixed_columns = CONLLU_COLUMNS
    default_label = "upos"

    def __init__(self, path, builder, columns, label, require_label, options):
        self.joined = joined_columns(label)
        if self.joined is not None and columns is not None and list(columns) == CONLLU_COLUMNS + [label]:
            columns = None  # the columns a model trained on the joined label records
        super().__init__(path, builder, columns, None if self.joined else label, require_label, options)
        if self.joined is not None:
            self.names, self.label = CONLLU_COLUMNS + [label], label
            builder.cols.append([])
        self.block: list[str] = []
        self.block_first_line = 0

    def feed(self, first_line: int, lines: list[str]) -> None:
        block = self.block
        for offset, line in enumerate(lines):
            if line:
                if not block:
                    self.block_first_line = first_line + offset
                block.append(line)
            elif block:
                self._parse_block()
                block.clear()

    def finish(self) -> None:
        if self.block:
            self._parse_block()
            self.block.clear()

    def _parse_block(self) -> None:
        first = self.block_first_line
        token_lines = []  # (line number, line) of non-comment lines
        for offset, line in enumerate(self.block):
            if line.startswith("#"):
                continue
            n_fields = line.count("\t") + 1
            if n_fields != 10:
                # a line of words without a tab: raw text, which a CoNLL-U model tags as format raw
                hint = ("; if this is raw text, read it as format raw (or write --output-format jsonl)"
                        if n_fields == 1 and len(line.split()) > 1 else "")
                raise InputFormatError(self.path, first + offset,
                                       f"expected 10 tab-separated CoNLL-U fields, found "
                                       f"{n_fields}{hint}")
            token_lines.append((first + offset, line))
        if not token_lines:
            return
        import conllu  # here, not at the top: commands that read no CoNLL-U do not pay for it
        from conllu.exceptions import ParseException

        text = "\n".join(self.block) + "\n"
        try:
            tokens = conllu.parse_token_and_metadata(text)
        except ParseException as error:
            where = self._locate_error(token_lines)
            raise InputFormatError(self.path, where, f"invalid CoNLL-U: {error}") from None
        if len(tokens) != len(token_lines):
            raise InputFormatError(self.path, first,
                                   f"conllu parsed {len(tokens)} tokens from "
                                   f"{len(token_lines)} token lines")
        builder = self.builder
        line_numbers, kept = builder.line_numbers, builder.lines
        space_column = builder.cols[len(_CONLLU_KEYS)]
        range_last, range_space = 0, "1"  # the open multiword token: its last word id, its SpaceAfter
        # The lines that are not words (comments, multiword tokens, empty nodes) are kept with the
        # word after them (the last word: those after it), so that the writer gives CoNLL-U back.
        pending = self.block[:token_lines[0][0] - first]
        n_kept = len(kept)
        for k, (token, (line_number, line)) in enumerate(zip(tokens, token_lines)):
            token_id = token["id"]
            if k:  # the comment lines between the previous token line and this one
                pending.extend(self.block[token_lines[k - 1][0] - first + 1:line_number - first])
            if not isinstance(token_id, int):
                # multiword token range "1-2" (remember where it ends) or empty node "8.1"
                if len(token_id) == 3 and token_id[1] == "-":
                    range_last, range_space = token_id[2], _space_after(token)
                pending.append(line)
                continue
            form = token["form"]
            if not form or (isinstance(form, str) and form.isspace()):  # conllu reads "2\t\t..." as FORM ""
                raise InputFormatError(self.path, line_number, f"word {token_id} has an empty FORM column")
            for column, key in zip(builder.cols, _CONLLU_KEYS):
                column.append(_conllu_value(token[key]))
            if self.joined is not None:
                builder.cols[-1].append("|".join([builder.cols[k][-1] for k in self.joined]))
            if token_id < range_last:
                space_column.append("0")
            else:
                space_column.append(range_space if token_id == range_last else _space_after(token))
            line_numbers.append(line_number)
            if pending:
                pending.append(line)
                kept.append("\n".join(pending))
                pending.clear()
            else:
                kept.append(line)
        pending.extend(self.block[token_lines[-1][0] - first + 1:])
        if pending and len(kept) > n_kept:
            kept[-1] += "\n" + "\n".join(pending)
        builder.close_sentence()

    @staticmethod
    def _locate_error(token_lines) -> int:
        """Line number of the first token line that conllu rejects on its own."""
        import conllu
        from conllu.exceptions import ParseException

        for line_number, line in token_lines:
            try:
                conllu.parse_token_and_metadata(line + "\n")
            except ParseException:
                return line_number
        return token_lines[0][0]


def joined_columns(label):
    """The CONLLU_COLUMNS indices of a label that joins columns with "+" (``upos+feats``), or None
    for a plain column name."""
    if label is None or "+" not in label:
        return None
    parts = label.split("+")
    for part in parts:
        if part not in CONLLU_COLUMNS:
            raise ConfigError(f"label {label!r}: {part!r} is not a CoNLL-U column; "
                              f"choose from {', '.join(CONLLU_COLUMNS)}")
    return [CONLLU_COLUMNS.index(part) for part in parts]


def _space_after(token) -> str:
    misc = token["misc"]
    return "0" if misc and misc.get("SpaceAfter") == "No" else "1"


def _conllu_value(value) -> str:
    if isinstance(value, str):
        return value
    from conllu.serializer import serialize_field

    return serialize_field(value)
