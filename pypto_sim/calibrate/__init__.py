"""Closing the loop with hardware: microbenchmarks, fitting a latency table, correlation.

- ``run_microbenchmarks(machine=None)`` runs PTO kernels that measure each instruction's latency
  and issue interval and the memory system, returning rows (benchmark, instruction, size, cycles);
  ``write_rows`` / ``read_rows`` store them as CSV (the format a hardware user fills in);
- ``fit(rows, base=None)`` turns rows into table entries ``{name: {"latency", "issue_interval",
  ...}}``; ``write_table(fitted, base, path)`` writes a new latency table with them;
- ``correlate(simulated, measured)``: Pearson r, MAE, MAPE, NMSE and a scatter plot;
- ``profile_on_npu`` runs a kernel on real hardware through a backend plugin;
- ``coverage()`` / ``UNCOVERED``: which table entries the microbenchmarks measure, and why the
  others cannot be; ``aicore_coverage()`` the same for the AI core's bandwidths, drain, vector
  heads / tails / slopes and [formulas] rows (aicore_kernels.py, aicore_fit.py).

The workflow end to end is docs/calibration.md.
"""
from .aicore_kernels import aicore_coverage
from .correlate import Correlation, KernelPoint, correlate
from .fit import Fitted, fit
from .microbench import NOT_FITTED, UNCOVERED, coverage, run_microbenchmarks
from .npu import npu_backends, profile_on_npu
from .rows import CalibrationError, Row, read_rows, write_rows
from .table import write_table

__all__ = ["aicore_coverage", "CalibrationError", "Correlation", "Fitted", "KernelPoint", "NOT_FITTED", "Row",
           "UNCOVERED", "correlate", "coverage", "fit", "npu_backends", "profile_on_npu",
           "read_rows", "run_microbenchmarks", "write_rows", "write_table"]
