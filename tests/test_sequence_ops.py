"""TCI, a contiguous integer sequence into one row of a typed Vec tile (isa/46_sequence.toml),
the family issue 27's checklist was walked on (docs/design.md): its values against pto-isa's
own test cases (tests/npu/a2a3/src/st/testcase/tci: gen_data.py's golden is start + arange,
or start - arange when descending, with start 0), A2/A3's descending path at a start other
than 0, its wrap-around, its compile errors, and its cost from the CCE mock's sequence."""

import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import compile_error_at

TCI_KERNEL = '''
@pto.kernel
def tci(O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(1, {cols}, pto.{dt}, loc=pto.Vec)
            t = pto.alloc_tile(1, 512, pto.float32, loc=pto.Vec)
            pto.tci(d, {start}, t, descending={descending})
            pto.tstore(O, d)
'''


def _run(make_kernels, dt, cols, start, descending, **launch):
    mod = make_kernels(TCI_KERNEL.format(cols=cols, dt=dt, start=start, descending=descending))
    out = pto.alloc_tensor(cols * np.dtype(dt).itemsize, getattr(pto, dt))
    pto.launch(mod.tci, grid=(1,), args=(out,), **launch)
    got = np.empty(cols, dt)
    pto.memcpy_d2h(got, out)
    return got


# pto-isa's TCITest cases (gen_data.py case_params_list: dtype, cols, descending; start 0)
PTO_ISA_CASES = [("int32", 128, 0), ("int32", 600, 0), ("int32", 32, 1), ("int32", 2000, 1),
                 ("int16", 256, 0), ("int16", 800, 1), ("int16", 64, 0), ("int16", 5120, 1),
                 ("int16", 3328, 1), ("int16", 32, 1)]


@pytest.mark.parametrize("dt, cols, descending", PTO_ISA_CASES)
def test_tci_matches_pto_isas_golden(make_kernels, dt, cols, descending):
    """gen_data.py: golden = start - arange(cols) when descending, else start + arange(cols)."""
    got = _run(make_kernels, dt, cols, 0, bool(descending))
    start = 0
    want = (start - np.arange(cols)) if descending else (start + np.arange(cols))
    np.testing.assert_array_equal(got, want.astype(dt))


def test_tci_descending_negates_start_plus_k_as_a2a3s_vector_path_does(make_kernels):
    """TCI.hpp's vector path adds start + 64 i with vadds, then multiplies the row by -1: at
    start 7 the row is -7, -8, -9, ... (TCI.md's start - k would be 7, 6, 5, ...)."""
    got = _run(make_kernels, "int32", 64, 7, True)
    np.testing.assert_array_equal(got, -(7 + np.arange(64)))


def test_tci_wraps_as_the_int_lanes_add(make_kernels):
    """int16 from 32760: 32760 .. 32767, then -32768 (the lane's add keeps 16 bits); uint16
    descending from 0: 0, 65535, 65534, ..."""
    got = _run(make_kernels, "int16", 16, 32760, False)
    np.testing.assert_array_equal(got, (32760 + np.arange(16)).astype(np.int16))
    assert got[8] == -32768
    got = _run(make_kernels, "uint16", 16, 0, True)
    np.testing.assert_array_equal(got, (-np.arange(16)).astype(np.uint16))
    assert got[1] == 65535


def test_tci_runs_the_same_functionally_and_under_the_race_check(make_kernels):
    """The functional runner computes the row the timing run's replay computes, and the race
    check finds nothing (dst is written once, then stored after the V -> MTE3 sync). The
    compiled loop against SimPy: tests/test_aicore_fast.py's every-vector-family kernel."""
    timed = _run(make_kernels, "int32", 600, 3, False)
    functional = _run(make_kernels, "int32", 600, 3, False, mode="functional")
    checked = _run(make_kernels, "int32", 600, 3, False, check="race")
    for got in (functional, checked):
        np.testing.assert_array_equal(got, timed)
    np.testing.assert_array_equal(timed, 3 + np.arange(600))


@pytest.mark.parametrize("body, message", [
    ("d = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\n            pto.tci(d, 0, t)",
     "pto.tci fills int32, uint32, int16, uint16 tiles, not float32"),
    ("d = pto.alloc_tile(2, 64, pto.int32, loc=pto.Vec)\n            pto.tci(d, 0, t)",
     "'d' has 2 rows; TCI fills one row"),
    ("d = pto.alloc_tile(1, 64, pto.int16, loc=pto.Vec)\n"
     "            s = pto.alloc_tile(1, 256, pto.float32, loc=pto.Vec)\n            pto.tci(d, 0, s)",
     "tmp 's' holds 1024 bytes; the vector path for int16 uses 1792"),
    ("d = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)\n            pto.tci(d, 1.5, t)",
     "start 1.5 is not an integer"),
    # tmp's first 768 bytes (192 int32 words) are the b32 path's scratch: d's words 128..383
    # share 128..191 with them (64 words); d itself, all 192
    ("d = pto.alloc_tile(1, 512, pto.int32, loc=pto.Vec)\n            pto.tci(pto.tsubview(d, 0, 128, 1, 256), 0, d)",
     "tmp 'd' and dst 'd_subview' share 64 words"),
    ("d = pto.alloc_tile(1, 512, pto.int32, loc=pto.Vec)\n            pto.tci(d, 0, d)",
     "tmp 'd' and dst 'd' share 192 words"),
])
def test_illegal_tci_calls_are_compile_errors_at_the_line(make_kernels, body, message):
    mod = make_kernels(f'''
@pto.kernel
def bad(O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(1, 512, pto.float32, loc=pto.Vec)
            {body}
''')
    compile_error_at(mod.bad, (pto.alloc_tensor(256, pto.int32),), message, body.split("\n")[-1].strip())


def test_tci_may_write_past_its_tmps_scratch_bytes(make_kernels):
    """dst may lie in tmp's tile beyond the 768 bytes the b32 path uses (words 256..511 of a
    1 x 512 int32 tile that is also tmp): 256..511 hold 0..255."""
    mod = make_kernels('''
@pto.kernel
def tci(O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(1, 512, pto.int32, loc=pto.Vec)
            pto.tci(pto.tsubview(d, 0, 256, 1, 256), 0, d)
            pto.tstore(O, pto.tsubview(d, 0, 256, 1, 256))
''')
    out = pto.alloc_tensor(1024, pto.int32)
    pto.launch(mod.tci, grid=(1,), args=(out,))
    got = np.empty(256, np.int32)
    pto.memcpy_d2h(got, out)
    np.testing.assert_array_equal(got, np.arange(256))


def test_tci_costs_the_cce_mocks_sequence(make_kernels):
    """The default table's TCI: head 209 (the set-up of 0..63 in tmp and the first vadds'
    head, V idle), one cycle a 256-byte repeat of dst, the tail 20 (the last vadds' 18 and two
    barriers) paid at the next sync. A row of 2000 int32 is 8000 bytes, 32 repeats (31.25
    rounded up): 209 + 32 = 241 cycles from its start to its end on the first AIV."""
    mod = make_kernels(TCI_KERNEL.format(cols=2000, dt="int32", start=0, descending=False))
    prof = pto.profile(mod.tci, grid=(1,), args=(pto.alloc_tensor(8000, pto.int32),))
    (cycles,) = [e.end - e.start for e in prof.timeline if e.inst == "TCI"]
    assert cycles == 209 + 32


@pytest.mark.parametrize("descending, want", [(False, 100 + np.arange(16)), (True, 100 - np.arange(16))])
def test_tci_without_tmp_is_the_scalar_loop(make_kernels, descending, want):
    """pto.tci(dst, start) is TCI(dst, start), TCI.hpp's scalar loop (TCI_S): start + i, and
    start - i when descending (the vector path with tmp gives -(start + k)); its cost is
    latency_tables/ascend910b.toml's per_element 2 an element after head 1 on an idle V pipe:
    1 + 2 x 16 = 33 for 16 columns."""
    mod = make_kernels(f'''
@pto.kernel
def k(O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(1, 16, pto.int32, loc=pto.Vec)
            pto.tci(d, 100, descending={descending})
            pto.tstore(O, d)
''')
    out = pto.alloc_tensor(64, pto.int32)
    prof = pto.profile(mod.k, grid=(1,), args=(out,))
    np.testing.assert_array_equal(out.numpy(), want)
    assert [e.end - e.start for e in prof.timeline if e.inst == "TCI_S"] == [33]

