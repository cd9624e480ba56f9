"""Compact records of what happened during a simulated launch.

One row per issued warp-instruction, appended to plain lists during the run and turned into
numpy arrays once at the end (appending tuples is the cheapest thing SimPy code can do).
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np

from ..exec.record_why import WHY_HBM, WHY_MISSED, WHY_SHARED

# stall causes: why a warp-instruction issued later than the warp was ready to issue
STALL_CAUSES = ("none", "operand", "pipe", "issue", "barrier", "barrier_block", "memory", "wait_all",
                "tile_raw", "tile_war", "after", "flag", "cross_core", "syncall", "signal")
# what each cause means, for reports
CAUSE_TEXT = {"none": "no wait", "operand": "an operand from an earlier instruction",
              "pipe": "its pipe was busy (issue interval)", "issue": "the core's issue port",
              "barrier": "barrier(): the warp's own stores; pipe_barrier(): the pipe's earlier operations",
              "barrier_block": "barrier_block(): other warps",
              "memory": "memory bandwidth", "wait_all": "wait_all(): outstanding tile operations",
              "tile_raw": "a tile it reads was still being written (data not loaded yet)",
              "tile_war": "a tile it overwrites was still being read (pipeline depth: no free buffer)",
              "after": "a pipeline stage it comes after", "flag": "an event flag (wait_flag)",
              "cross_core": "a cross-core flag of the other unit(s) of the AI core",
              "syncall": "pto.syncall: the other AI cores of the launch had not all arrived",
              "signal": "pto.twait / pto.ttest: the scalar unit reading GM signals (a TWAIT until they are set)"}
CAUSE = {name: i for i, name in enumerate(STALL_CAUSES)}

FIELDS = ("block", "warp", "core", "pc", "issue", "complete", "stall", "cause", "cause_pc", "mask",
          "bytes", "why")
# ``why`` of an AI-core tile instruction's record (0 for every other record): what its
# ``cause`` (why it started after its dispatch) does not say - the cause of its scalar unit's
# wait before dispatching it (a full pipe queue, an operand), whether a load paid the L2's
# miss extra, the cycles a transfer waited for shared L2 / HBM bandwidth beyond its own
# path's (below 2**32), and the bytes a load or store moved from or to HBM (its missed lines,
# whole: 0 exactly when every line hit; the L2 is write-back, so a store's hits stay in it:
# docs/timing.md, "L2"); packed by why_code, read by why_fields and why_hbm_read_bytes (the
# packing: exec/record_why.py).


def why_code(issue_cause: int, l2_missed: int, shared_wait: int, hbm_read_bytes: int = 0) -> int:
    """The ``why`` column's value: issue_cause (a CAUSE index < 16) + 16 * l2_missed (0 / 1)
    + 32 * shared_wait (cycles, < 2**32) + 2**37 * hbm_read_bytes."""
    return issue_cause + WHY_MISSED * l2_missed + WHY_SHARED * shared_wait + WHY_HBM * hbm_read_bytes


def _wide(why):
    """``why`` as 64-bit integers: the records keep a column in the narrowest dtype its values
    fit, and the packing's constants do not fit 32 bits."""
    if isinstance(why, np.ndarray):
        return why.astype(np.int64)
    return np.int64(why) if isinstance(why, np.integer) else why


def why_fields(why):
    """(issue cause, l2 missed, shared wait cycles) of ``why`` values (ints or arrays)."""
    why = _wide(why)
    return why % WHY_MISSED, (why // WHY_MISSED) % 2, (why // WHY_SHARED) % (WHY_HBM // WHY_SHARED)


def why_hbm_read_bytes(why):
    """The bytes a transfer moved from or to HBM (its L2-missed share), of ``why`` values."""
    return _wide(why) // WHY_HBM


# the narrowest dtype each column may take (codes and program counters in 16 bits, a stall
# cause in 8; cycles, bytes, blocks and masks in 32 bits at least): record columns are stored
# in the narrowest signed dtype from this floor up that holds twice the column's extremes (so
# sums and differences of two values stay in range), int64 at most
FLOOR = {"block": np.int32, "warp": np.int16, "core": np.int16, "pc": np.int16, "cause": np.int8,
         "cause_pc": np.int16}
_WIDTHS = (np.int8, np.int16, np.int32, np.int64)
# rows the compiled engines write into their buffer before it is columnised (88 bytes a row)
ROWS_PER_CHUNK = 1 << 16


def narrow(column: np.ndarray, field: str) -> np.ndarray:
    """A 1-D integer column in the narrowest dtype that FLOOR allows for field and that holds
    twice its extremes (a copy)."""
    floor = np.dtype(FLOOR.get(field, np.int32))
    if len(column):
        lo, hi = int(column.min()), int(column.max())
        for dt in _WIDTHS:
            info = np.iinfo(dt)
            if np.dtype(dt).itemsize >= floor.itemsize and info.min <= 2 * lo and 2 * hi <= info.max:
                return column.astype(dt)
        return column.astype(np.int64)
    return column.astype(floor)


class RecordColumns:
    """LaunchRecords built from chunks of int64 rows (the compiled engines' record buffer):
    each chunk is columnised into narrow columns when given, so a launch's records never exist
    as one int64 array; ``records()`` joins the chunks column by column, dropping each chunk's
    column as it is copied."""

    def __init__(self):
        self.chunks: list = []

    def add(self, rows: np.ndarray) -> None:
        """Append an (n, len(FIELDS)) int64 array of rows (copied: the caller may reuse it)."""
        if len(rows):
            self.chunks.append([narrow(rows[:, i], f) for i, f in enumerate(FIELDS)])

    def records(self) -> "LaunchRecords":
        """All rows given so far as LaunchRecords (the builder is emptied)."""
        chunks, self.chunks = self.chunks, []
        if not chunks:
            return LaunchRecords(*(np.zeros(0, FLOOR.get(f, np.int32)) for f in FIELDS))
        cols = []
        for i in range(len(FIELDS)):
            parts = [c[i] for c in chunks]
            cols.append(parts[0] if len(parts) == 1 else np.concatenate(parts, dtype=np.result_type(*parts)))
            for c in chunks:
                c[i] = None
            del parts
        return LaunchRecords(*cols)


class RecordBuffer:
    """Rows of FIELDS, stored flat in an int64 ``array`` (96 bytes a row, not a tuple's ~400):
    the model appends with ``extend`` (a row tuple); len(), indexing and slicing give tuples."""

    width = len(FIELDS)

    def __init__(self):
        self.data = array("q")
        self.extend = self.data.extend

    def __len__(self):
        return len(self.data) // self.width

    def __getitem__(self, k):
        w = self.width
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(k)
        return tuple(self.data[k * w:(k + 1) * w])

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __bool__(self):
        return len(self.data) > 0

    def array(self) -> np.ndarray:
        """All rows as an (n, len(FIELDS)) int64 array (a copy)."""
        return np.frombuffer(self.data, dtype=np.int64).reshape(-1, self.width).copy()


class FoldedRecords(RecordBuffer):
    """A RecordBuffer for a launch that keeps no records: every ``fold_rows`` rows are summed
    into per-pc totals and dropped, so memory stays flat however long the launch runs."""

    def __init__(self, n_pc, fold_rows=1 << 16):
        super().__init__()
        self.n_pc = n_pc
        self.fold_rows = fold_rows
        self.sums = np.zeros((n_pc, 4), np.int64)
        self.extend = self._extend

    def _extend(self, row):
        self.data.extend(row)
        if len(self.data) >= self.fold_rows * self.width:
            self.fold()

    def fold(self):
        """Sum the rows held into the totals and drop them."""
        if self.data:
            t = PcTotals.from_records(LaunchRecords.from_array(
                np.frombuffer(self.data, dtype=np.int64).reshape(-1, self.width)), self.n_pc)
            self.sums += np.stack([t.count, t.lanes, t.busy, t.stall], 1)
            del self.data[:]

    def totals(self) -> "PcTotals":
        """Per-pc totals of every row given so far."""
        self.fold()
        return PcTotals.from_array(self.sums)


@dataclass
class LaunchRecords:
    """Per warp-instruction columns (numpy arrays of equal length), in issue order; each an
    integer column of the narrowest dtype that holds it (``narrow``)."""

    block: np.ndarray
    warp: np.ndarray
    core: np.ndarray
    pc: np.ndarray
    issue: np.ndarray
    complete: np.ndarray
    stall: np.ndarray
    cause: np.ndarray
    cause_pc: np.ndarray
    mask: np.ndarray
    bytes: np.ndarray
    why: np.ndarray

    @classmethod
    def from_rows(cls, rows) -> "LaunchRecords":
        """Records from a RecordBuffer or a list of row tuples."""
        if isinstance(rows, RecordBuffer):           # a view: from_array copies into columns
            arr = np.frombuffer(rows.data, dtype=np.int64).reshape(-1, rows.width)
        elif rows:
            arr = np.array(rows, dtype=np.int64)
        else:
            arr = np.zeros((0, len(FIELDS)), np.int64)
        return cls.from_array(arr)

    @classmethod
    def from_array(cls, arr: np.ndarray) -> "LaunchRecords":
        """Records from an (n, len(FIELDS)) int64 array of rows, each column in its narrowest
        dtype (``narrow``)."""
        cols = RecordColumns()
        cols.add(arr)
        return cols.records()

    def __len__(self):
        return len(self.pc)


@dataclass
class PcTotals:
    """Per pc, summed over the warp-instructions that issued it: ``count``, ``lanes`` (active
    lanes), ``busy`` (issue to completion) and ``stall`` cycles. What a profile keeps when the
    per-instruction records are not kept, and all that its cycle breakdown and hotspots need."""

    count: np.ndarray
    lanes: np.ndarray
    busy: np.ndarray
    stall: np.ndarray

    @classmethod
    def from_array(cls, totals: np.ndarray) -> "PcTotals":
        """From an (n_pc, 4) int64 array of count, lanes, busy, stall (the compiled engine's)."""
        return cls(*(np.ascontiguousarray(totals[:, i]) for i in range(4)))

    @classmethod
    def from_records(cls, records: LaunchRecords, n_pc: int) -> "PcTotals":
        """Summed from per-instruction records."""
        def total(weights=None):
            return np.bincount(records.pc, weights=weights, minlength=n_pc)[:n_pc].astype(np.int64)
        return cls(total(), total(popcount(records.mask)), total(records.complete - records.issue),
                   total(records.stall))

    @property
    def warp_instructions(self) -> int:
        return int(self.count.sum())


def popcount(masks: np.ndarray) -> np.ndarray:
    """Active lanes of each 32-bit mask (SWAR bit counting, as the compiled engine does)."""
    m = masks.astype(np.uint64) & np.uint64(0xFFFFFFFF)
    m = m - ((m >> np.uint64(1)) & np.uint64(0x55555555))
    m = (m & np.uint64(0x33333333)) + ((m >> np.uint64(2)) & np.uint64(0x33333333))
    m = (m + (m >> np.uint64(4))) & np.uint64(0x0F0F0F0F)
    return (((m * np.uint64(0x01010101)) & np.uint64(0xFFFFFFFF)) >> np.uint64(24)).astype(np.int64)
