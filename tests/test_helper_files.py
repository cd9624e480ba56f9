"""A @pto.kernel helper defined in another file than the kernel that calls it (a utilities
module): its instructions are inlined into the kernel's program, whose instructions record a
line of the kernel's file. So a run-time error inside the helper names the kernel's file and the
line of the call (not the helper's line number in the kernel's file, which is some other
statement), and a compile error inside it names the helper's own file, line and text."""
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto

HELPERS = '''
# padding, so that the helper's lines are lines of the kernel's file too
#
#
#
@pto.kernel
def scale_into(dst, src, i):
    pto.store(dst + i, pto.load(src + i) * 2.0)


@pto.kernel
def bad_helper(x):
    y = [x]
    return x
'''

KERNELS = '''
from {helpers} import scale_into, bad_helper


@pto.kernel
def scaled(dst, src, n):
    i = pto.get_global_id()
    if i < n + 1:
        scale_into(dst, src, i)


@pto.kernel
def broken(n):
    z = bad_helper(pto.get_global_id())
'''


def line_of(module, text) -> int:
    """The 1-based line of module's file whose stripped text is text."""
    lines = Path(module.__file__).read_text().splitlines()
    return next(k + 1 for k, line in enumerate(lines) if line.strip() == text)


def modules(make_kernels):
    helpers = make_kernels(HELPERS)
    return helpers, make_kernels(KERNELS.format(helpers=helpers.__name__))


def test_run_time_errors_and_listings_point_at_the_call_of_a_helper_from_another_file(make_kernels):
    """The lane past n reads src[n], out of bounds, inside scale_into: the OutOfBoundsError names the
    kernel's file and the line `scale_into(dst, src, i)`; the listing puts the helper's instructions
    on that line too."""
    helpers, kernels = modules(make_kernels)
    n = 32
    args = (pto.to_device(np.zeros(n, np.float32)), pto.to_device(np.ones(n, np.float32)), n)
    with pytest.raises(pto.OutOfBoundsError) as info:
        pto.launch(kernels.scaled, grid=(1,), block=(64,), args=args)
        pto.sync()
    call = line_of(kernels, "scale_into(dst, src, i)")
    assert (info.value.file, info.value.line) == (kernels.__file__, call)
    listing = kernels.scaled.asm(args=args)
    load = next(line for line in listing.splitlines() if " LOAD." in line)
    assert f"; {call}: scale_into(dst, src, i)" in load


def test_a_compile_error_in_a_helper_from_another_file_names_the_helpers_line(make_kernels):
    """`y = [x]` in bad_helper is refused at its own file and line, with its own text (not the text
    of the kernel file's line of that number)."""
    helpers, kernels = modules(make_kernels)
    with pytest.raises(pto.CompileError) as info:
        kernels.broken.program_for((1,))
    err = info.value
    assert (err.file, err.line) == (helpers.__file__, line_of(helpers, "y = [x]"))
    assert "y = [x]" in str(err)
