"""CSV exports in the shapes Ascend users know.

- ``instr_exe.csv``: one row per instruction (pc), like msprof op simulator's
  ``*_instr_exe.csv``: instr, PC, pipe, call_count, cycles, running_time(us), detail;
- ``code_exe.csv``: one row per source line, like ``*_code_exe.csv``: code (file:line),
  call_count, cycles, running_time(us);
- ``pipeline_summary.csv``: one row per core, like PTO-hw Perf-Sim's
  ``<op>_pipeline_summary.csv``: total, active window, busy cycles overall and per pipe;
- ``bubbles.csv``: one row per idle gap of a pipe, with its cause;
- ``op_summary.csv`` (AI-core kernels): msprof's op_summary columns, one row per AI core and
  unit and a kernel total row (msprof.py).

Cycles are summed over warp-instructions (issue to completion), as msprof sums them over
calls; running_time(us) converts them at the machine's clock.
"""
from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

from ..errors import ArgumentError, ProfileError
from ..ir.printer import format_instr
from ..isa import PIPES
from ..timing.records import popcount
from .hotspots import compute_core_rows
from .aicore_summary import PERF_SIM_COLUMNS, summary_rows
from ..output_files import output_path, write_files
from .msprof import OP_SUMMARY_COLUMNS
from .tables import csv_writer

INSTR_COLUMNS = ("op_name", "pc", "pc_addr", "instr", "pipe", "file", "line", "source", "call_count",
                 "lane_count", "cycles", "stall_cycles", "running_time(us)", "bytes", "detail")
CODE_COLUMNS = ("op_name", "code", "line", "source", "call_count", "lane_count", "cycles",
                "stall_cycles", "running_time(us)", "instructions")
SUMMARY_COLUMNS = ("op_name", "core_id", "total_cycles", "active_start_cycle", "active_end_cycle",
                   "active_cycles", "busy_cycles") + tuple(f"{p}_cycles" for p in PIPES) + (
                   "blocks", "warp_instructions")
AICORE_BUBBLE_COLUMNS = ("core_id", "unit", "pipe", "start_cycle", "end_cycle", "cycles", "kind",
                         "cause", "waited_for", "line", "pc")
BUBBLE_COLUMNS = ("core_id", "pipe", "start_cycle", "end_cycle", "cycles", "kind", "cause",
                  "waited_for", "line", "pc")


def _us(prof, cycles) -> float:
    return round(cycles / (prof.machine.clock_ghz * 1e3), 6)


def instr_rows(prof) -> list:
    rec = prof.records
    if not len(rec):
        return []
    n_pc = len(prof.pc_name)
    calls = np.bincount(rec.pc, minlength=n_pc)
    lanes = np.bincount(rec.pc, weights=popcount(rec.mask), minlength=n_pc)
    cycles = np.bincount(rec.pc, weights=rec.complete - rec.issue, minlength=n_pc)
    stall = np.bincount(rec.pc, weights=rec.stall, minlength=n_pc)
    moved = np.bincount(rec.pc, weights=rec.bytes, minlength=n_pc)
    prog = prof.program
    rows = []
    for pc in np.nonzero(calls)[0].tolist():
        line = prof.pc_line[pc]
        rows.append({"op_name": prof.kernel_name, "pc": pc, "pc_addr": f"0x{pc:04x}",
                     "instr": prof.pc_name[pc], "pipe": prof.pipe_names[prof.pc_pipe_index(pc)],
                     "file": prog.file, "line": line,
                     "source": prog.source_lines.get(line, "").strip(),
                     "call_count": int(calls[pc]), "lane_count": int(lanes[pc]),
                     "cycles": int(cycles[pc]), "stall_cycles": int(stall[pc]),
                     "running_time(us)": _us(prof, int(cycles[pc])), "bytes": int(moved[pc]),
                     "detail": " ".join(format_instr(prog, pc).split())})
    return rows


def code_rows(prof) -> list:
    rows = []
    for r in prof.hotspots().rows:
        rows.append({"op_name": prof.kernel_name, "code": f"{r['file']}:{r['line']}",
                     "line": r["line"], "source": r["source"], "call_count": r["executions"],
                     "lane_count": r["lane_executions"], "cycles": r["busy_cycles"],
                     "stall_cycles": r["stall_cycles"],
                     "running_time(us)": _us(prof, r["busy_cycles"]),
                     "instructions": " ".join(r["instructions"])})
    rows.sort(key=lambda r: r["line"])
    return rows


def _writer(columns, rows):
    """write(f) of one CSV: the header, then each row's ``columns`` in order."""
    def write(f):
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: row[c] for c in columns})
    return write


def csv_folder(directory) -> Path:
    """``directory`` as a Path, refused before anything is written when it is empty, no str or
    path, or is a file (or lies under one)."""
    if isinstance(directory, (bytes, bool)) or not isinstance(directory, (str, os.PathLike)):
        raise ArgumentError(f"export_csv: the directory must be a str or a pathlib.Path, not "
                            f"{type(directory).__name__} {directory!r}", hint="e.g. export_csv('out')")
    if not str(directory).strip():
        raise ArgumentError("export_csv: the directory is empty; give the folder to write into",
                            hint="e.g. export_csv('out'), or export_csv('.') for the working directory")
    out = Path(directory)
    for folder in (out, *out.parents):
        if folder.exists() or folder.is_symlink():
            if not folder.is_dir():
                raise ProfileError(f"export_csv: {directory} must be a folder, but {folder} is a file; "
                                   f"it is left as it was",
                                   hint="give the folder to write the CSVs into (created if needed)",
                                   path=str(directory))
            break
    return out


def export_csv(prof, directory, prefix="") -> dict:
    """Write the four CSVs into ``directory`` (created if needed); return {name: path}. Every
    row is computed and every path checked before anything is written; files of these names
    already there are replaced, each atomically, other files are left alone (pypto_sim/output_files.py)."""
    out = csv_folder(directory)
    if not isinstance(prefix, str) or "/" in prefix or os.sep in prefix:
        raise ArgumentError(f"export_csv: prefix must be a str with no path separator, not {prefix!r}",
                            hint="prefix starts each file's name (prefix='run1_' gives run1_instr_exe.csv); "
                                 "give folders in directory")
    prof.records          # ProfileError (how to get them) when the profile kept no timeline
    if getattr(prof.program, "aicore", False):
        # AI-core kernels: one row per core and unit, in Perf-Sim's pipeline_summary.csv columns
        summary = (PERF_SIM_COLUMNS, summary_rows(prof))
        bubble_columns = AICORE_BUBBLE_COLUMNS
    else:
        summary = (SUMMARY_COLUMNS, compute_core_rows(prof))
        bubble_columns = BUBBLE_COLUMNS
    tables = {"instr_exe": (INSTR_COLUMNS, instr_rows(prof)),
              "code_exe": (CODE_COLUMNS, code_rows(prof)),
              "pipeline_summary": summary,
              "bubbles": (bubble_columns, prof.bubbles().rows())}
    files, paths = [], {}
    for name, (columns, rows) in tables.items():
        paths[name] = output_path(out / f"{prefix}{name}.csv", "export_csv", example=f"{name}.csv")
        files.append((paths[name], _writer(columns, rows), False))
    if getattr(prof.program, "aicore", False):
        # and msprof's op_summary (PipeUtilization ratios per core and unit): profiler/msprof.py
        paths["op_summary"] = output_path(out / f"{prefix}op_summary.csv", "export_csv",
                                          example="op_summary.csv")
        files.append((paths["op_summary"], csv_writer(OP_SUMMARY_COLUMNS, prof.op_summary().rows), False))
    write_files(files, "export_csv")
    return paths
