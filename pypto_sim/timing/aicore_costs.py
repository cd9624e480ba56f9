"""The AI core's cost formulas (docs/aicore.md, "Costs"), functions of the machine table and an
instruction's shape: the fixpipe drain, the cube's matmul and the V pipe's vector ops. The
engine (aicore.py) decides when each starts; these say how long it takes."""
from __future__ import annotations

import math


def odd_part(n: int) -> int:
    """n with every factor 2 removed (pypto L0CostModel's OddPart)."""
    n = max(int(n), 1)
    while n % 2 == 0:
        n //= 2
    return n


def drain_cycles(m, rows, cols, acc_bytes) -> float:
    """FIXPIPE drain of a rows x cols accumulator tile (hw-native-sys/pypto L0CostModel)."""
    n0 = max(1, int(m.drain_c0_bytes) // acc_bytes)
    n1 = -(-cols // n0)
    per_row = max(m.drain_row_cycles, acc_bytes * cols / m.drain_bytes_per_cycle) + \
        m.drain_penalty_cycles * (odd_part(n1) - 1)
    return m.drain_fixed_cycles + rows * per_row


# A row-major tile's rows are whole 32-byte blocks (the frontend's check, PTO-ISA Tile.md); a
# row narrower than a block is a ColMajor tile's (each column contiguous in UB).
BLOCK_BYTES = 32


def priced_shape(rows, cols, itemsize, elementwise):
    """The (rows, cols) an elementwise op (family tile_alu) is priced at: a ColMajor tile with
    rows narrower than a 32-byte block as its row-major reshape (cols rows of `rows` elements).
    A2/A3's elementwise ops take row-major tiles only (pto-isa include/pto/npu/a2a3/TMul.hpp
    TMulCheck: "TMUL only support row major layout"), so a kernel reshapes first, as pto-isa's
    flash attention does with its [rows, 1] row maxima and sums (TRESHAPE to a [1, rows]
    row-major tile before TMAX / TSUB / TMULS / TEXP / TMUL / TADD, kernels/manual/common/
    flash_atten/pto_macro_fa_softmax.hpp); TRESHAPE itself is an address binding."""
    if elementwise and cols * itemsize < BLOCK_BYTES:
        return cols, rows
    return rows, cols


def vector_op_cycles(m, name, dtype, rows, cols, itemsize, idle, elementwise=False):
    """(cycles, tail) of a vector op over rows x cols elements of dtype (an elementwise op on
    a ColMajor column is priced at its row-major reshape, priced_shape): the machine's
    [formulas] row for (op, dtype, cols) when it has one (pto-isa's formula table: the whole
    op, no separate tail), else the head/slope/tail model of pto-isa's CCE mock: the head only
    when the V queue was idle, per_repeat per 256-byte repeat (a row that is not a whole
    number of repeats pays whole repeats, plus unaligned_floor once) and per_row per row (a row
    reduction's one reducing repeat a row beyond its binary passes), the tail at the next sync."""
    rows, cols = priced_shape(rows, cols, itemsize, elementwise)
    cycles = m.formula_cycles(name, dtype.name, rows, cols)
    if cycles is not None:
        return cycles, 0
    t = m.instructions[name]
    head = t.extra.get("head", t.latency)
    tail = t.extra.get("tail", 0)
    rb = t.extra["repeat_bytes"]
    row_bytes = cols * itemsize
    aligned = row_bytes % rb == 0
    repeats = (rows * row_bytes) // rb if aligned else rows * -(-row_bytes // rb)
    cycles = (head if idle else 0) + int(math.ceil(repeats * t.extra["per_repeat"]
                                                   + rows * t.extra.get("per_row", 0) - 1e-9))
    if not aligned:
        cycles += int(t.extra.get("unaligned_floor", 0))
    return cycles, int(tail)


def matmul_cycles(m, name, rows, cols, k, a_itemsize, latency) -> int:
    """latency + cpr * ceil(m/16) * ceil(k/k0) * ceil(n/16), k0 = 32 bytes of A's dtype."""
    k_tile = m.cost_term(name, "k_tile") * 2 // a_itemsize if a_itemsize <= 2 else m.cost_term(name, "k_tile_f32")
    per = m.cost_term(name, "per_repeat_f32" if a_itemsize == 4 else "per_repeat")
    repeats = math.ceil(rows / 16) * math.ceil(k / k_tile) * math.ceil(cols / 16)
    return latency + int(math.ceil(repeats * per - 1e-9))
