"""Every instruction of the ISA against numpy, on the values where arithmetic goes wrong.

Each value-computing instruction runs in a real kernel (timing and functional mode; lane and,
for ALU instructions, uniform operands) over every pair of special values of its dtype:
signed zeros, subnormals, the largest finite values, infinities, NaN, rounding ties and
int32's ends. The result must be numpy's, word for word: NaN equals NaN, +0.0 and -0.0 differ.

Where numpy computes a float32 transcendental with its own approximation (exp, log), the
reference is the correctly rounded value (float64, then rounded once), which is what the
executor promises; every other instruction must equal numpy's own result exactly. Float to
int32 conversion saturates and maps NaN to 0 (CUDA's cvt.rzi.sat, also Ascend's CAST with
truncation); numpy leaves that undefined, so the reference spells it out.

``test_every_instruction_is_covered`` fails when an instruction is added to isa/*.toml without
a case here (or a reason why it computes no values).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.isa import load_isa

F32_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 0.7, 1.401298464324817e-45,
               1.1754943508222875e-38, 3.4028234663852886e38, -3.4028234663852886e38,
               np.inf, -np.inf, np.nan, 1e20, 16777217.0, -7.25, 2.0 ** -126 * 0.75]
F16_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 0.1, 5.960464477539063e-08,
               6.103515625e-05, 65504.0, -65504.0, np.inf, -np.inf, np.nan, 1000.0, 2049.0,
               -7.25]
I32_SPECIAL = [0, 1, -1, 2, -2, 7, -7, 31, 32, 33, 2**31 - 1, -2**31, 12345, -99999, 65536]
SPECIAL = {"float32": F32_SPECIAL, "float16": F16_SPECIAL, "int32": I32_SPECIAL}


def _np(dtype):
    return np.dtype(dtype)


def _values(dtype):
    with np.errstate(over="ignore"):
        return np.array(SPECIAL[dtype], dtype=_np(dtype))


def _pairs(dtype):
    v = _values(dtype)
    a, b = zip(*itertools.product(v, v))
    return np.array(a, v.dtype), np.array(b, v.dtype)


def correctly_rounded(fn, dtype):
    def ref(*xs):
        with np.errstate(all="ignore"):
            return fn(*(x.astype(np.float64) for x in xs)).astype(_np(dtype))
    return ref


def saturating_to_int32(x):
    x = np.asarray(x, np.float64)
    out = np.where(np.isnan(x), 0.0, np.clip(np.trunc(x), -2**31, 2**31 - 1))
    return out.astype(np.int32)


def _shl(a, b):
    return np.where((b >= 0) & (b < 32), np.left_shift(a, np.clip(b, 0, 31)), 0).astype(np.int32)


def _shr(a, b):
    return np.where((b >= 0) & (b < 32), np.right_shift(a, np.clip(b, 0, 31)),
                    np.where(a < 0, -1, 0)).astype(np.int32)


# name -> (kernel expression over x, y, z; numpy reference; dtypes; arity)
ALU = {
    "ADD": ("x + y", np.add, ("float32", "float16", "int32"), 2),
    "SUB": ("x - y", np.subtract, ("float32", "float16", "int32"), 2),
    "MUL": ("x * y", np.multiply, ("float32", "float16", "int32"), 2),
    "DIV": ("x / y", np.true_divide, ("float32", "float16"), 2),
    "FLOORDIV": ("x // y", "floordiv", ("float32", "float16", "int32"), 2),
    "MOD": ("x % y", np.remainder, ("float32", "float16", "int32"), 2),
    "MIN": ("pto.min(x, y)", np.minimum, ("float32", "float16", "int32"), 2),
    "MAX": ("pto.max(x, y)", np.maximum, ("float32", "float16", "int32"), 2),
    "AND": ("x & y", np.bitwise_and, ("int32",), 2),
    "OR": ("x | y", np.bitwise_or, ("int32",), 2),
    "XOR": ("x ^ y", np.bitwise_xor, ("int32",), 2),
    "SHL": ("x << y", _shl, ("int32",), 2),
    "SHR": ("x >> y", _shr, ("int32",), 2),
    "ABS": ("pto.abs(x)", np.abs, ("float32", "float16", "int32"), 1),
    "NEG": ("-x", np.negative, ("float32", "float16", "int32"), 1),
    "INV": ("~x", np.invert, ("int32",), 1),
    "EXP": ("pto.exp(x)", "rounded:exp", ("float32", "float16"), 1),
    "LOG": ("pto.log(x)", "rounded:log", ("float32", "float16"), 1),
    "SQRT": ("pto.sqrt(x)", np.sqrt, ("float32", "float16"), 1),
    "RSQRT": ("pto.rsqrt(x)", "rounded:rsqrt", ("float32", "float16"), 1),
    "LT": ("pto.select(x < y, 1, 0)", np.less, ("float32", "float16", "int32"), 2),
    "LE": ("pto.select(x <= y, 1, 0)", np.less_equal, ("float32", "float16", "int32"), 2),
    "GT": ("pto.select(x > y, 1, 0)", np.greater, ("float32", "float16", "int32"), 2),
    "GE": ("pto.select(x >= y, 1, 0)", np.greater_equal, ("float32", "float16", "int32"), 2),
    "EQ": ("pto.select(x == y, 1, 0)", np.equal, ("float32", "float16", "int32"), 2),
    "NE": ("pto.select(x != y, 1, 0)", np.not_equal, ("float32", "float16", "int32"), 2),
    "NOT": ("pto.select(not (x < y), 1, 0)", lambda a, b: ~np.less(a, b), ("float32", "int32"), 2),
    "SELECT": ("pto.select(x < y, x, y)", lambda a, b: np.where(a < b, a, b),
               ("float32", "float16", "int32"), 2),
    "FMA": ("pto.fma(None, x, y, x)", "fma", ("float32", "float16", "int32"), 2),
}
ROUNDED = {"exp": np.exp, "log": np.log, "rsqrt": lambda a: 1.0 / np.sqrt(a)}
COMPARES = {"LT", "LE", "GT", "GE", "EQ", "NE", "NOT"}


def _reference(name, dtype, a, b):
    expr, fn, _dtypes, arity = ALU[name]
    args = (a, b)[:arity]
    with np.errstate(all="ignore"):
        if fn == "fma":
            if dtype == "int32":
                return (a.astype(np.int64) * b + a).astype(np.int32)       # wraps
            return (a.astype(np.float64) * b + a).astype(_np(dtype))         # one rounding
        if fn == "floordiv":
            # numpy's float32 loop rounds its intermediate quotient to float32, so for
            # |a / b| >= 2**24 it can land a few ulps off the true floor; the executor gives
            # the floor of the exact quotient (numpy's float64 result, rounded once)
            if dtype == "int32":
                return np.floor_divide(a, b)
            return correctly_rounded(np.floor_divide, dtype)(a, b)
        if isinstance(fn, str):
            return correctly_rounded(ROUNDED[fn.split(":")[1]], dtype)(*args)
        out = fn(*args)
    if name in COMPARES:
        return out.astype(_np(dtype)) if dtype != "int32" else out.astype(np.int32)
    return np.asarray(out).astype(_np(dtype))


def _min_max_of_zeros(name, a, b):
    """IEEE 754 leaves the sign of min(+0, -0) and max(+0, -0) open, and numpy's own float32
    and float16 loops pick differently; the executor keeps the first operand when neither is
    smaller."""
    if name in ("MIN", "MAX", "TMIN", "TMAX", "SELECT", "ATOM_MIN", "ATOM_MAX"):
        return (a == 0) & (b == 0)
    return None


ALU_KERNEL = """
@pto.kernel
def lane_op(a, b, o, n):
    i = pto.get_global_id()
    if i < n:
        x = pto.load(a + i)
        y = pto.load(b + i)
        pto.store(o + i, {expr})

@pto.kernel
def uniform_op(a, b, o, n):
    k = pto.get_block_id()
    x = pto.load(a + k)
    y = pto.load(b + k)
    pto.store(o + k, {expr})
"""


def _tensor(host):
    d = pto.alloc_tensor(host.nbytes, dtype=host.dtype)
    pto.memcpy_h2d(d, host)
    return d


def assert_same(got, want, what, zero_sign_open=None):
    """Equal word for word: NaN equal to NaN, and the sign of zero told apart (except where
    zero_sign_open marks it as unspecified)."""
    np.testing.assert_array_equal(got, want, err_msg=what)
    if got.dtype.kind == "f":
        keep = ~np.isnan(want)
        if zero_sign_open is not None:
            keep &= ~zero_sign_open
        np.testing.assert_array_equal(np.signbit(got) & keep, np.signbit(want) & keep,
                                      err_msg=f"{what}: sign of zero differs")


def _alu_cases():
    for name, (_e, _f, dts, _a) in ALU.items():
        for dt in dts:
            yield pytest.param(name, dt, id=f"{name}-{dt}")


@pytest.mark.parametrize("name,dtype", list(_alu_cases()))
def test_alu_instruction_on_special_values(make_kernels, name, dtype):
    expr = ALU[name][0]
    mod = make_kernels(ALU_KERNEL.format(expr=expr))
    a, b = _pairs(dtype)
    n = len(a)
    want = _reference(name, dtype, a, b)
    assert name in mod.lane_op.asm(args=(_tensor(a), _tensor(b), _tensor(np.zeros_like(want)), n))
    for kernel, grid, block in ((mod.lane_op, (-(-n // 128), 1, 1), (128, 1, 1)),
                                (mod.uniform_op, (n, 1, 1), (32, 1, 1))):
        for mode in ("timing", "functional"):
            ta, tb, out = _tensor(a), _tensor(b), _tensor(np.zeros_like(want))
            pto.launch(kernel, grid=grid, block=block, args=(ta, tb, out, n), mode=mode)
            got = np.empty_like(want)
            pto.memcpy_d2h(got, out)
            assert_same(got, want, f"{name} {dtype} {kernel.name} {mode}",
                        _min_max_of_zeros(name, a, b))


CASTS = [(s, d) for s in ("float32", "float16", "int32") for d in ("float32", "float16", "int32")
         if s != d]


def _cast_reference(x, dst):
    if dst == "int32":
        return saturating_to_int32(x)
    with np.errstate(over="ignore"):
        return x.astype(_np(dst))


@pytest.mark.parametrize("src,dst", CASTS, ids=[f"{s}-{d}" for s, d in CASTS])
def test_cast_on_special_values(make_kernels, src, dst):
    mod = make_kernels(f"""
@pto.kernel
def convert(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.cast(pto.load(a + i), pto.{dst}))
""")
    x = _values(src)
    want = _cast_reference(x, dst)
    for mode in ("timing", "functional"):
        tx, out = _tensor(x), _tensor(np.zeros_like(want))
        pto.launch(mod.convert, grid=(1, 1, 1), block=(32, 1, 1), args=(tx, out, len(x)), mode=mode)
        got = np.empty_like(want)
        pto.memcpy_d2h(got, out)
        assert_same(got, want, f"cast {src} -> {dst} {mode}")


MEMORY_KERNELS = """
@pto.kernel
def through_hbm(a, o, n):
    i = pto.get_global_id()
    if i < n:
        w = pto.load(a + i)
        v = pto.cast(0, pto.{dt})
        v = w
        pto.store(o + i, v)

@pto.kernel
def through_l1(a, o, n):
    i = pto.get_local_id()
    buf = pto.alloc_local(64, dtype=pto.{dt})
    if i < n:
        pto.store(buf + i, pto.load(a + i))
        pto.store(o + i, pto.load(buf + i))

@pto.kernel
def fma_store(a, o, n):
    i = pto.get_global_id()
    if i < n:
        x = pto.load(a + i)
        pto.fma(o + i, x, x, x)

@pto.kernel
def through_local_array(a, o, n):
    i = pto.get_global_id()
    arr = pto.local_array(2, pto.{dt})
    if i < n:
        k = i % 2
        arr[k] = pto.load(a + i)
        pto.store(o + i, arr[k])

@pto.kernel
def through_tiles(a, o, n):
    t = pto.alloc_local(64, dtype=pto.{dt})
    pto.async_load(t, a, rows=1, cols=n, stride=n)
    pto.wait_all()
    pto.store(o, t, rows=1, cols=n, stride=n)
"""


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_memory_instructions_keep_every_bit(make_kernels, dtype):
    """LOAD, STORE, MOV, LOAD_L1, STORE_L1, TLOAD, TSTORE, LOCAL_STORE and LOCAL_LOAD move
    values unchanged (the
    sign of zero, subnormals, infinities and NaN included); FMA_STORE stores x * x + x."""
    mod = make_kernels(MEMORY_KERNELS.format(dt=dtype))
    x = _values(dtype)
    n = len(x)
    args = (_tensor(x), _tensor(np.zeros_like(x)), n)
    assert "MOV" in mod.through_hbm.asm(args=args)
    with np.errstate(all="ignore"):
        fma_want = (x.astype(np.int64) * x + x).astype(np.int32) if dtype == "int32" else \
            (x.astype(np.float64) * x + x).astype(x.dtype)
    for kernel, want in ((mod.through_hbm, x), (mod.through_l1, x), (mod.fma_store, fma_want),
                         (mod.through_tiles, x), (mod.through_local_array, x)):
        for mode in ("timing", "functional"):
            tx, out = _tensor(x), _tensor(np.zeros_like(x))
            pto.launch(kernel, grid=(1, 1, 1), block=(32, 1, 1), args=(tx, out, n), mode=mode)
            got = np.empty_like(x)
            pto.memcpy_d2h(got, out)
            assert_same(got, want, f"{kernel.name} {dtype} {mode}")


# tile instructions: name -> (call, numpy reference, dtypes)
TILE = {
    "TADD": ("pto.tadd(d, s, t, N)", np.add, ("float32", "float16", "int32")),
    "TSUB": ("pto.tsub(d, s, t, N)", np.subtract, ("float32", "float16", "int32")),
    "TMUL": ("pto.tmul(d, s, t, N)", np.multiply, ("float32", "float16", "int32")),
    "TDIV": ("pto.tdiv(d, s, t, N)", np.true_divide, ("float32", "float16")),
    "TMAX": ("pto.tmax(d, s, t, N)", np.maximum, ("float32", "float16", "int32")),
    "TMIN": ("pto.tmin(d, s, t, N)", np.minimum, ("float32", "float16", "int32")),
    "TEXP": ("pto.texp(d, s, N)", "rounded:exp", ("float32", "float16")),
    "TLOG": ("pto.tlog(d, s, N)", "rounded:log", ("float32", "float16")),
    "TSQRT": ("pto.tsqrt(d, s, N)", np.sqrt, ("float32", "float16")),
    "TADDS": ("pto.tadds(d, s, SCALAR, N)", lambda a, s: a + s, ("float32", "float16", "int32")),
    "TMULS": ("pto.tmuls(d, s, SCALAR, N)", lambda a, s: a * s, ("float32", "float16", "int32")),
    "TMAXS": ("pto.tmaxs(d, s, SCALAR, N)", lambda a, s: np.maximum(a, s),
              ("float32", "float16", "int32")),
    "TABS": ("pto.tabs(d, s, N)", np.abs, ("float32", "float16")),  # A2/A3: float only (TUnaryOp.hpp)
    "TNEG": ("pto.tneg(d, s, N)", np.negative, ("float32", "float16", "int32")),
    "TRELU": ("pto.trelu(d, s, N)", lambda a: np.where(a > 0, a, np.zeros_like(a)), ("float32", "float16", "int32")),
    "TRECIP": ("pto.trecip(d, s, N)", lambda a: np.ones_like(a) / a, ("float32", "float16")),
    "TRSQRT": ("pto.trsqrt(d, s, N)", "rounded:rsqrt", ("float32", "float16")),
    "TNOT": ("pto.tnot(d, s, N)", np.invert, ("int32",)),
    "TAND": ("pto.tand(d, s, t, N)", np.bitwise_and, ("int32",)),
    "TOR": ("pto.tor(d, s, t, N)", np.bitwise_or, ("int32",)),
    "TXOR": ("pto.txor(d, s, t, N)", np.bitwise_xor, ("int32",)),
    "TSHL": ("pto.tshl(d, s, t, N)", lambda a, b: np.where((b >= 0) & (b < 32), np.left_shift(a, np.clip(b, 0, 31)), 0).astype(a.dtype), ("int32",)),
    "TSHR": ("pto.tshr(d, s, t, N)", lambda a, b: np.where((b >= 0) & (b < 32), np.right_shift(a, np.clip(b, 0, 31)), np.where(a < 0, -1, 0)).astype(a.dtype), ("int32",)),
    "TPRELU": ("pto.tprelu(d, s, t, N)", lambda a, b: np.where(a > 0, a, a * b), ("float32", "float16")),
    "TSUBS": ("pto.tsubs(d, s, SCALAR, N)", lambda a, s: a - s, ("float32", "float16", "int32")),
    "TDIVS": ("pto.tdivs(d, s, SCALAR, N)", lambda a, s: a / s, ("float32", "float16")),
    "TSDIVS": ("pto.tdivs(d, SCALAR, s, N)", lambda a, s: s / a, ("float32", "float16")),  # the scalar first
    "TMINS": ("pto.tmins(d, s, SCALAR, N)", lambda a, s: np.minimum(a, s), ("float32", "float16", "int32")),
    "TLRELU": ("pto.tlrelu(d, s, SCALAR, N)", lambda a, s: np.where(a > 0, a, a * s), ("float32", "float16")),
    "TANDS": ("pto.tands(d, s, SCALAR, N)", lambda a, s: np.bitwise_and(a, s), ("int32",)),
    "TORS": ("pto.tors(d, s, SCALAR, N)", lambda a, s: np.bitwise_or(a, s), ("int32",)),
    "TXORS": ("pto.txors(d, s, SCALAR, N)", lambda a, s: np.bitwise_xor(a, s), ("int32",)),
    "TSHLS": ("pto.tshls(d, s, SCALAR, N)", lambda a, s: (np.left_shift(a, s) if 0 <= s < 32 else np.zeros_like(a)).astype(a.dtype), ("int32",)),
    "TSHRS": ("pto.tshrs(d, s, SCALAR, N)", lambda a, s: (np.right_shift(a, s) if 0 <= s < 32 else np.where(a < 0, -1, 0)).astype(a.dtype), ("int32",)),
    "TSUBRELU": ("pto.tsubrelu(d, s, t, N)", lambda a, b: np.where(a - b > 0, a - b, np.zeros_like(a)), ("float32", "float16")),
    "TREM": ("pto.trem(d, s, t, N)", np.remainder, ("float32", "int32")),
    "TFMOD": ("pto.tfmod(d, s, t, N)", np.fmod, ("float32",)),
    "TREMS": ("pto.trems(d, s, SCALAR, N)", np.remainder, ("float32", "int32")),
    "TFMODS": ("pto.tfmods(d, s, SCALAR, N)", np.fmod, ("float32",)),
    "TPOW": ("pto.tpow(d, s, t, N)", lambda a, b: c_pow(a, b), ("float32",)),
    "TPOWS": ("pto.tpows(d, s, SCALAR, N)", lambda a, s: c_pow(a, s), ("float32",)),
    # dst is read too: d first holds t (b) or, for TAXPY, s (a); x * 1 copies every value
    "TMULADDDST": ("pto.tmuls(d, t, 1, N)\n    pto.tmuladddst(d, s, t, N)",
                   lambda a, b: product(a, b) + b, ("float32", "float16")),
    "TFUSEDMULADD": ("pto.tmuls(d, t, 1, N)\n    pto.tfusedmuladd(d, s, t, N)",
                     lambda a, b: product(a, b) + b, ("float32", "float16")),
    "TFUSEDMULADDRELU": ("pto.tmuls(d, t, 1, N)\n    pto.tfusedmuladdrelu(d, s, t, N)",
                         lambda a, b: relu(product(a, b) + b), ("float32", "float16")),
    "TAXPY": ("pto.tmuls(d, s, 1, N)\n    pto.taxpy(d, s, SCALAR, N)", lambda a, s: product(s, a) + a,
              ("float32", "float16")),
    "TEXPANDS": ("pto.texpands(d, SCALAR, N)", lambda a, s: np.full_like(a, s), ("float32", "float16", "int32")),
}


def f64(x):
    """x in float64."""
    return np.asarray(x, dtype=np.float64)


def product(x, y):
    """x * y rounded to x's dtype, in float64: the tile multiply-adds round their product to the
    dtype before the add (isa/40_fused_scalar.toml), so 65504 * 2 is inf in float16 whatever
    is added to it; the sum is then rounded once more, by the caller's astype."""
    return f64(f64(x) * y).astype(np.asarray(x).dtype).astype(np.float64)


def relu(x):
    """x where x > 0, else +0.0 (NaN too), as TRELU."""
    return np.where(x > 0, x, 0.0)


def c_pow(a, b):
    """C99's pow in float64 (numpy's own pow differs at -0.0 and -inf to a fractional power:
    C gives +0 and +inf, the magnitude's power)."""
    a, b = f64(a), f64(b)
    fractional = (b != np.floor(b)) & ((a == 0) | (a == -np.inf))
    return np.where(fractional, np.power(np.abs(a), b), np.power(a, b))
TILE_SCALARS = {"float32": ["-float('inf')", "0.7", "-0.0", "float('nan')", "3.0e38"],
                "float16": ["-float('inf')", "0.1", "65504.0"],
                "int32": ["-1", "2147483647", "7"]}

TILE_KERNEL = """
@pto.kernel
def tile_op(a, b, o):
    s = pto.alloc_local(N, dtype=pto.{dt})
    t = pto.alloc_local(N, dtype=pto.{dt})
    d = pto.alloc_local(N, dtype=pto.{dt})
    pto.async_load(s, a, rows=1, cols=N, stride=N)
    pto.async_load(t, b, rows=1, cols=N, stride=N)
    pto.wait_all()
    {call}
    pto.wait_all()
    pto.store(o, d, rows=1, cols=N, stride=N)
"""


def _tile_cases():
    for name, (call, _f, dts) in TILE.items():
        for dt in dts:
            scalars = TILE_SCALARS[dt] if "SCALAR" in call else [None]
            for k, scalar in enumerate(scalars):
                yield pytest.param(name, dt, scalar, id=f"{name}-{dt}-{k}")


@pytest.mark.parametrize("name,dtype,scalar", list(_tile_cases()))
def test_tile_instruction_on_special_values(make_kernels, name, dtype, scalar):
    call, fn, _dts = TILE[name]
    a, b = _pairs(dtype)
    n = len(a)
    src = f"N = {n}\n" + TILE_KERNEL.format(dt=dtype, call=call.replace("SCALAR", str(scalar)))
    mod = make_kernels(src)
    with np.errstate(all="ignore"):
        if isinstance(fn, str):
            want = correctly_rounded(ROUNDED[fn.split(":")[1]], dtype)(a)
        elif scalar is not None:
            s = np.array(eval(scalar), dtype=_np(dtype))
            want = np.asarray(fn(a, s)).astype(_np(dtype))
        elif call.count(",") == 2:
            want = np.asarray(fn(a)).astype(_np(dtype))
        else:
            want = np.asarray(fn(a, b)).astype(_np(dtype))
    ta, tb, out = _tensor(a), _tensor(b), _tensor(np.zeros_like(a))
    pto.launch(mod.tile_op, grid=(1, 1, 1), block=(32, 1, 1), args=(ta, tb, out))
    got = np.empty_like(a)
    pto.memcpy_d2h(got, out)
    assert_same(got, want, f"{name} {dtype} scalar={scalar}", _min_max_of_zeros(name, a, b))


ROW_KERNEL = """
@pto.kernel
def rows(a, o):
    s = pto.alloc_local(R * C, dtype=pto.{dt})
    r = pto.alloc_local(R, dtype=pto.{dt})
    e = pto.alloc_local(R * C, dtype=pto.{dt})
    pto.async_load(s, a, rows=R, cols=C, stride=C)
    pto.wait_all()
    pto.{op}(r, s, R, C)
    pto.wait_all()
    pto.trowexpand(e, r, R, C)
    pto.wait_all()
    pto.store(o, e, rows=R, cols=C, stride=C)
"""


ROW_FOLDS = {"trowsum": np.add, "trowmax": np.maximum, "trowmin": np.minimum, "trowprod": np.multiply}


@pytest.mark.parametrize("op", list(ROW_FOLDS))
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_row_reductions_and_expand_on_special_values(make_kernels, op, dtype):
    """TROWSUM / TROWPROD fold along the row in order, rounding every partial result to the
    dtype (numpy's accumulate; int32 wraps); TROWMAX / TROWMIN are np.maximum / np.minimum
    .reduce; TROWEXPAND broadcasts."""
    a, b = _pairs(dtype)
    rows = np.concatenate([a, b]).reshape(-1, len(_values(dtype)))
    r, c = rows.shape
    mod = make_kernels(f"R = {r}\nC = {c}\n" + ROW_KERNEL.format(dt=dtype, op=op))
    with np.errstate(all="ignore"):
        fold = ROW_FOLDS[op]
        red = fold.accumulate(rows, axis=1)[:, -1] if op in ("trowsum", "trowprod") else \
            fold.reduce(rows, axis=1)
    want = np.repeat(red[:, None], c, axis=1).astype(rows.dtype)
    tr, out = _tensor(rows), _tensor(np.zeros_like(rows))
    pto.launch(mod.rows, grid=(1, 1, 1), block=(32, 1, 1), args=(tr, out))
    got = np.empty_like(rows)
    pto.memcpy_d2h(got, out)
    assert_same(got, want, f"{op} {dtype}")


COL_FOLDS = {"tcolsum": np.add, "tcolmax": np.maximum, "tcolmin": np.minimum, "tcolprod": np.multiply}
COL_KERNEL = """
@pto.kernel
def cols(x, o):
    s = pto.alloc_local(R * C, dtype=pto.{dt})
    d = pto.alloc_local(C, dtype=pto.{dt})
    e = pto.alloc_local(R * C, dtype=pto.{dt})
    pto.async_load(s, x, rows=R, cols=C, stride=C)
    pto.wait_all()
    pto.{op}(d, s, R, C)
    pto.wait_all()
    pto.tcolexpand(e, d, R, C)
    pto.wait_all()
    pto.store(o, e, rows=R, cols=C, stride=C)
"""


@pytest.mark.parametrize("op", list(COL_FOLDS))
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_column_reductions_on_special_values(make_kernels, op, dtype):
    """TCOLSUM folds down each column in row order, rounding every partial sum to the dtype
    (numpy's add.accumulate along axis 0; int32 wraps); TCOLMAX / TCOLMIN are numpy's
    maximum / minimum .reduce along axis 0; TCOLEXPAND copies the result down every row."""
    a, b = _pairs(dtype)
    x = np.concatenate([a, b]).reshape(len(_values(dtype)), -1)
    r, c = x.shape
    mod = make_kernels(f"R = {r}\nC = {c}\n" + COL_KERNEL.format(dt=dtype, op=op))
    with np.errstate(all="ignore"):
        fold = COL_FOLDS[op]
        want = (fold.accumulate(x, axis=0)[-1] if op == "tcolsum" else fold.reduce(x, axis=0)).astype(x.dtype)
    want = np.broadcast_to(want, (r, c))
    tx, out = _tensor(x), _tensor(np.zeros_like(x))
    pto.launch(mod.cols, grid=(1, 1, 1), block=(32, 1, 1), args=(tx, out))
    got = np.empty_like(x)
    pto.memcpy_d2h(got, out)
    open_sign = None
    if op != "tcolsum":                                   # IEEE leaves max/min(+0, -0) open
        open_sign = np.broadcast_to((x == 0).sum(axis=0) > 0, (r, c))
    assert_same(got, want, f"{op} {dtype}", zero_sign_open=open_sign)


EXPAND_OPS = {"trowexpandsub": np.subtract, "trowexpandadd": np.add, "trowexpandmul": np.multiply,
              "trowexpanddiv": np.true_divide, "trowexpandmax": np.maximum, "trowexpandmin": np.minimum,
              "trowexpandexpdif": "expdif"}
EXPAND_KERNEL = """
@pto.kernel
def rows(x, v, o):
    s = pto.alloc_local(R * C, dtype=pto.{dt})
    w = pto.alloc_local(R, dtype=pto.{dt})
    e = pto.alloc_local(R * C, dtype=pto.{dt})
    pto.async_load(s, x, rows=R, cols=C, stride=C)
    pto.async_load(w, v, rows=1, cols=R, stride=R)
    pto.wait_all()
    pto.{op}(e, s, w, R, C)
    pto.wait_all()
    pto.store(o, e, rows=R, cols=C, stride=C)
"""


@pytest.mark.parametrize("op,dtype", [(op, dt) for op in EXPAND_OPS for dt in ("float32", "float16", "int32")
                                         if dt in load_isa()[op.upper()].dtypes])
def test_row_expand_ops_on_special_values(make_kernels, op, dtype):
    """TROWEXPAND<op>: every element of a row with that row's value of v, numpy's op in the
    dtype (EXPDIF: exp(a - v), correctly rounded from float64), in each dtype the table gives."""
    vals = _values(dtype)
    rows = np.tile(vals, (len(vals), 1))                  # every value against every row value
    v = vals.copy()
    r, c = rows.shape
    mod = make_kernels(f"R = {r}\nC = {c}\n" + EXPAND_KERNEL.format(dt=dtype, op=op))
    with np.errstate(all="ignore"):
        fn = EXPAND_OPS[op]
        if fn == "expdif":
            want = correctly_rounded(lambda a, b: np.exp(a - b), dtype)(rows, v[:, None])
        else:
            want = fn(rows, v[:, None]).astype(rows.dtype)
    tx, tv, out = _tensor(rows), _tensor(v), _tensor(np.zeros_like(rows))
    pto.launch(mod.rows, grid=(1, 1, 1), block=(32, 1, 1), args=(tx, tv, out))
    got = np.empty_like(rows)
    pto.memcpy_d2h(got, out)
    open_sign = None
    if op in ("trowexpandmax", "trowexpandmin"):      # IEEE leaves max/min(+0, -0) open
        open_sign = (rows == 0) & (np.broadcast_to(v[:, None], rows.shape) == 0)
    assert_same(got, want, f"{op} {dtype}", zero_sign_open=open_sign)


COL_EXPAND_KERNEL = EXPAND_KERNEL.replace("w = pto.alloc_local(R, ", "w = pto.alloc_local(C, ").replace(
    "pto.async_load(w, v, rows=1, cols=R, stride=R)", "pto.async_load(w, v, rows=1, cols=C, stride=C)")


@pytest.mark.parametrize("op,dtype", [(op, dt) for op in EXPAND_OPS for dt in ("float32", "float16", "int32")
                                         if dt in load_isa()[op.upper()].dtypes])
def test_column_expand_ops_on_special_values(make_kernels, op, dtype):
    """TCOLEXPAND<op>: every element of a column with that column's value of v, as the row
    form does by rows."""
    col_op = op.replace("trowexpand", "tcolexpand")
    vals = _values(dtype)
    x = np.tile(vals[:, None], (1, len(vals)))            # every row value against every column value
    v = vals.copy()
    r, c = x.shape
    mod = make_kernels(f"R = {r}\nC = {c}\n" + COL_EXPAND_KERNEL.format(dt=dtype, op=col_op))
    with np.errstate(all="ignore"):
        fn = EXPAND_OPS[op]
        if fn == "expdif":
            want = correctly_rounded(lambda a, b: np.exp(a - b), dtype)(x, v[None, :])
        else:
            want = fn(x, v[None, :]).astype(x.dtype)
    tx, tv, out = _tensor(x), _tensor(v), _tensor(np.zeros_like(x))
    pto.launch(mod.rows, grid=(1, 1, 1), block=(32, 1, 1), args=(tx, tv, out))
    got = np.empty_like(x)
    pto.memcpy_d2h(got, out)
    open_sign = None
    if op in ("trowexpandmax", "trowexpandmin"):
        open_sign = (x == 0) & (np.broadcast_to(v[None, :], x.shape) == 0)
    assert_same(got, want, f"{col_op} {dtype}", zero_sign_open=open_sign)


def test_mma_on_special_values(make_kernels):
    """C[m,n] += A[m,k] @ B[k,n]: each product and the running sum in float64, one rounding
    to float32 at the end (the cube accumulates wider than its inputs)."""
    m, k, n = 4, len(F32_SPECIAL), 4
    rng = np.random.default_rng(7)
    A = rng.choice(_values("float32"), (m, k)).astype(np.float32)
    B = rng.choice(_values("float32"), (k, n)).astype(np.float32)
    C0 = rng.choice(_values("float32"), (m, n)).astype(np.float32)
    mod = make_kernels(f"""
M, K, N = {m}, {k}, {n}
@pto.kernel
def mm(a, b, c):
    ta = pto.alloc_local(M * K)
    tb = pto.alloc_local(K * N)
    tc = pto.alloc_local(M * N)
    pto.async_load(ta, a, rows=M, cols=K, stride=K)
    pto.async_load(tb, b, rows=K, cols=N, stride=N)
    pto.async_load(tc, c, rows=M, cols=N, stride=N)
    pto.wait_all()
    pto.mma(tc, ta, tb, M, N, K)
    pto.wait_all()
    pto.store(c, tc, rows=M, cols=N, stride=N)
""")
    want = np.empty((m, n), np.float64)
    with np.errstate(all="ignore"):
        for i in range(m):
            for j in range(n):
                acc = np.float64(C0[i, j])
                for p in range(k):
                    acc += np.float64(A[i, p]) * np.float64(B[p, j])
                want[i, j] = acc
        want = want.astype(np.float32)
    ta, tb, c = _tensor(A), _tensor(B), _tensor(C0)
    pto.launch(mod.mm, grid=(1, 1, 1), block=(32, 1, 1), args=(ta, tb, c))
    got = np.empty_like(C0)
    pto.memcpy_d2h(got, c)
    assert_same(got, want, "MMA")


WARP_KERNELS = """
@pto.kernel
def shuffles(a, o, n):
    i = pto.get_global_id()
    lane = pto.get_lane_id()
    x = pto.load(a + i)
    pto.store(o + i, pto.shfl_idx(x, lane + 3))
    pto.store(o + n + i, pto.shfl_up(x, 2))
    pto.store(o + 2 * n + i, pto.shfl_down(x, 5))
    pto.store(o + 3 * n + i, pto.shfl_xor(x, 6))

@pto.kernel
def votes(a, o, n):
    i = pto.get_global_id()
    x = pto.load(a + i)
    pto.store(o + i, pto.select(pto.vote_all(x > 0), 1, 0))
    pto.store(o + n + i, pto.select(pto.vote_any(x != x), 1, 0))
    pto.store(o + 2 * n + i, pto.ballot(x < 1))
    pto.store(o + 3 * n + i, pto.select(pto.vote_eq(x > 0), 1, 0))
    pto.store(o + 4 * n + i, pto.match_any(x))
    pto.store(o + 5 * n + i, pto.match_all(x))
"""


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_warp_exchange_on_special_values(make_kernels, dtype):
    """Shuffles move every bit (signed zeros, subnormals, NaN); votes and ballots see NaN
    compare false, as numpy does; matches compare words as CUDA compares bits: NaN matches
    NaN, -0.0 does not match 0.0. One warp of 32 special values (repeated)."""
    mod = make_kernels(WARP_KERNELS)
    v = _values(dtype)
    x = np.resize(v, 32).astype(v.dtype)
    lane = np.arange(32)
    up, down, xor = np.where(lane >= 2, lane - 2, lane), np.where(lane + 5 < 32, lane + 5, lane), lane ^ 6
    want = np.concatenate([x[(lane + 3) % 32], x[up], x[down], x[xor]])
    with np.errstate(invalid="ignore"):
        bits = np.sum((x < 1).astype(np.int64) << lane)
        votes = np.concatenate([np.full(32, int(np.all(x > 0))), np.full(32, int(np.any(x != x))),
                                np.full(32, bits - (1 << 32) if bits >= 1 << 31 else bits)]).astype(np.int32)
        positive = x > 0
        same = ((x[:, None] == x[None, :]) & (np.signbit(x)[:, None] == np.signbit(x)[None, :])
                | (np.isnan(x)[:, None] & np.isnan(x)[None, :]))
    matched = (same.astype(np.int64) << lane).sum(axis=1)
    votes = np.concatenate([votes, np.full(32, int(positive.all() or not positive.any())),
                            np.where(matched >= 1 << 31, matched - (1 << 32), matched),
                            np.where(same.all(axis=1), -1, 0)]).astype(np.int32)
    for mode in ("timing", "functional"):
        tx, out, vo = _tensor(x), _tensor(np.zeros(128, x.dtype)), _tensor(np.zeros(192, np.int32))
        pto.launch(mod.shuffles, grid=(1, 1, 1), block=(32, 1, 1), args=(tx, out, 32), mode=mode)
        pto.launch(mod.votes, grid=(1, 1, 1), block=(32, 1, 1), args=(tx, vo, 32), mode=mode)
        assert_same(out.numpy(), want, f"shuffles {dtype} {mode}")
        np.testing.assert_array_equal(vo.numpy(), votes, f"votes {dtype} {mode}")


ATOMIC_KERNEL = """
@pto.kernel
def atomic_hbm(m, v, old, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(old + i, pto.{call})

@pto.kernel
def atomic_l1(m, v, old, n):
    i = pto.get_global_id()
    buf = pto.alloc_local(N, dtype=pto.{dt})
    pto.store(buf + i, pto.load(m + i))
    pto.barrier()
    w = pto.{l1call}
    pto.barrier()
    pto.store(old + i, w)
    pto.store(m + i, pto.load(buf + i))
"""
ATOMIC_CALLS = {
    "ATOM_ADD": ("atomic_add(P, pto.load(v + i))", np.add),
    "ATOM_MAX": ("atomic_max(P, pto.load(v + i))", np.maximum),
    "ATOM_MIN": ("atomic_min(P, pto.load(v + i))", np.minimum),
    "ATOM_EXCH": ("atomic_exchange(P, pto.load(v + i))", lambda a, b: b),
    "ATOM_CAS": ("atomic_cas(P, pto.load(v + i), 7)", lambda a, b: np.where(a == b, 7, a)),
}


@pytest.mark.parametrize("name", list(ATOMIC_CALLS))
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_atomics_on_special_values(make_kernels, name, dtype):
    """Each lane updates its own word (HBM and, the _L1 forms, a block-local buffer): the word
    becomes numpy's op(old, value) and the lane gets the old word back."""
    call, fn = ATOMIC_CALLS[name]
    a, b = _pairs(dtype)
    n = 128
    a, b = a[:n], b[::-1][:n].copy()
    mod = make_kernels(f"N = {n}\n" + ATOMIC_KERNEL.format(
        call=call.replace("P", "m + i"), l1call=call.replace("P", "buf + i"), dt=dtype))
    with np.errstate(all="ignore"):
        want = np.asarray(fn(a, b)).astype(a.dtype)
    for kernel, spec_name in ((mod.atomic_hbm, name), (mod.atomic_l1, name + "_L1")):
        tm, tv, told = _tensor(a.copy()), _tensor(b), _tensor(np.zeros_like(a))
        assert spec_name in kernel.asm(args=(tm, tv, told, n))
        for mode in ("timing", "functional"):
            tm, tv, told = _tensor(a.copy()), _tensor(b), _tensor(np.zeros_like(a))
            pto.launch(kernel, grid=(1, 1, 1), block=(n, 1, 1), args=(tm, tv, told, n), mode=mode)
            assert_same(told.numpy(), a, f"{spec_name} {dtype} {mode}: old values")
            assert_same(tm.numpy(), want, f"{spec_name} {dtype} {mode}: memory",
                        _min_max_of_zeros(name.replace("ATOM_", ""), a, b))


NO_VALUES = {
    # ids are integers the launch defines (tests/test_compiler.py checks them); the rest
    # order, allocate or steer and compute no values
    "id": "launch coordinates", "alloc": "allocation", "sync": "ordering",
    "control": "control flow", "tile_sync": "ordering",
    # compares int32 operands and stops the kernel or not: tests/test_run_time_checks.py
    "check": "a run-time rule",
}


AICORE_VALUE_TESTED = {"TEXTRACT", "TEXTRACT_V2V", "TINSERT_V2V",
                       # the scalar unit's loads and stores: NaN payloads, -0.0, infinities, subnormals,
                       # extremes bit for bit, int8 / uint8 conversion (tests/test_scalar_memory.py); DCCI
                       # moves whole lines of bytes
                       "SLD_UB", "SST_UB", "SLD_GM", "SST_GM", "DCCI",
                       # the communication signals are int32 only: AtomicAdd's wrap-around at INT32_MAX
                       # and the comparisons at INT32_MIN in tests/test_comm_signals.py
                       "TNOTIFY", "TWAIT", "TTEST",
                       # moves words: float32 / bfloat16 NaN payloads (signalling ones quieted) and
                       # every float16 word in tests/test_ptoisa_npu_textract_nz.py
                       "TEXTRACT_ND2NZ",
                       # TLOAD's kernel moves words: NaN payloads, infinities and -0.0 bit for bit in
                       # tests/test_tprefetch.py (test_a_prefetch_moves_special_values_bit_for_bit)
                       "TPREFETCH",
                       # the scalar broadcast onto a Mat tile: TEXPANDS' rounding, the tile_alu
                       # kernel's (tests/test_tile_differential.py runs it on special values)
                       "TEXPANDS_MAT",
                       "TMOV", "TMOV_ACC", "TMATMUL", "TMATMUL_ACC", "TMATMUL_BIAS",
                       "TGEMV", "TGEMV_ACC", "TGEMV_BIAS",
                       "TSTORE_ACC", "TCVT",
                       # the vector quantization on NaN, infinities, an infinite and a zero scale, and words
                       # that are float64 NaNs moved bit for bit: tests/test_ptoisa_npu_store_acc_quant_vector.py
                       "TSTORE_FP", "TMOV_M2S",
                       # compares on special values, selects and triangles: tests/test_mask_ops.py
                       "TCMP", "TCMPS", "TSEL", "TSELS", "TTRI",
                       # pads copy words: NaN, infinities and -0.0 kept bit for bit in
                       # tests/test_tile_differential.py (test_tile_fillpad_matches_reference)
                       "TFILLPAD", "TFILLPAD_INPLACE", "TFILLPAD_EXPAND",
                       # index reductions over NaN, infinities and ties: test_tile_differential.py
                       "TROWARGMAX", "TROWARGMIN", "TCOLARGMAX", "TCOLARGMIN",
                       "TTRANS",          # moves words: NaN and -0.0 in test_tile_differential.py
                       # sorts, merges, mask gathers and Vec -> Vec TMOV over NaN, infinities
                       # and signed zeros: tests/test_sort_ops.py
                       "TSORT32", "TMRGSORT", "TMRGSORT_LISTS", "TGATHER", "TMOV_V2V",
                       # move words: NaN, infinities and -0.0 in tests/test_gather_indexed.py and
                       # tests/test_scatter_ops.py (the mask scatters run the same kernel's loop)
                       "TGATHER_IDX", "TSCATTER_IDX", "TSCATTER", "TSCATTER_COL",
                       # moves 32-byte blocks: NaN, infinities, -0.0 and a subnormal in tests/test_gather_blocks.py
                       "TGATHERB",
                       # integer sequences, at the wrap of int16 and uint16: tests/test_sequence_ops.py
                       "TCI", "TCI_S",
                       # partial ops: the ALU's expressions, NaN and infinities against the
                       # reference in tests/test_tile_differential.py (test_partial_ops_match_reference)
                       "TPARTADD", "TPARTMAX", "TPARTMIN", "TPARTMUL",
                       # partial arg-selections: NaN (either side takes src1's pair), infinities and
                       # -0.0 against the reference in tests/test_tile_differential.py
                       # (test_partial_arg_selections_match_reference) and numpy in
                       # tests/test_partial_arg_ops.py
                       "TPARTARGMAX", "TPARTARGMIN",
                       # pair sums: NaN, infinities and -0.0 against the reference and numpy in
                       # tests/test_tile_differential.py (test_pair_sums_match_reference_and_numpy)
                       "TPAIRREDUCESUM",
                       # concatenations move words: NaN kept bit for bit in tests/test_tile_differential.py
                       # (test_concatenations_match_reference_and_numpy)
                       "TCONCAT",
                       # the index forms move words too: NaN bit for bit in tests/test_tile_differential.py
                       # (test_index_concatenations_match_reference_and_numpy)
                       "TCONCAT_IDX", "TCONCAT_DSTIDX",
                       # TTRANS of ConvTiles moves words: NaN bit for bit in tests/test_tile_differential.py
                       # (test_conv_transposes_match_reference_and_numpy)
                       "TTRANS_CONV",
                       # dequantizations: NaN and infinite parameters against numpy in
                       # tests/test_tile_differential.py (test_dequantizations_match_reference_and_numpy)
                       # and tests/test_dequant.py
                       "TDEQUANT", "TDEQUANT_S8",
                       # quantizations: NaN, infinities, -0.0, ties, int32 and float16 overflow in
                       # src and the parameters against numpy in tests/test_quant.py
                       # (test_special_values_follow_numpy) and tests/test_tile_differential.py
                       # (test_quantizations_match_reference_and_numpy)
                       "TQUANT", "TQUANT_ASYM",
                       # fused add / sub, ReLU and down-conversions: NaN (to +0), infinities, float16
                       # overflow, int16 wrap-around and int8 saturation against numpy in
                       # tests/test_tile_differential.py (test_relu_conversions_match_reference_and_numpy)
                       "TADDRELUCONV", "TSUBRELUCONV",
                       # the fused add, dequantization and ReLU: int32 wrap-around, float16 overflow,
                       # NaN and infinite scales against numpy in tests/test_tile_differential.py
                       # (test_dequantizing_relus_match_reference_and_numpy)
                       "TADDDEQRELU",
                       # img2col moves words (NaN, infinities, -0.0 bit for bit; its padding is
                       # +0.0): tests/test_img2col.py
                       "TIMG2COL",
                       # the indexed GM transfers move words (NaN bit for bit) and add them (atomic,
                       # NaN among the floats): numba against the reference in tests/test_gm_index.py
                       # (test_the_numba_kernels_match_the_reference); the GM -> L1 forms run the same
                       # kernels (tests/test_ptoisa_npu_mgather_gm2l1.py: both executors)
                       "MGATHER", "MGATHER_ELEM", "MGATHER_L1", "MGATHER_L1_ELEM", "MSCATTER", "MSCATTER_ELEM",
                       # prints read words and write text: inf, -inf, NaN, -0.0, the largest and the
                       # smallest float16 in tests/test_tprint.py (test_special_values_print_as_printf_prints_them)
                       "TPRINT", "TPRINT_GM"}


def test_every_instruction_is_covered():
    covered = set(ALU) | {"CAST", "MOV", "LOAD", "STORE", "FMA_STORE", "LOAD_L1", "STORE_L1",
                          "TLOAD", "TSTORE", "TROWSUM", "TROWMAX", "TROWMIN", "TROWPROD", "TROWEXPAND", "TCOLEXPAND", "MMA",
                          "SHFL_IDX", "SHFL_UP", "SHFL_DOWN", "SHFL_XOR", "VOTE_ALL", "VOTE_ANY",
                          "BALLOT", "VOTE_EQ", "MATCH_ANY", "MATCH_ALL", "LOCAL_LOAD", "LOCAL_STORE"} | set(TILE) | set(ATOMIC_CALLS) | {n + "_L1" for n in ATOMIC_CALLS}
    # the AI core's moves, matmuls, fixpipe conversions and TCVT: tests/test_aicore_values.py
    covered |= (AICORE_VALUE_TESTED | {op.upper() for op in EXPAND_OPS} | {op.upper() for op in COL_FOLDS}
                | {op.upper().replace("TROWEXPAND", "TCOLEXPAND") for op in EXPAND_OPS})
    missing = [s.name for s in load_isa().specs
               if s.name not in covered and s.family not in NO_VALUES]
    assert not missing, f"instructions without a special-value case: {missing}"
