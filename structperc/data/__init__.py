"""Known corpora: fetching them from a mirror or a download with checksums (``fetch.py``) and their
standard train/dev/test splits (``splits.py``). Imports readers and utils only.
"""
