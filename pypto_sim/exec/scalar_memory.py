"""The AI core's scalar unit reading and writing memory (isa/56_scalar_memory.toml): a Vec
tile's words in its unit's UB (SLD_UB, SST_UB: Tile::GetValue / SetValue) and GM through the
unit's DataCache (SLD_GM, SST_GM, DCCI; the cache's rules are isa/data_cache.py's). One step,
``run``, for the SimPy model and the functional executor: the value semantics live here once,
the timing model prices what it reports (a line filled, lines written back).

UB words are the executor's float64 element words; GM is the launch's HBM bytes, which the
DataCache copies by 64-byte line: a read of a cached line returns the copy however GM changed
since (as the device does without a dcci), a write changes the copy and marks its bytes dirty,
and a write-back stores the whole line, the bytes this unit never wrote included."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .. import dtypes
from ..errors import OutOfBoundsError, UninitializedReadError
from ..ir.program import C_AUX, C_DST, C_DTYPE
from ..isa.data_cache import LINE_BYTES, LINES, line_of, lines_covering
from . import gm, tile_print
from .aicore_tiles import UNIT_NAMES, value_operands


class DataCache:
    """One unit's DataCache over the launch's HBM bytes: line address -> (its 64 bytes, which of
    them this unit wrote since the fill, GM's bytes at the fill), least recently used first.
    Write-backs land in hbm at once and are kept in ``written`` (line address, dirty mask, the
    bytes GM changed since the fill, which the write-back overwrote) for the caller's checks."""

    def __init__(self, hbm: np.ndarray):
        self.hbm = hbm
        self.lines: OrderedDict = OrderedDict()
        self.written: list = []

    def _entry(self, line: int) -> tuple:
        """(bytes, dirty, hit) of the line, filled from GM on a miss (evicting the LRU line)."""
        entry = self.lines.get(line)
        if entry is not None:
            self.lines.move_to_end(line)
            return entry[0], entry[1], True
        data = np.zeros(LINE_BYTES, np.uint8)
        end = min(line + LINE_BYTES, len(self.hbm))
        data[:end - line] = self.hbm[line:end]
        dirty = np.zeros(LINE_BYTES, bool)
        self.lines[line] = (data, dirty, data.copy())
        if len(self.lines) > LINES:
            victim, ventry = self.lines.popitem(last=False)
            self._write_back(victim, *ventry)
        return data, dirty, False

    def _write_back(self, line: int, data, dirty, filled):
        if dirty.any():                  # the whole line, as WriteGmByPassDCache warns
            end = min(line + LINE_BYTES, len(self.hbm))
            changed = np.zeros(LINE_BYTES, bool)
            changed[:end - line] = self.hbm[line:end] != filled[:end - line]
            self.hbm[line:end] = data[:end - line]
            self.written.append((line, dirty.copy(), changed))
            dirty[:] = False
            filled[:] = data

    def read(self, address: int, nbytes: int) -> tuple:
        """(the nbytes at address as the cache holds them, whether a line was filled)."""
        out, hit_all = np.empty(nbytes, np.uint8), True
        for line in lines_covering(address, nbytes):
            data, _dirty, hit = self._entry(line)
            lo, hi = max(address, line), min(address + nbytes, line + LINE_BYTES)
            out[lo - address:hi - address] = data[lo - line:hi - line]
            hit_all &= hit
        return out, not hit_all

    def write(self, address: int, raw: np.ndarray) -> bool:
        """Write raw bytes at address into the cached lines (filled on a miss); True on a miss."""
        hit_all = True
        for line in lines_covering(address, len(raw)):
            data, dirty, hit = self._entry(line)
            lo, hi = max(address, line), min(address + len(raw), line + LINE_BYTES)
            data[lo - line:hi - line] = raw[lo - address:hi - address]
            dirty[lo - line:hi - line] = True
            hit_all &= hit
        return not hit_all

    def dirty_bytes(self, address: int, nbytes: int) -> bool:
        """Whether every byte of [address, address + nbytes) is this unit's own unwritten-back write."""
        entry = self.lines.get(line_of(address))
        return entry is not None and bool(entry[1][address - line_of(address):][:nbytes].all())

    def stale(self, address: int, nbytes: int) -> bool:
        """Whether a cached element's bytes that this unit did not write differ from GM's now:
        GM changed since the fill (a DMA, another unit), and a read returns the old bytes."""
        line = line_of(address)
        entry = self.lines.get(line)
        if entry is None:
            return False
        lo = address - line
        data, dirty = entry[0][lo:lo + nbytes], entry[1][lo:lo + nbytes]
        return bool((~dirty & (data != self.hbm[address:address + nbytes])).any())

    def clean_invalidate(self, address: int | None) -> int:
        """dcci: write back (if dirty) and drop the line holding address, or every line (None).
        Returns the number of lines written back."""
        before = len(self.written)
        lines = list(self.lines) if address is None else [line_of(address)]
        for line in lines:
            entry = self.lines.pop(line, None)
            if entry is not None:
                self._write_back(line, *entry)
        return len(self.written) - before

    def write_back_all(self) -> int:
        """The end of the unit's program: every dirty line written back (isa/data_cache.py)."""
        before = len(self.written)
        for line, entry in self.lines.items():
            self._write_back(line, *entry)
        return len(self.written) - before

    def take_written(self) -> list:
        out, self.written = self.written, []
        return out


def mark_written_back(hbm_init, written) -> None:
    """initcheck: the bytes a write-back took from this unit's stores are written in GM."""
    if hbm_init is None:
        return
    for line, dirty, _changed in written:
        gm.init_mark(hbm_init, line + np.flatnonzero(dirty))


class ScalarAccess:
    """What one scalar memory instruction did: a line filled (miss), lines written back, and
    where: a GM byte address and its bytes, or a UB word (-1: none); a TPRINT the elements it
    read and the GM lines it filled."""

    __slots__ = ("missed", "written_back", "address", "nbytes", "word", "stale", "reads", "fills")

    def __init__(self, missed=False, written_back=0, address=-1, nbytes=0, word=-1, stale=False, reads=1, fills=0):
        self.missed, self.written_back, self.address, self.nbytes = missed, written_back, address, nbytes
        self.word, self.stale, self.reads, self.fills = word, stale, reads, fills


def run(ctx, pc, unit, coords, regs, ub, cache: DataCache, init_check=False) -> ScalarAccess:
    """Execute scalar memory instruction pc of unit (its registers regs, its UB words ub, its
    DataCache) in launch context ctx (prog, enc, tbase, tcount, kernel_name, tensor_names,
    hbm_init). Raises OutOfBoundsError for an element outside its tile or tensor, and with
    init_check an UninitializedReadError for a GM read of a never-written element."""
    code = ctx.enc.code
    name = ctx.prog.instrs[pc].op
    before = len(cache.written)
    if name in ("TPRINT", "TPRINT_GM"):
        operands = value_operands(ctx.enc, pc, regs, 4 if name == "TPRINT" else 5)
        if name == "TPRINT_GM":                 # the slice's first and last elements (its rows are in order)
            offset, rows, cols, stride = (int(v) for v in operands[:4])
            for element in (offset, offset + (rows - 1) * stride + cols - 1):
                _check_gm(ctx, pc, unit, coords, int(code[pc, C_AUX]), element)
        reads, fills = tile_print.run(ctx, pc, ub, cache, operands)
        return ScalarAccess(written_back=len(cache.written) - before, reads=reads, fills=fills)
    n_values = 2 if name in ("SST_UB", "SST_GM") else 1
    values = value_operands(ctx.enc, pc, regs, n_values)
    offset = int(values[0])
    if name == "DCCI":
        slot, entire, item = (int(v) for v in code[pc, C_AUX:C_AUX + 3])
        address = None
        if not entire:
            _check_gm(ctx, pc, unit, coords, slot, offset)
            address = int(ctx.tbase[slot]) + offset * item
        return ScalarAccess(written_back=cache.clean_invalidate(address))
    dtype = dtypes.BY_CODE[int(code[pc, C_DTYPE])]
    if name in ("SLD_UB", "SST_UB"):
        base, words, col_rows = (int(v) for v in code[pc, C_AUX:C_AUX + 3])
        if not 0 <= offset < words:
            raise _out_of_bounds(ctx, pc, unit, coords, offset, words)
        # a ColMajor tile's storage offset c * rows + r is word r * cols + c of its row-major values
        word = base + (offset % col_rows * (words // col_rows) + offset // col_rows if col_rows else offset)
        if name == "SLD_UB":
            regs[code[pc, C_DST], 0] = ub[word]
        else:
            ub[word] = _as_stored(values[1], dtype)
        return ScalarAccess(word=word)
    slot = int(code[pc, C_AUX])
    _check_gm(ctx, pc, unit, coords, slot, offset)
    address = int(ctx.tbase[slot]) + offset * dtype.itemsize
    if name == "SLD_GM":
        if init_check and not cache.dirty_bytes(address, dtype.itemsize) \
                and not gm.init_test(ctx.hbm_init, np.array([address]))[0]:
            raise _uninitialised(ctx, pc, unit, coords, slot, offset)
        stale = cache.stale(address, dtype.itemsize)
        raw, missed = cache.read(address, dtype.itemsize)
        regs[code[pc, C_DST], 0] = gm.load(raw, np.array([0]), dtype)[0]
        return ScalarAccess(missed, len(cache.written) - before, address, dtype.itemsize, stale=stale)
    else:
        raw = np.zeros(dtype.itemsize, np.uint8)
        gm.store(raw, np.array([0]), dtype, [values[1]])
        missed = cache.write(address, raw)
    return ScalarAccess(missed, len(cache.written) - before, address, dtype.itemsize)


def _as_stored(value, dtype) -> float:
    """A register word as the element word a tile of dtype holds (rounded or wrapped)."""
    raw = np.zeros(dtype.itemsize, np.uint8)
    gm.store(raw, np.array([0]), dtype, [value])
    return float(gm.load(raw, np.array([0]), dtype)[0])


def _check_gm(ctx, pc, unit, coords, slot, offset):
    count = int(ctx.tcount[slot])
    if not 0 <= offset < count:
        raise _out_of_bounds(ctx, pc, unit, coords, offset, count, ctx.tensor_names[slot])


def _where(ctx, pc, unit, coords) -> str:
    return f"line {ctx.prog.instrs[pc].line} on {UNIT_NAMES[unit]} of block {coords}"


def _out_of_bounds(ctx, pc, unit, coords, offset, count, tensor=None) -> OutOfBoundsError:
    ins = ctx.prog.instrs[pc]
    what = ins.comment or tensor or "memory"
    kind = "tile" if ins.op in ("SLD_UB", "SST_UB") else "tensor"
    return OutOfBoundsError(
        f"{ins.op} out of bounds at {_where(ctx, pc, unit, coords)}: the scalar unit accessed {what}[{offset}] "
        f"but {kind} '{what}' has {count} elements (valid 0..{count - 1})", kernel=ctx.kernel_name,
        file=ctx.prog.file, line=ins.line, block=coords, warp=unit, unit=UNIT_NAMES[unit], lane=None,
        offset=offset, count=count, tensor=what,
        hint="guard the index, or index the element within its tile or tensor (the device would read or "
             "write whatever lies there)")


def _uninitialised(ctx, pc, unit, coords, slot, offset) -> UninitializedReadError:
    ins = ctx.prog.instrs[pc]
    name = ctx.tensor_names[slot]
    return UninitializedReadError(
        f"initcheck: the scalar read {name}[{offset}] at {_where(ctx, pc, unit, coords)} reads an element "
        "that was never written", kernel=ctx.kernel_name, file=ctx.prog.file, line=ins.line, block=coords,
        warp=unit, unit=UNIT_NAMES[unit], lane=None, word=offset,
        hint=f"write {name}[{offset}] (pto.memcpy_h2d, a tstore) before the kernel reads it")
