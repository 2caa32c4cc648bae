"""The likely encoding of bytes that did not decode: the hint of a decoding error.

charset-normalizer finds the encodings under which the bytes read as text, with the mess and the
language coherence of each reading; it is imported here, on the error path only, so reading a file
never loads it. The least mess less coherence ranks first, with one correction:
on Western text it ranks Windows-1250 first even where Windows-1252 reads the same characters (é,
ö, €: the code pages share them), so cp1252, by far the commoner, is named whenever it is among the
candidates or reads the bytes exactly as the first candidate does. ISO-8859-1 (latin-1) is never
named: it reads the bytes 0x80-0x9F, where cp1252 has €, quotes and dashes, as control characters.
"""
# the encodings considered: UTF-8 and UTF-16, the Windows code pages, KOI8-R and the East Asian
# multi-byte encodings; DOS and Mac code pages are left out, as they rank high on short Western text
CANDIDATES = ["utf_8", "utf_16", "cp1252", "cp1250", "cp1251", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257",
              "koi8_r", "shift_jis", "euc_jp", "gb18030", "big5", "euc_kr"]
SAMPLE = 1 << 16  # bytes around the error given to the detector


def likely_encoding(data: bytes, at: int = 0, tried: str = "utf-8") -> str | None:
    """The name of the encoding ``data`` most likely has (one Python accepts), judged from the
    ``SAMPLE`` bytes around offset ``at``; None when no candidate other than ``tried`` reads them."""
    import codecs

    from charset_normalizer import from_bytes

    sample = data[max(0, at - SAMPLE // 2): at + SAMPLE // 2]
    tried_name = _name(tried)
    # by mess less language coherence: on a short sample the mess alone can favour a code page in
    # which no language is recognised (Cyrillic words among ASCII tags read as cp1250)
    matches = sorted(from_bytes(sample, cp_isolation=CANDIDATES), key=lambda m: m.chaos - m.coherence)
    ranked = [m.encoding for m in matches if _name(m.encoding) != tried_name]
    if not ranked:
        return None
    try:
        western = sample.decode("cp1252")
    except UnicodeDecodeError:
        western = None
    if western is not None and tried_name != "cp1252" and (
            "cp1252" in ranked or _decodes_as(sample, ranked[0]) == western):
        return "cp1252"
    return codecs.lookup(ranked[0]).name


def _name(encoding):
    import codecs

    try:
        return codecs.lookup(encoding).name
    except LookupError:
        return encoding


def _decodes_as(data, encoding):
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        return None
