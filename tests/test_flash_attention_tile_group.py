"""examples/flash_attention_tile_group.py: examples/flash_attention.py (sync="auto") rewritten
in sync="manual" with its on-chip handoffs as depth-1 tile groups (docs/aicore.md, "Tile
groups"). Same values as flash_attention.py and numpy, no race, and a cycle count that differs
from flash_attention.py's by what the placed flags cost, derived below instruction by
instruction."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import flash_attention  # noqa: E402
import flash_attention_tile_group  # noqa: E402


def test_the_tile_group_flash_attention_computes_flash_attentions_values_race_free():
    """S = 256 on 2 AI cores (two key blocks: the loop body runs with and without its
    `if j >= 1` branch). Only flags order the pipes in sync="manual", and check="race" raises on
    any tile or GM access no flag orders, so a clean run says the groups' flags order every
    on-chip handoff; the same instructions on the same data give flash_attention.py's values bit
    for bit, and numpy's within fp16 P's rounding."""
    auto, want, _ = flash_attention.run(256)
    grouped, want2, _ = flash_attention_tile_group.run(256, check="race")
    np.testing.assert_array_equal(grouped, auto)
    np.testing.assert_allclose(grouped, want2, rtol=1e-2, atol=2e-3)


def test_its_cycles_are_flash_attentions_plus_what_the_flags_cost():
    """S = 128: one AI core, one key block, so the schedule is a single chain
    AIC QK^T -> AIV softmax -> AIC PV -> AIV O update -> store, and every cycle the grouped
    kernel adds lies on it. The table entries are latency_tables/ascend910b.toml's:
    SET_FLAG / WAIT_FLAG take 1 scalar cycle; a sync on V (set_flag) pays V's pending tail and
    the next V op pays its head again (TCVT tail 18, TADD tail 14, TROWEXPANDDIV head 11,
    tail 19); sync="auto"'s data ordering is no sync on V and pays neither.

    - AIC: the 10 groups' pre-arming SET_FLAGs and q1.next()'s WAIT_FLAG are issued before the
      first TLOAD: +11, carried by MTE2 -> MTE1 -> M -> FIX (a set_flag on those pipes has no
      tail) to the cross-core flag 0;
    - AIV: sg.next()'s WAIT_FLAG before the S load: +1;
    - p16g.ready (SET_FLAG V -> MTE3) after TCVT pays its tail before the P store: +18 (in
      flash_attention.py the store starts as TCVT completes), carried by cross-core flag 1;
    - AIC: p1.next()'s WAIT_FLAG before the P load: +1, carried to cross-core flag 2;
    - AIV: pvg.next()'s WAIT_FLAG before the PV load: +1;
    - pvg.release (SET_FLAG V -> MTE2) after TADD pays TADD's tail, +14, and TROWEXPANDDIV
      then pays its head, +11 (flash_attention.py's TROWEXPANDDIV follows TADD on a busy V);
    - og.ready (SET_FLAG V -> MTE3) pays TROWEXPANDDIV's tail before the O store: +19.

    11 + 1 + 18 + 1 + 1 + 14 + 11 + 19 = 76 cycles. The other flags are issued while the
    scalar waits for nothing on the chain (their pipes are busy or the chain is elsewhere)."""
    _o, _w, auto = flash_attention.run(128, values=False)
    _o, _w, grouped = flash_attention_tile_group.run(128, values=False)
    assert grouped.total_cycles - auto.total_cycles == 11 + 1 + 18 + 1 + 1 + 14 + 11 + 19
    store_of_p = [e for e in grouped.timeline if e.inst == "TSTORE" and e.lane == "AIV0"][0]
    cvt = [e for e in grouped.timeline if e.inst == "TCVT" and e.lane == "AIV0"][0]
    assert store_of_p.start - cvt.end == 18                # TCVT's tail, paid at p16g.ready
