"""Marked sections of the README and of benchmarks/results.md, which each benchmark rewrites in place.

A section is the text between the lines ``<!-- NAME -->`` and ``<!-- /NAME -->``. ``write_section``
replaces it, or appends it to the file when the file has no such section (creating the file), so
that the benchmarks sharing a file leave each other's sections alone.
"""
from pathlib import Path


def write_section(path, name, text, append=True):
    """Put ``text`` between the markers of section ``name`` in the file ``path``. Without the
    markers: append the section when ``append``, else leave the file alone. Returns True if written."""
    path = Path(path)
    start_marker, end_marker = f"<!-- {name} -->", f"<!-- /{name} -->"
    current = path.read_text(encoding="utf-8") if path.is_file() else ""
    start, end = current.find(start_marker), current.find(end_marker)
    body = text.strip("\n") + "\n"
    if start >= 0 and end > start:
        updated = current[: start + len(start_marker)] + "\n" + body + current[end:]
    elif append:
        updated = current + ("\n" if current and not current.endswith("\n\n") else "") + \
            f"{start_marker}\n{body}{end_marker}\n"
    else:
        return False
    path.write_text(updated, encoding="utf-8")
    return True
