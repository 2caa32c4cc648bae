"""Small helpers with no knowledge of sequences: atomic file writes, ``.npz`` files with JSON
metadata, and giving freed memory back to the operating system. Imports nothing of structperc but
``errors``.
"""
