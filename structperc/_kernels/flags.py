"""Code chosen on a flag's type as numba compiles a kernel: the records' flags (``records``) are None
or True, and a kernel should hold the code of its case only."""
from numba import types
from numba.extending import overload


def choose(flag, when_none, otherwise):
    """``when_none`` when the flag ``flag`` is None, else ``otherwise`` (two kernels, or two values).

    In a kernel, the choice is made on the flag's type as numba compiles the kernel, which then
    compiles the chosen kernel only. A branch on ``flag is None`` is pruned before compiling when
    the flag is None only: numba keeps both sides for a True flag, whose type (bool) does not say
    which value it holds, and so compiles the code of the None case too."""
    return when_none if flag is None else otherwise


@overload(choose)
def _choose_on_type(flag, when_none, otherwise):
    if isinstance(flag, types.NoneType):
        return lambda flag, when_none, otherwise: when_none
    return lambda flag, when_none, otherwise: otherwise
