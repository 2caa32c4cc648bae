"""Brown word clusters from unlabelled text (``brown.py``), written as the bit-string paths that the
``clusters`` template field reads. Imports readers, utils and the cluster kernels.
"""
