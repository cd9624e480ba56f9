"""The AI core's DataCache: the rules of a unit's scalar loads and stores of GM
(isa/56_scalar_memory.toml SLD_GM, SST_GM, DCCI). Architectural facts, so they shape values:
every executor applies them (exec/scalar_memory.py), and the timing model prices them.

Sources (Ascend C documentation, the A2/A3 products):
- "Scalar读写数据" (Reading/Writing Data by the Scalar Unit, CANN 8.5 / 9.0 programming guide,
  atlas_ascendc_10_00031): each AIC and AIV has its own DataCache; a scalar GM read fills the
  element's 64-byte line ("DataCache的Cache Line长度为64字节": GetValue(0) of int64 brings
  elements 0-7, GetValue(1..7) then read the line); a scalar GM write fills the line too, changes
  only the cached copy and marks the line dirty, so GM and the other cores do not see it.
- DataCacheCleanAndInvalid (Ascend C API atlasascendc_api_07_0177): DMA (DataCopy: TLOAD, TSTORE
  here) does not go through the DataCache; the call writes dirty data out and invalidates, for the
  line holding the address (SINGLE_CACHE_LINE, the 64-byte-aligned line) or the whole cache
  (ENTIRE_DATA_CACHE), so a later read gets what other cores wrote.
- WriteGmByPassDCache (asc-devkit docs/api/context/WriteGmByPassDCache(ISASI).md, 9.0.0-beta.2):
  through the DataCache, GM is read and written by whole cache lines, so cores writing different
  bytes of one line overwrite each other's data: a write-back writes the whole line.
- "Compute Units" (atlas_ascendc_10_0009): the D-cache is loaded in 64-byte lines and is, for
  example, 16 KB; the size depends on the hardware.

Assumed (no public source): 16 KB on A2/A3 (the page's example size); least-recently-used
replacement (a dirty victim written back whole); the dirty lines of a unit are written back when
its program ends (the documents say dcci writes "immediately", not that data is otherwise lost).
"""
from __future__ import annotations

LINE_BYTES = 64                  # "DataCache的Cache Line长度为64字节" (Ascend C, Scalar读写数据)
CAPACITY_BYTES = 16 * 1024       # the Compute Units page's example D-cache; assumed for A2/A3
LINES = CAPACITY_BYTES // LINE_BYTES


def line_of(address: int) -> int:
    """The first byte of the 64-byte line holding GM byte address."""
    return address - address % LINE_BYTES


def lines_covering(address: int, nbytes: int) -> range:
    """The first bytes of the lines an access of nbytes at address touches."""
    return range(line_of(address), address + nbytes, LINE_BYTES)
