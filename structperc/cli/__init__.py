"""The command line: one module per command group, the options they share, errors turned into one
line and exit status 2 in ``main``. The top floor: it may import every other package; none imports it.
"""
