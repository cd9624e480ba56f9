"""Measurement rows and their CSV format (docs/calibration.md, "The CSV format").

One row is one kernel run: ``benchmark`` (which microbenchmark, with its parameters after dots:
``tload_chain.bytes=4096``), ``instruction`` (the latency-table entry it measures: ``ADD``,
``pipes.scalar``, ``memory.hbm_chip_bytes_per_cycle``...), ``size`` (the swept quantity: how
many of the measured instructions the kernel executes, or bytes for the bandwidth sweeps) and
``cycles`` (the kernel's total cycles), plus optional ``machine`` and ``notes`` columns.
"""
from __future__ import annotations

import csv
import math
import numbers
from dataclasses import dataclass
from pathlib import Path

from ..errors import PtoError
from ..output_files import output_path, write_file

COLUMNS = ("benchmark", "instruction", "size", "cycles", "machine", "notes")
REQUIRED = COLUMNS[:4]
_SIZE_HINT = ("size is the swept quantity: how many measured instructions (or bytes) the kernel "
              "runs, a whole number >= 1 (docs/calibration.md, \"The CSV format\")")
_CYCLES_HINT = ("cycles are the kernel's measured total cycles, a finite number > 0; measure that "
                "row again or remove it")


class CalibrationError(PtoError):
    """Microbenchmark rows that cannot be read or fitted (names the file, row and column)."""


@dataclass(frozen=True)
class Row:
    """One measurement: ``cycles`` of benchmark ``benchmark`` at ``size`` (see module doc)."""

    benchmark: str
    instruction: str
    size: int
    cycles: float
    machine: str = ""
    notes: str = ""


def write_rows(rows, path) -> Path:
    """Write rows as CSV (header ``benchmark,instruction,size,cycles,machine,notes``). A
    directory is a CalibrationError before anything is written; a file already at ``path`` is
    replaced atomically, never left half-written (pypto_sim/output_files.py)."""
    path = output_path(path, "write_rows", CalibrationError, example="rows.csv")

    def write(f):
        out = csv.writer(f)
        out.writerow(COLUMNS)
        for r in rows:
            cycles = int(r.cycles) if float(r.cycles).is_integer() else r.cycles
            out.writerow((r.benchmark, r.instruction, r.size, cycles, r.machine, r.notes))

    return write_file(path, write, "write_rows", CalibrationError)


def read_rows(path) -> list:
    """Read a CSV of rows. Columns benchmark, instruction, size and cycles are required, in
    any order; machine and notes are optional; blank lines and lines starting with # are
    skipped. Raises CalibrationError naming the line of a malformed row: one without a
    benchmark or instruction, a size that is not a whole number >= 1, or cycles that are
    not a finite number > 0 (nan, inf, 0 and negative cycles are refused)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CalibrationError(f"no rows file at {path}",
                               hint="write one with `pypto-sim microbench -o rows.csv`") from None
    numbered = [(i, ln) for i, ln in enumerate(text.splitlines(), start=1)
                if ln.strip() and not ln.lstrip().startswith("#")]
    reader = csv.DictReader([ln for _, ln in numbered])
    missing = [c for c in REQUIRED if c not in (reader.fieldnames or ())]
    if missing:
        raise CalibrationError(f"{path}: the header must name the columns {', '.join(REQUIRED)} "
                               f"(missing: {', '.join(missing)})",
                               hint="first line: benchmark,instruction,size,cycles,machine,notes")
    rows = []
    for k, rec in enumerate(reader, start=1):
        where = f"{path}: line {numbered[reader.line_num - 1][0]} (data row {k})"
        bench, instr = ((rec.get(c) or "").strip() for c in ("benchmark", "instruction"))
        if not bench or not instr:
            raise CalibrationError(f"{where} has no benchmark or instruction",
                                   hint="every row names its benchmark and the instruction it measures")
        raw = (rec.get("size") or "").strip()
        what = f"{where}, {bench} {instr} at size {raw or '(none)'}"
        size = _parse(raw, what, "size", _SIZE_HINT)
        if not (math.isfinite(size) and size.is_integer()):
            raise CalibrationError(f"{what}: size {raw} is not a whole number", hint=_SIZE_HINT)
        cycles = _parse(rec.get("cycles"), what, "cycles", _CYCLES_HINT)
        rows.append(check_row(Row(bench, instr, int(size), cycles, (rec.get("machine") or "").strip(),
                                  (rec.get("notes") or "").strip()), where))
    if not rows:
        raise CalibrationError(f"{path}: no data rows")
    return rows


def _parse(text, where, column, hint) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        raise CalibrationError(f"{where}: {column} {text!r} is not a number", hint=hint) from None


def check_row(row, where: str) -> Row:
    """``row`` if it is a usable measurement, else a CalibrationError starting with ``where``
    (the file and line, or the row's index), then the row (benchmark, instruction, size) and
    the bad value: benchmark and instruction non-empty text, size a whole number >= 1, cycles
    a finite number > 0."""
    try:
        bench, instr, size, cycles = row.benchmark, row.instruction, row.size, row.cycles
    except AttributeError:
        raise CalibrationError(f"{where} is a {type(row).__name__}, not a Row",
                               hint="make rows with pypto_sim.calibrate.Row(benchmark, instruction, size, "
                                    "cycles) or read them with read_rows") from None
    if not (isinstance(bench, str) and bench.strip() and isinstance(instr, str) and instr.strip()):
        raise CalibrationError(f"{where}: benchmark {bench!r} and instruction {instr!r} must be "
                               "non-empty text", hint="every row names its benchmark and the instruction it measures")
    where = f"{where}, {bench} {instr} at size {_show(size)}"
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
        raise CalibrationError(f"{where}: size {_show(size)} must be a whole number >= 1", hint=_SIZE_HINT)
    positive_cycles(cycles, f"{where}: cycles", _CYCLES_HINT)
    return row


def positive_cycles(value, what: str, hint: str) -> float:
    """``value`` as a float if it is a finite number > 0 (cycles: a row's, a correlated
    kernel's), else a CalibrationError starting with ``what``, then the value."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise CalibrationError(f"{what} = {_show(value)} ({type(value).__name__}): not a number", hint=hint)
    if not (value > 0 and (isinstance(value, numbers.Integral) or math.isfinite(value))):
        raise CalibrationError(f"{what} = {_show(value)}: not a finite number > 0", hint=hint)
    return float(value)


def _show(value) -> str:
    """A value as an error shows it: text quoted, numbers (numpy's too) plain."""
    return repr(value) if isinstance(value, str) or value is None else str(value)
