"""The tile_sort family's operands as data (isa/44_sort.toml), for the frontend and both
executors (exec/compiled/sort.py compiles with these, so this module imports nothing).

The `mode` operand: its bits 0-1 the instruction (SORT_MODES); MODE_F16, float16 words (the
structures are STRUCT_BYTES of four float16 words; for TGATHER, src is an int32 view of
float16 word pairs); TGATHER only: TO_I32_BITS, each picked float32 word becomes the int32 of
its bits (dst int32 over float32), TO_F32_BITS, each picked int32 word the float32 of its
bits (dst float32 over int32); AXIS_COL, GatherAxis::GATHER_COL: whole rows, not columns, are
picked (dst row i = the src row the pattern's i-th pick names, A2/A3 TGather.hpp's vcopy of
GetStrideByMask(i), include/pto/common/constants.hpp), into dst's rows dpitch words apart;
INDEXED, TGATHER_IDX (the index-tile form TGATHER(dst, src0, indices, tmp)): dst's element
(i, j) is src's element idx(i, j), src's words counted from its first (A2/A3 TGather.hpp: vmuls
of the index by the element size, then vgather from src's start), with spitch the number of
src's words an index may name and dpitch the row pitch of dst and of the index tile.
SCATTER, TSCATTER (A2/A3 TScatter.hpp): dst is zeroed first (the words dst's tile holds), then
with INDEXED (TSCATTER_IDX) src's (i, j) goes to dst's word idx(i, j), in order (the last
write wins), for the index tile's rows x cols, its rows k words apart, src's spitch, dst's
dpitch words being the bound; without it the mask pattern k spreads src's rows x cols (rows
spitch apart) over dst's rows dpitch apart: along each row (dst (i, period j + offset)), or with
AXIS_COL src's row i to dst's row period i + offset. A
(value, index) structure is STRUCT_BYTES: two float32 words or four float16 words.
GATHER_BLOCKS, TGATHERB (A2/A3 TGatherB.hpp): dst's rows x cols in 32-byte blocks, block j of row i
the 32 bytes of src at the byte offset idx(i, j) (the offset rows k words apart), dst's rows dpitch
words apart, src's spitch words the bound; bits ITEM_SHIFT.. hold log2 of the element size, so a
block is 32 >> that many words (block_words).
TMRGSORT_LISTS merges 2 to 4 lists, src, src1, src2 and src3 of k, k1, k2 and cols - k - k1 - k2
words (0 for a list the call does not have), into tmp, then copies tmp's first dcols words to dst;
with EXHAUSTED (pto-isa's TMRGSORT<..., exhausted = true>, vmrgsort4's Xt[12]) the merge stops
after the structure that empties one of its lists.
"""
SORT_MODES = {"TSORT32": 0, "TMRGSORT": 1, "TMRGSORT_LISTS": 2, "TGATHER": 3, "TGATHER_IDX": 3, "TSCATTER": 3,
              "TSCATTER_COL": 3, "TSCATTER_IDX": 3, "TGATHERB": 3}
MODE_F16 = 4
TO_I32_BITS = 8
TO_F32_BITS = 16
AXIS_COL = 32
INDEXED = 64
SCATTER = 128
STRUCT_BYTES = 8
GATHER_BLOCKS = 256
ITEM_SHIFT = 9
BLOCK_BYTES = 32
EXHAUSTED = 2048


def block_words(mode):
    """The words (elements) of one 32-byte block of a GATHER_BLOCKS mode."""
    return BLOCK_BYTES >> ((mode >> ITEM_SHIFT) & 3)
