"""Small helpers with no knowledge of sequences: atomic file writes, ``.npz`` files with JSON
metadata, the sha256 of a file, and giving freed memory back to the operating system. Imports nothing of structperc but
``errors``.
"""
