"""From tokens to feature ids: the template language and presets (``templates.py``), lexicons,
vocabularies, the encoders of templates and of feature dicts, the encoded-corpus record and its cache.
Imports chunks, errors, utils and the encode kernels.
"""
