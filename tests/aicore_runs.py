"""One-block AI-core kernels k(X, O) that several test files run: run one and read O back,
or compile one and expect its CompileError."""
import textwrap

import numpy as np
import pytest

import pypto_sim as pto


def run(make_kernels, source, inputs, out_shape, out_dtype, extra=()):
    """Compile `source` (a kernel k(X, O, *extra)), copy `inputs` in, launch one block, return O."""
    mod = make_kernels(source)
    x = pto.alloc_tensor(inputs.nbytes, getattr(pto, inputs.dtype.name))
    pto.memcpy_h2d(x, inputs)
    o = pto.alloc_tensor(int(np.prod(out_shape)) * np.dtype(out_dtype).itemsize, getattr(pto, np.dtype(out_dtype).name))
    pto.launch(mod.k, grid=(1,), args=(x, o, *extra), check="all")
    pto.sync()
    got = np.empty(out_shape, out_dtype)
    pto.memcpy_d2h(got, o)
    return got


def compile_error(make_kernels, body, message):
    """The CompileError (matching message) of a kernel k(X, O) whose vector section is body."""
    source = "\n@pto.kernel\ndef k(X, O):\n    with pto.vector():\n" + textwrap.indent(textwrap.dedent(body), " " * 8)
    with pytest.raises(pto.CompileError, match=message):
        make_kernels(source).k.program_for((pto.alloc_tensor(256), pto.alloc_tensor(256)))


def compile_error_at(kernel, args, message, culprit):
    """kernel.program_for(args) raises a CompileError matching message (literally) whose line
    is the source line culprit (stripped): the error points at the offending statement."""
    from pathlib import Path
    import re
    with pytest.raises(pto.CompileError, match=re.escape(message)) as info:
        kernel.program_for(args)
    assert Path(info.value.file).read_text().splitlines()[info.value.line - 1].strip() == culprit
    return info.value


def tiles_then_call(make_kernels, tiles, call, message):
    """A vector kernel allocating ``tiles`` (name -> pto.alloc_tile(...) text, in order) and then
    running ``call``: it compiles when message is None, else its CompileError matches message at
    the call's line (compile_error_at)."""
    body = "\n".join(" " * 8 + f"{n} = {t}" for n, t in tiles.items()) + "\n" + " " * 8 + call
    mod = make_kernels("\n@pto.kernel\ndef bad(A):\n    with pto.vector():\n" + body + "\n")
    if message is None:
        mod.bad.program_for((pto.alloc_tensor(256),))
    else:
        compile_error_at(mod.bad, (pto.alloc_tensor(256),), message, call)


def host_copy(tensor, shape, dtype):
    """The device tensor's elements copied to a new host array of shape and dtype."""
    out = np.empty(shape, dtype)
    pto.memcpy_d2h(out, tensor)
    return out


def run_both_modes(kernel, make_args, read, check=None):
    """read(args) after a one-block launch of kernel in timing and then functional mode, each on fresh
    args from make_args(); the two must be equal (a race-free kernel computes the same in both).
    ``check`` (e.g. ("sync", "race")) is the timing launch's; the functional one runs unchecked."""
    got = []
    for mode in ("timing", "functional"):
        args = make_args()
        pto.launch(kernel, grid=(1,), args=args, mode=mode, check=check if mode == "timing" else None)
        pto.sync()
        got.append(read(args))
    np.testing.assert_array_equal(got[0], got[1])
    return got[0]
