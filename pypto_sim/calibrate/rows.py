"""Measurement rows and their CSV format (docs/calibration.md, "The CSV format").

One row is one kernel run: ``benchmark`` (which microbenchmark, with its parameters after dots:
``tload_chain.bytes=4096``), ``instruction`` (the latency-table entry it measures: ``ADD``,
``pipes.scalar``, ``memory.hbm_chip_bytes_per_cycle``...), ``size`` (the swept quantity: how
many of the measured instructions the kernel executes, or bytes for the bandwidth sweeps) and
``cycles`` (the kernel's total cycles), plus optional ``machine`` and ``notes`` columns.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from ..errors import PtoError

COLUMNS = ("benchmark", "instruction", "size", "cycles", "machine", "notes")
REQUIRED = COLUMNS[:4]


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
    """Write rows as CSV (header ``benchmark,instruction,size,cycles,machine,notes``)."""
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)
        for r in rows:
            cycles = int(r.cycles) if float(r.cycles).is_integer() else r.cycles
            out.writerow((r.benchmark, r.instruction, r.size, cycles, r.machine, r.notes))
    return path


def read_rows(path) -> list:
    """Read a CSV of rows. Columns benchmark, instruction, size and cycles are required, in
    any order; machine and notes are optional; blank lines and lines starting with # are
    skipped. Raises CalibrationError naming the line of a malformed row."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CalibrationError(f"no rows file at {path}",
                               hint="write one with `pypto-sim microbench -o rows.csv`") from None
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    reader = csv.DictReader(lines)
    missing = [c for c in REQUIRED if c not in (reader.fieldnames or ())]
    if missing:
        raise CalibrationError(f"{path}: the header must name the columns {', '.join(REQUIRED)} "
                               f"(missing: {', '.join(missing)})",
                               hint="first line: benchmark,instruction,size,cycles,machine,notes")
    rows = []
    for k, rec in enumerate(reader, start=2):
        try:
            size = int(float(rec["size"]))
            cycles = float(rec["cycles"])
        except (TypeError, ValueError):
            raise CalibrationError(f"{path}: data row {k - 1}: size {rec.get('size')!r} and cycles "
                                   f"{rec.get('cycles')!r} must be numbers") from None
        if not rec["benchmark"] or not rec["instruction"]:
            raise CalibrationError(f"{path}: data row {k - 1} has no benchmark or instruction")
        rows.append(Row(rec["benchmark"].strip(), rec["instruction"].strip(), size, cycles,
                        (rec.get("machine") or "").strip(), (rec.get("notes") or "").strip()))
    if not rows:
        raise CalibrationError(f"{path}: no data rows")
    return rows
