"""The port of pto-isa's A2/A3 flash attention (examples/flash_atten_a3.py): values against
numpy, race-free under check="race" with every cross-core signal taken (check="sync"), and the
instruction mix its loop structure implies."""
import collections
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import flash_atten_a3 as fa  # noqa: E402


def _counts(prof, unit):
    return collections.Counter(e.inst.split()[0] for e in prof.timeline if e.lane == unit)


def test_two_blocks_values_and_races():
    """S0 = 256 (two blocks of CUBE_S0 128), S1 = 1024: four logical tiles of 256 keys, all of them
    in the QK preload (QK_PRELOAD 4), so the steady loop runs PV / GU only. O matches
    softmax(Q K^T / sqrt(128)) V in float64 within float16 rounding of P (rtol 1e-2, atol 2e-3,
    the tolerance of examples/flash_attention.py), and check="race" finds no unordered pair of
    accesses between the pipes, units and the two blocks' FIFO slots."""
    out, want, _ = fa.run(256, 1024, check="race")
    assert np.allclose(out, want, rtol=1e-2, atol=2e-3)


def test_fifo_wraps_values_races_and_instruction_mix():
    """S0 = 128 (one block), S1 = 2560: n = 10 logical tiles, so the 8-slot FIFOs wrap and the
    producers' TALLOC waits for a free signal at tile 8 (slot index >= 8 and a multiple of
    SyncPeriod 4); the consumers' TFREE signals after tiles 3 and 7 (index + 1 a multiple of 4),
    and each producer's TPipe destructor waits for the one its TALLOCs left
    (countPendingFreeCredits(10) = 10 // 4 - 1 = 1).

    Per unit, from runTFA's loops (kTileFactor 2 cube sub-tiles / row slices per tile):
    AIC: TLOAD 1 (Q) + 2n (K) + 2n (P) + 2n (V) = 61; TMATMUL 2n (QK) + n (PV sub-tile 0) = 30,
    TMATMUL_ACC n (PV sub-tile 1) = 10; TEXTRACT 2 per matmul = 80; TSTORE from Acc 2n (QK) + n
    (PV) = 30; cross-core sets n (QK TPUSH) + n (PV TPUSH) + 2 (P TFREE) = 22; cross-core waits n
    (P TPOP) + 1 (QK TALLOC) + 1 (PV TALLOC) + 1 (QK drain) + 1 (PV drain) = 14.
    Each AIV: TLOAD 2 halves x 2 slices x n (QK) + n (PV) = 50; TSTORE 2 x 2 x n (P) + 1 (O) = 41;
    TROWMAX 2n = 20; TMAX (the 1 x 32 running max, not on tile 0) 2 (n - 1) = 18;
    TROWEXPANDMUL n - 1 = 9, TROWEXPANDDIV 1; cross-core waits n (QK TPOP) + n (PV TPOP) + 1
    (P TALLOC) + 1 (P drain) = 22, sets n (P TPUSH) + 2 (QK TFREE) + 2 (PV TFREE) = 14."""
    out, want, prof = fa.run(128, 2560, check=("race", "sync"))
    assert np.allclose(out, want, rtol=1e-2, atol=2e-3)
    aic = _counts(prof, "AIC")
    assert {k: aic[k] for k in ("TLOAD", "TMATMUL", "TMATMUL_ACC", "TEXTRACT", "TSTORE_ACC",
                                "CROSS_CORE_SET_FLAG", "CROSS_CORE_WAIT_FLAG")} == {
        "TLOAD": 61, "TMATMUL": 30, "TMATMUL_ACC": 10, "TEXTRACT": 80, "TSTORE_ACC": 30,
        "CROSS_CORE_SET_FLAG": 22, "CROSS_CORE_WAIT_FLAG": 14}
    for unit in ("AIV0", "AIV1"):
        aiv = _counts(prof, unit)
        assert {k: aiv[k] for k in ("TLOAD", "TSTORE", "TROWMAX", "TMAX", "TROWEXPANDMUL", "TROWEXPANDDIV",
                                    "CROSS_CORE_WAIT_FLAG", "CROSS_CORE_SET_FLAG")} == {
            "TLOAD": 50, "TSTORE": 41, "TROWMAX": 20, "TMAX": 18, "TROWEXPANDMUL": 9, "TROWEXPANDDIV": 1,
            "CROSS_CORE_WAIT_FLAG": 22, "CROSS_CORE_SET_FLAG": 14}


def test_single_tile_is_refused():
    """With one S1 tile the source's non-causal compute_gu never divides by the row sums (its
    tile-0 branch divides only under CAUSAL_MASK): the port refuses S1 < 2 TILE_S1 instead of
    returning unnormalised O."""
    with pytest.raises(ValueError, match="at least 512"):
        fa.run(128, 256)


def test_the_row_statistics_run_pto_isas_fast_fp32_tree():
    """The port's TROWMAX / TROWSUM reduce a whole 32 x 256 float32 slice into a 32 x 1 window
    of a ColMajor column, the shape A2/A3's TryOptimizeFP32Reduce sends through its group-reduce
    tree (tests/test_cost_model.py derives the cycles): TROWMAX 252 with vcgmax's head 14 (V
    idle: a pipe_barrier or a wait for data comes before each), TROWSUM 259 with vcgadd's head,
    245 without it (queued behind the TCVT / TMUL before it). S0 = 128, S1 = 1024: 4 tiles x 2
    row slices on each of the 2 AIVs = 16 of each."""
    _out, _want, prof = fa.run(128, 1024)
    cycles = collections.Counter((e.inst.split()[0], e.end - e.start) for e in prof.timeline
                                 if e.inst.split()[0] in ("TROWSUM", "TROWMAX"))
    assert cycles[("TROWMAX", 252)] == 16
    assert cycles[("TROWSUM", 259)] + cycles[("TROWSUM", 245)] == 16
    assert sum(cycles.values()) == 32
