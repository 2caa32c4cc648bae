"""Reading a training file into interned columns, in N parts read by N processes at once.

``read_training_columns`` reads a training corpus for ``fit_file``. Each column becomes an
``InternedColumn``: int32 ids into its distinct values in first-seen order, the form the encoder
starts from. So every string is interned once, and no list of strings per token is kept.

With parts > 1 (``--workers N`` on this machine) the file is cut after blank lines into N byte
ranges of about equal size, and N forked processes read them at the same time, each interning its
own values. The parts are then merged in file order: part k's distinct values are interned after
those of parts 0..k-1, so every id is the one a serial read gives.

With one part, a file of a megabyte or more is read by one forked process all the same. Parsing
leaves the reading process's heap fragmented (a few live strings pin each block the parser's
temporaries used), and glibc cannot hand that back: reading in a child process leaves the training
process smaller, at no extra time, as the process would only wait.

The file is read serially instead where this cannot hold: standard input, a format whose
sentences do not end at blank lines, a platform without fork, or parts that disagree on the
columns. A part that meets an error also hands over to the serial read, which raises the error
that comes first in the file (a part read alone can meet another one).
"""
import mmap
import multiprocessing
import os

import numpy as np

from structperc.utils import heap
from structperc.chunks import check_only_types, chunk_types, map_only_types
from structperc.corpus import Corpus
from structperc.errors import StructpercError
from structperc.readers.conll import raw_text_error
from structperc.utils.interning import InternedColumn, Interner

_BATCH = 1000  # sentences per batch of a part's reader
_SPLIT_FORMATS = ("conll", "conllu")  # sentences end at blank lines
_SEARCH = 1 << 22  # how far past an even cut to look for a blank line
_MIN_PART_BYTES = 1 << 16  # a smaller file is read whole: forking would cost more than it saves
_MIN_CHILD_BYTES = 1 << 20  # a smaller file, in one part, is read here: it leaves little behind


def read_training_columns(path, parts=1, meanwhile=None, **reader_options):
    """The training Corpus of ``path`` with InternedColumn columns and no original lines, read in
    ``parts`` parallel parts when the file allows it. reader_options: as for ``read_corpus``.

    meanwhile : None, or a function this process calls while forked processes read (its own time
        is then hidden behind theirs): ``fit_file`` imports dask there for parameter mixing. It is
        called after the fork, so the readers never inherit a half-done import."""
    ranges = _ranges(path, parts, reader_options)
    corpus = None
    if ranges is not None:
        try:
            results = _read_parallel(path, ranges, reader_options, meanwhile)
            corpus = _merge(results)
        except StructpercError:
            corpus = None  # a part read alone may meet another error than the serial read does first
    if corpus is None:  # read whole: the serial read decides, and raises the error it meets first
        results = [_read_part(path, None, reader_options)]
        corpus = _merge(results)
    if len(results) > 1 and corpus.format == "conll" and reader_options.get("columns") is None:
        # the parts were judged one by one: judge the whole file as a serial read does
        labels = corpus.columns[corpus.label]
        error = raw_text_error(corpus.path, int(corpus.line_numbers[0]), len(corpus.columns), set(labels.distinct),
                               len(labels))
        if error is not None:
            raise error
    if reader_options.get("only_types") is not None and corpus.label is not None:
        check_only_types(reader_options["only_types"], set().union(*(r[7] for r in results)), corpus.path)
    heap.trim()  # the batches' strings
    return corpus


def _ranges(path, parts, reader_options):
    """[(start, stop, line number at start)] cutting the file after blank lines into ``parts``
    ranges of about equal size; None when it cannot be cut so."""
    from structperc.readers.registry import resolve_format

    if str(path) == "-" or not os.path.isfile(path):
        return None
    if resolve_format(path, reader_options.get("format")) not in _SPLIT_FORMATS:
        return None
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    try:  # the cuts are found on bytes: a blank line must be the bytes of two newlines
        if "\n\n".encode(reader_options.get("encoding") or "utf-8") != b"\n\n":
            return None
    except LookupError:
        return None  # the serial read reports the unknown encoding
    size = os.path.getsize(path)
    if size < (parts * _MIN_PART_BYTES if parts > 1 else _MIN_CHILD_BYTES):
        return None
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        cuts = [0]
        for k in range(1, parts):
            target = max(size * k // parts, cuts[-1])
            found = [p + len(blank) for blank in (b"\n\n", b"\n\r\n")
                     if (p := data.find(blank, target, target + _SEARCH)) >= 0]
            if not found:
                return None
            cuts.append(min(found))
        cuts.append(size)
        lines = [1]
        for a, b in zip(cuts[:-2], cuts[1:-1]):
            lines.append(lines[-1] + data[a:b].count(b"\n"))
    if len(set(cuts)) != len(cuts):
        return None
    return [(a, b, line) for a, b, line in zip(cuts[:-1], cuts[1:], lines)]


def _read_part(path, byte_range, reader_options):
    """Read one part: (column names, label, format, display path, {name: (ids, distinct)},
    sentence ends, line numbers, chunk types of the labels before ``only_types`` maps them); names is
    None for a part with no sentence."""
    from structperc.readers import iter_corpus

    # only_types maps the distinct labels here, once, after their chunk types are collected
    reader_options = dict(reader_options)
    only_types = reader_options.pop("only_types", None)
    interners, ids, ends, line_numbers = {}, {}, [], []
    names = label = format = name = None
    n_tokens = 0
    for batch in iter_corpus(path, require_label=True, batch_sentences=_BATCH, byte_range=byte_range,
                             **reader_options):
        if names is None:
            names, label, format, name = list(batch.columns), batch.label, batch.format, batch.path
            interners = {column: Interner() for column in names}
            ids = {column: [] for column in names}
        for column, values in batch.columns.items():
            index = interners[column]
            ids[column].append(np.fromiter(map(index.__getitem__, values), dtype=np.int32, count=len(values)))
        ends.append(batch.sentence_offsets[1:] + n_tokens)
        n_tokens += batch.n_tokens
        line_numbers.append(batch.line_numbers)
        # the reader's generator still holds this batch while it builds the next: empty it now
        batch.columns.clear()
        batch.lines = None
    columns = {column: (np.concatenate(ids[column]), list(interners[column])) for column in ids}
    types = set()
    if only_types is not None and label is not None:
        label_ids, distinct = columns[label]
        types = chunk_types(distinct)
        index = Interner()
        remap = np.fromiter(map(index.__getitem__, map_only_types(distinct, only_types)), dtype=np.int32,
                            count=len(distinct))
        columns[label] = (remap[label_ids], list(index))
    return (names, label, format, name, columns, np.concatenate(ends) if ends else np.zeros(0, np.int64),
            np.concatenate(line_numbers) if line_numbers else np.zeros(0, np.int64), types)


def _child(send, path, byte_range, reader_options):
    """A forked reader: sends ("ok", part) or ("error", the exception) to the reading process."""
    try:
        result = ("ok", _read_part(path, byte_range, reader_options))
    except BaseException as error:  # noqa: BLE001 - raised again by the reading process
        result = ("error", error)
    try:
        send.send(result)
    finally:
        send.close()


def _read_parallel(path, ranges, reader_options, meanwhile=None):
    """The parts of ``ranges`` in file order, read by forked processes at the same time (this
    process calls ``meanwhile`` while they run). An error in a part is raised here; the processes
    are always ended."""
    context = multiprocessing.get_context("fork")
    children = []
    try:
        for byte_range in ranges:
            receive, send = context.Pipe(duplex=False)
            child = context.Process(target=_child, args=(send, path, byte_range, reader_options), daemon=True)
            child.start()
            send.close()
            children.append((child, receive))
        if meanwhile is not None:
            meanwhile()
        results = []
        for _, receive in children:
            status, value = receive.recv()
            if status == "error":
                raise value
            results.append(value)
        return results
    finally:
        for child, receive in children:
            receive.close()
            if child.is_alive():
                child.terminate()
            child.join()


def _merge(results):
    """One Corpus of the parts, their values interned in file order; None if the parts disagree
    on the columns or hold no sentence."""
    results = [r for r in results if r[0] is not None]
    if not results:
        return None
    names, label, format, name = results[0][:4]
    if any(r[0] != names or r[1] != label for r in results):
        return None
    columns = {}
    for column in names:
        if len(results) == 1:  # one part: its own numbering is the file's
            columns[column] = InternedColumn(*results[0][4][column])
            continue
        index = Interner()
        merged = []
        for result in results:
            part_ids, distinct = result[4][column]
            remap = np.fromiter(map(index.__getitem__, distinct), dtype=np.int32, count=len(distinct))
            merged.append(remap[part_ids])
        columns[column] = InternedColumn(np.concatenate(merged), list(index))
    ends, base = [np.zeros(1, dtype=np.int64)], 0
    for result in results:
        ends.append(result[5] + base)
        base += int(result[5][-1]) if len(result[5]) else 0
    return Corpus(columns=columns, sentence_offsets=np.concatenate(ends), label=label, path=name,
                  line_numbers=np.concatenate([r[6] for r in results]), lines=None, format=format)
