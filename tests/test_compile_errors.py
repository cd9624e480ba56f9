"""How a CompileError reads: the kernel, file and line first, then the offending source line;
the compiler's own frames (a pair per nested statement) never bury it."""
import traceback

import pytest

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


LANE_INT = '''
@pto.kernel
def lane(a, n):
    {line}
        pass
'''


@pytest.mark.parametrize("line, operand, value", [
    ("with pto.pipeline(depth=2.0) as pl:", "pto.pipeline: depth", "2.0"),
    ("if n > 0:\n        t = pto.alloc_local(64.0, pto.float32)", "pto.alloc_local: n_elems", "64.0"),
    ("if n > 0:\n        x = pto.local_array(4.5, pto.float32)", "pto.local_array: n", "4.5"),
])
def test_a_float_size_of_a_lane_kernel_names_the_operand_and_its_value(make_kernels, line, operand, value):
    """A buffer's size or a pipeline's depth is an int: a float constant, 64.0 as well as 4.5,
    is a CompileError naming the operand and the value, at its line (5 or 6), not its int."""
    with pytest.raises(pto.CompileError) as info:
        make_kernels(LANE_INT.format(line=line)).lane.program_for((pto.alloc_tensor(128), 32))
    assert f"{operand}: the float constant {value} cannot be used as int32" in str(info.value)
    assert info.value.kernel == "lane" and info.value.line == 5 + line.count("\n")


@pytest.mark.parametrize("call, hint", [
    ("math.sqrt(x)", "use pto.sqrt, the kernel's own sqrt"),
    ("round(x)", "compute it with pto builtins"),
    ("helper(x)", "decorate 'helper' with @pto.kernel to inline it"),
])
def test_a_python_function_called_in_a_kernel_names_what_to_use_instead(make_kernels, call, hint):
    """A kernel cannot run Python code: math.sqrt has a pto twin (pto.sqrt), round has none,
    and a function of the kernel's own module can be inlined by decorating it."""
    source = ("\nimport math\n\ndef helper(v):\n    return v + 1.0\n\n@pto.kernel\ndef k(X):\n"
              "    i = pto.get_global_id()\n    x = pto.load(X + i)\n"
              f"    pto.store(X + i, {call})\n")
    with pytest.raises(pto.CompileError, match="a kernel cannot call Python code") as info:
        make_kernels(source).k.program_for((pto.alloc_tensor(128),))
    assert hint in info.value.hint


@pytest.mark.parametrize("expr, message, hint", [
    ("o - a", r"'o - a': two pointers cannot be subtracted \(a pointer difference is not a value in a kernel\): "
              r"a pointer only takes an integer offset added or subtracted \(a \+ i, i \+ a, a - i\)",
     "subtract the element offsets instead"),
    ("a + o", r"'a \+ o': two pointers cannot be added: a pointer only takes an integer offset",
     "add an integer offset to one pointer"),
    ("a * 2", r"'a \* 2': the pointer 'a' cannot be multiplied: a pointer only takes an integer offset added or "
              r"subtracted", "pto.load(a)"),
    ("(a + i) // 2", r"'\(a \+ i\) // 2': the pointer 'a' cannot be divided", "pto.load(a + i)"),
    ("2 - a", r"'2 - a': the pointer 'a' cannot be subtracted from a value", "pto.load(a)"),
])
def test_an_operator_a_pointer_does_not_take_says_so(make_kernels, expr, message, hint):
    """A pointer (a tensor argument plus an element offset) takes an integer offset added or
    subtracted: a + i, i + a, a - i are addresses. Every other operator on one is a CompileError
    on its line that names the operator (the difference of two pointers said 'cannot be added';
    'a * 2' said the pointer was 'used where a value is needed in 'a''), says what a pointer
    takes, and hints at what to write: read the element first (pto.load(a)), or scale the offset."""
    m = make_kernels(f"@pto.kernel\ndef bad(a, o):\n    i = pto.get_global_id()\n    d = {expr}\n    o[i] = 1.0\n")
    with pytest.raises(pto.CompileError, match=message) as err:
        m.bad.asm(grid=(1, 1, 1), block=(32, 1, 1), args=(pto.alloc_tensor(128), pto.alloc_tensor(128)))
    assert err.value.line == 5 and hint in err.value.hint
