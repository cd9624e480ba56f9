"""The tile_sort family's `mode` operand (isa/44_sort.toml), stated once for the frontend and
both executors (exec/compiled/sort.py compiles with these, so this module imports nothing)."""

# The tile_sort family's `mode` operand (isa/44_sort.toml): bits 0-1 the instruction
# (SORT_MODES); F16_WORDS float16 words (4-word structures; for TGATHER, src is an int32 view of
# float16 word pairs); TGATHER only: TO_I32_BITS, each picked float32 word becomes the int32 of
# its bits (dst int32 over float32), TO_F32_BITS, each picked int32 word the float32 of its
# bits (dst float32 over int32).
SORT_MODES = {"TSORT32": 0, "TMRGSORT": 1, "TMRGSORT_LISTS": 2, "TGATHER": 3}
F16_WORDS = 4
TO_I32_BITS = 8
TO_F32_BITS = 16
