"""Arrays a kernel borrows from its caller: the same data, shape and strides, without the reference count.

A numba array carries a pointer to the block that owns its memory (its meminfo), and compiled code
counts references on it: every view a kernel takes (a row ``alpha[t]``, a slice ``w[lo:hi]``)
increments the count when made and decrements it when dropped, with atomic instructions. An array
that came from Python has such a block; a kernel spends as long on the counting as on its
arithmetic when it takes several views per token (a CRF's forward-backward over 9 labels ran 1.8
times as long on a serial kernel as in a ``prange`` body, whose arrays numba passes without the
block). On two threads the counts of a shared array also move its cache line between the cores.

``borrowed(x)`` returns x with the block of every array in it (an array, or a tuple or named tuple
of them, nested) set to null, so that counting on it and on its views does nothing. The caller
keeps the arrays alive: a kernel borrows its arguments for the length of the call, and never
returns a borrowed array or stores it where it outlives the call. Arrays the kernel allocates
itself are counted as before.
"""
from numba.core import cgutils, types
from numba.extending import intrinsic


def _without_owner(context, builder, typ, value):
    if isinstance(typ, types.Array):
        array = context.make_array(typ)(context, builder, value)
        array.meminfo = cgutils.get_null_value(array.meminfo.type)
        array.parent = cgutils.get_null_value(array.parent.type)
        return array._getvalue()
    if isinstance(typ, types.BaseTuple):
        for i, item in enumerate(typ):
            value = builder.insert_value(value, _without_owner(context, builder, item,
                                                               builder.extract_value(value, i)), i)
    return value


@intrinsic
def borrowed(typingctx, x):
    """x with the arrays in it borrowed (see the module's docstring): of x's type."""
    def codegen(context, builder, signature, arguments):
        return _without_owner(context, builder, signature.args[0], arguments[0])

    return x(x), codegen
