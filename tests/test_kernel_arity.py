"""Kernels take records: no numba dispatcher of structperc._kernels has more than 8 parameters
(STYLE.md; group arrays into the named tuples of ``_kernels/records.py`` and its families)."""
import importlib
import inspect
import pkgutil

from numba.core.registry import CPUDispatcher

import structperc._kernels

MOST = 8


def kernel_modules():
    for info in pkgutil.walk_packages(structperc._kernels.__path__, "structperc._kernels."):
        yield importlib.import_module(info.name)


def test_no_kernel_takes_more_than_8_parameters():
    found = {}
    for module in kernel_modules():
        for name, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__:
                found[f"{module.__name__}.{name}"] = len(inspect.signature(value.py_func).parameters)
    assert len(found) > 50, "the walk found too few kernels to mean anything"
    too_many = {name: count for name, count in found.items() if count > MOST}
    assert not too_many, f"kernels with more than {MOST} parameters: {too_many}"
