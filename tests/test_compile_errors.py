"""How a CompileError reads: the kernel, file and line first, then the offending source line;
the compiler's own frames (a pair per nested statement) never bury it."""
import traceback

import pypto_sim as pto

FLAT = '''
@pto.kernel
def flat(a, n):
    i = pto.get_global_id()
    pto.store(a + i, pto.nosuch(i))
'''

NESTED = '''
@pto.kernel
def nested(a, n):
    i = pto.get_global_id()
    for k in range(4):
        if i < n:
            while k < 2:
                if k > 0:
                    pto.store(a + i, pto.nosuch(i))
'''


def _formatted(kernel):
    try:
        pto.launch(kernel, grid=1, args=(pto.alloc_tensor(128), 32))
    except pto.CompileError as exc:
        return exc, "".join(traceback.format_exception(exc)).splitlines()
    raise AssertionError("no CompileError")


def test_the_message_names_the_line_and_shows_its_source(make_kernels):
    """make_kernels writes "import pypto_sim as pto" on line 1, so the store of NESTED is on
    line 10: the message starts with the kernel and file:10, then shows that line's text."""
    module = make_kernels(NESTED)
    exc, lines = _formatted(module.nested)
    first, source = str(exc).splitlines()[:2]
    assert first == (f"kernel 'nested', {module.__file__}:10: module 'pypto_sim' has no attribute "
                     "'nosuch'")
    assert source == "    pto.store(a + i, pto.nosuch(i))"
    assert exc.line == 10 and exc.source.strip() == source.strip()


def test_the_traceback_does_not_grow_with_the_kernels_nesting(make_kernels):
    """The same error four statements deep gives a traceback as long as at the top level: the
    frames of the user's launch and the runtime down to the compile call, then the message;
    nothing of the compiler's recursion (codegen, expressions), no chained exception."""
    flat = _formatted(make_kernels(FLAT).flat)[1]
    nested = _formatted(make_kernels(NESTED).nested)[1]
    assert len(nested) == len(flat) <= 16
    text = "\n".join(nested)
    assert "codegen.py" not in text and "expressions.py" not in text
    assert "During handling" not in text and "direct cause" not in text
    assert nested[-2].startswith("pypto_sim.errors.CompileError: kernel 'nested', ")
    assert nested[-1] == "    pto.store(a + i, pto.nosuch(i))"
