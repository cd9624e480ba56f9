"""pto-isa's A2/A3 topk kernel (kernels/manual/a2a3/topk/topk_kernel.cpp), ported as its source
writes it: 48 vector cores (24 AI cores x 2 AIVs, get_block_idx = block * 2 + subblock), each
taking rows / 48 rows of [rows, 1024] float32 (GM rows 1280 apart), two rows a step
(SINGLE_LOOP_ROW), two steps an iteration on double buffers (cur 0 / 1, flag ids = cur), and per
step: TLOAD -> TSORT32 of each row (32-element runs into (value, index) pairs) -> TMRGSORT with
blockLen 64 and 256 (each followed by a TMOV back) -> the two-list TMRGSORT of the tail
(FillMrgArray) -> TMOV of the first topk pairs -> TGATHER P0101 (values) and P1010 (indices) ->
TSTORE of each. Flags as the source (sync="manual": nothing else orders the pipes; check="race"
finds no race): V->MTE2 per buffer (pre-set twice), MTE2->V, V->MTE3 ids cur and cur + 2, and
pipe_barrier(PIPE_V) where it has them.

Differences forced by the simulator, none of which changes a byte moved or an instruction run:
tiles are placed by the compiler (no TASSIGN addresses); the index tiles are int32 (uint32 is
not a tile dtype here; indices are < 1024); the value tile's rows are 1024 apart instead of
1000, because vreducev2 writes all 1024 values P0101 selects from a 2048-word row while the
source's dTile rows are 1000 long (the 24 extra values land in the next row, which its own
gather then rewrites, or past the tile); the TSTOREs take the 1000-wide window.

Run:  python examples/topk.py [rows]      (rows a multiple of 192; 4800 as published)
"""
import sys

import numpy as np

import pypto_sim as pto

BLOCK_DIM = 48            # vector cores (launchTopk's blockDim)
SINGLE_LOOP_ROW = 2
VALID_COL = 1024          # gShape4
COLS = 1280               # gWholeShape4: GM row pitch
TOPK = 1000
DST_COLS = VALID_COL * 2  # (value, index) pairs, TYPE_COEF 1 for float
DTOPK = TOPK * 2          # MrgsortSingleRow's dtopk: topk pairs in words


def block_lens(valid_col, first=64):
    """MrgsortSingleRow's single-list merges: blockLen 64, x4 while blockLen * 4 <= valid_col,
    and the blockLen it ends with."""
    out, b = [], first
    while b * 4 <= valid_col:
        out.append(b)
        b *= 4
    return out, b


def fill_mrg_array(cols, block_len):
    """FillMrgArray<Cols>(blockLen): the lengths of the sorted runs left for SortTailBlock."""
    out, inner, i = [], cols, block_len
    while i >= 64:
        count = inner // i
        out += [i] * count
        inner -= count * i
        i //= 4
    return out


MERGES, LAST_BLOCK = block_lens(DST_COLS)                    # [64, 256], 1024
TAIL = fill_mrg_array(DST_COLS, LAST_BLOCK)                  # [1024, 1024]
assert MERGES == [64, 256] and TAIL == [1024, 1024], "the port below unrolls these"
SRC0_LEN = min(TAIL[0], DTOPK)                              # tmpMrgSortedLen
SRC1_LEN = min(TAIL[1], DTOPK)                              # tmpMrgArray
SRC1_AT = TAIL[0]                                           # mrgSortedLen: where src1 starts


@pto.kernel
def sort_row(sort32, src_t, idx_t, r):
    """SortEachGroup, one row: TSORT32 of src row r into sort32 row r."""
    d = pto.tsubview(sort32, r, 0, 1, DST_COLS)
    s = pto.tsubview(src_t, r, 0, 1, VALID_COL)
    pto.tsort32(d, s, idx_t)
    pto.pipe_barrier(pto.PIPE_V)


@pto.kernel
def merge_row(mrg, sort32, tmp, r):
    """MrgsortSingleRow on sort32 row r: blockLen 64 and 256 merges (each TMOV'd back), the tail's
    two-list merge in place, and TMOV of the first topk pairs into mrg row r."""
    row = pto.tsubview(sort32, r, 0, 1, DST_COLS)
    pto.tmrgsort(tmp, row, 64)
    pto.pipe_barrier(pto.PIPE_V)
    pto.tmov(row, tmp)
    pto.pipe_barrier(pto.PIPE_V)
    pto.tmrgsort(tmp, row, 256)
    pto.pipe_barrier(pto.PIPE_V)
    pto.tmov(row, tmp)
    pto.pipe_barrier(pto.PIPE_V)
    src0 = pto.tsubview(sort32, r, 0, 1, SRC0_LEN)
    src1 = pto.tsubview(sort32, r, SRC1_AT, 1, SRC1_LEN)
    cur = pto.tsubview(sort32, r, 0, 1, SRC0_LEN + SRC1_LEN)
    pto.tmrgsort(cur, src0, src1=src1, tmp=tmp)
    pto.pipe_barrier(pto.PIPE_V)
    first = pto.tsubview(sort32, r, 0, 1, DTOPK)
    dst = pto.tsubview(mrg, r, 0, 1, DTOPK)
    pto.pipe_barrier(pto.PIPE_V)
    pto.tmov(dst, first)


@pto.kernel
def gather_values(d_all, mrg, r):
    """ExtractDataOrIndex<isIndex = false>, one row: TGATHER P0101 of the 2048-word row."""
    pto.tgather(pto.tsubview(d_all, r, 0, 1, VALID_COL), pto.tsubview(mrg, r, 0, 1, DST_COLS), "P0101")


@pto.kernel
def gather_indices(i_t, mrg, r):
    """ExtractDataOrIndex<isIndex = true>, one row: TGATHER P1010 of the first 2 x topk words."""
    pto.tgather(pto.tsubview(i_t, r, 0, 1, TOPK), pto.tsubview(mrg, r, 0, 1, DTOPK), "P1010")


@pto.kernel
def process_rows(OUT, IDX, SRC, step, cur, src_t, idx_t, sort32, mrg, tmp, d_all, i_t):
    """ProcessSingleRow(cur): rows step * 2 .. + 1 of this core, on buffer cur."""
    pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, cur)
    pto.tload(src_t, SRC + step * SINGLE_LOOP_ROW * COLS, stride=COLS)
    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, cur)
    pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, cur)
    sort_row(sort32, src_t, idx_t, 0)
    sort_row(sort32, src_t, idx_t, 1)
    pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, cur)
    pto.pipe_barrier(pto.PIPE_V)
    merge_row(mrg, sort32, tmp, 0)
    merge_row(mrg, sort32, tmp, 1)
    pto.pipe_barrier(pto.PIPE_V)
    gather_values(d_all, mrg, 0)
    gather_values(d_all, mrg, 1)
    pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, cur)
    pto.pipe_barrier(pto.PIPE_V)
    gather_indices(i_t, mrg, 0)
    gather_indices(i_t, mrg, 1)
    pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, cur + 2)
    pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, cur)
    pto.tstore(OUT + step * SINGLE_LOOP_ROW * TOPK, pto.tsubview(d_all, 0, 0, SINGLE_LOOP_ROW, TOPK), stride=TOPK)
    pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, cur + 2)
    pto.tstore(IDX + step * SINGLE_LOOP_ROW * TOPK, i_t, stride=TOPK)


@pto.kernel(sync="manual")
def topk(OUT, IDX, SRC, IN_IDX, valid_row):
    """runTOPK on each of the 48 vector cores: valid_row = rows / 48 rows of SRC (pitch COLS)."""
    with pto.vector():
        core = pto.get_block_id() * 2 + pto.get_subblock_id()
        src = SRC + core * valid_row * COLS
        out = OUT + core * valid_row * TOPK
        index = IDX + core * valid_row * TOPK
        idx_t = pto.alloc_tile(1, VALID_COL, pto.int32, loc=pto.Vec)
        sort0 = pto.alloc_tile(SINGLE_LOOP_ROW, DST_COLS, pto.float32, loc=pto.Vec)
        sort1 = pto.alloc_tile(SINGLE_LOOP_ROW, DST_COLS, pto.float32, loc=pto.Vec)
        mrg0 = pto.alloc_tile(SINGLE_LOOP_ROW, DST_COLS, pto.float32, loc=pto.Vec)
        mrg1 = pto.alloc_tile(SINGLE_LOOP_ROW, DST_COLS, pto.float32, loc=pto.Vec)
        tmp0 = pto.alloc_tile(1, DST_COLS, pto.float32, loc=pto.Vec)        # tmpAddr
        tmp1 = pto.alloc_tile(1, DST_COLS, pto.float32, loc=pto.Vec)        # nextTmpAddr
        d0 = pto.alloc_tile(SINGLE_LOOP_ROW, VALID_COL, pto.float32, loc=pto.Vec)
        d1 = pto.alloc_tile(SINGLE_LOOP_ROW, VALID_COL, pto.float32, loc=pto.Vec)
        i0 = pto.alloc_tile(SINGLE_LOOP_ROW, TOPK, pto.int32, loc=pto.Vec)
        i1 = pto.alloc_tile(SINGLE_LOOP_ROW, TOPK, pto.int32, loc=pto.Vec)
        s0 = pto.alloc_tile(SINGLE_LOOP_ROW, VALID_COL, pto.float32, loc=pto.Vec)
        s1 = pto.alloc_tile(SINGLE_LOOP_ROW, VALID_COL, pto.float32, loc=pto.Vec)
        pto.tload(idx_t, IN_IDX)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 0)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
        for i in range(0, valid_row // SINGLE_LOOP_ROW, 2):
            process_rows(out, index, src, i, 0, s0, idx_t, sort0, mrg0, tmp0, d0, i0)
            process_rows(out, index, src, i + 1, 1, s1, idx_t, sort1, mrg1, tmp1, d1, i1)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 0)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)


def golden(rows, seed=19):
    """pto-isa's scripts/gen_data.py logic: row i uniform in [i, i + 1024) as float32, rows of
    COLS (zero-padded), and the top TOPK of each row by np.lexsort((index, -value))."""
    rng = np.random.RandomState(seed)
    data = np.zeros((rows, COLS), np.float32)
    for i in range(rows):
        data[i, :VALID_COL] = rng.uniform(i, i + VALID_COL, size=VALID_COL).astype(np.float32)
    idx = np.arange(VALID_COL).astype(np.uint32)
    values = np.zeros((rows, TOPK), np.float32)
    indices = np.zeros((rows, TOPK), np.int32)
    for i in range(rows):
        row = data[i, :VALID_COL]
        order = np.lexsort((idx, -row))[:TOPK]
        values[i], indices[i] = row[order], order
    return data, idx, values, indices


def run(rows=4800, profile=True, values=True):
    """Launch topk on rows x 1024 (gen_data's input) over 24 AI cores; returns (values, indices,
    profile or None)."""
    if rows % (BLOCK_DIM * SINGLE_LOOP_ROW * 2):
        raise ValueError(f"rows must be a multiple of {BLOCK_DIM * SINGLE_LOOP_ROW * 2} (Check<>'s "
                         f"validRow % (SINGLE_LOOP_ROW * 2) == 0 on {BLOCK_DIM} cores), got {rows}")
    data, idx, _, _ = golden(rows)
    src = pto.alloc_tensor(data.nbytes, pto.float32)
    pto.memcpy_h2d(src, data)
    in_idx = pto.alloc_tensor(idx.nbytes, pto.int32)
    pto.memcpy_h2d(in_idx, idx.astype(np.int32))
    out = pto.alloc_tensor(rows * TOPK * 4, pto.float32)
    index = pto.alloc_tensor(rows * TOPK * 4, pto.int32)
    args = (out, index, src, in_idx, rows // BLOCK_DIM)
    prof = None
    if profile:
        prof = pto.profile(topk, grid=(BLOCK_DIM // 2,), args=args, values=values)
    else:
        pto.launch(topk, grid=(BLOCK_DIM // 2,), args=args)
        pto.sync()
    got_v = np.empty((rows, TOPK), np.float32)
    got_i = np.empty((rows, TOPK), np.int32)
    pto.memcpy_d2h(got_v, out)
    pto.memcpy_d2h(got_i, index)
    return got_v, got_i, prof


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4800
    v, i, prof = run(n)
    _, _, gv, gi = golden(n)
    print(f"topk {n} x {VALID_COL} -> {TOPK}: values {'match' if np.array_equal(v, gv) else 'DIFFER'}, "
          f"indices {'match' if np.array_equal(i, gi) else 'DIFFER'} (pto-isa gen_data golden); "
          f"{prof.total_cycles} cycles")
