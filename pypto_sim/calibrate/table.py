"""Write a latency table with fitted entries: the base table's text, entries replaced in place.

Comments, order and every entry the fit did not determine stay as they are; a fitted entry
keeps its other fields (per_repeat, k_tile, ...) and gets ``source = "fitted from
microbenchmarks (<label>)"``. Refitted [formulas] rows go to ``<table>_formulas.csv`` beside
the table (every row of the base's file, the refitted ones replaced). Fusion rules measured
by the fit replace the base's rule for the same pair (a saving of 0 removes it). Both files
are written beside their targets and renamed onto them (pypto_sim/output_files.py): never
half-written, and no temporary is left behind.
"""
from __future__ import annotations

import datetime
import json
import math
import re
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from .rows import CalibrationError
from ..output_files import output_path, write_file
from ..timing.machine import load_machine_from, resolve_machine
from .fit import LEAST

_ENTRY = re.compile(r"^(\s*)([A-Za-z_][A-Za-z0-9_]*)(\s*=\s*)\{(.*)\}(\s*(?:#.*)?)$")
_HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z_.]+)\s*\]\]?\s*(?:#.*)?$")


def _format(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def _rewrite(line, updates, source):
    m = _ENTRY.match(line)
    indent, key, eq, inner, tail = m.groups()
    fields = tomllib.loads(f"x = {{{inner}}}")["x"]
    for k, v in updates.items():
        fields[k] = v
    fields["source"] = source
    order = [k for k in fields if k != "source"] + ["source"]
    body = ", ".join(f"{k} = {_format(fields[k])}" for k in order)
    return f"{indent}{key}{eq}{{ {body} }}{tail}"


_CSV_DTYPE = {"float32": "fp32", "float16": "fp16", "any": "any"}


def _formulas_text(base, formulas) -> str:
    """The base's [formulas] rows with the refitted ones (``formula.OP.DTYPE.COLS``: slope,
    bias) replaced, as the text of ``<table>_formulas.csv``."""
    rows = dict(base.vector_formulas)
    for name, fields in formulas.items():
        _, op, dtype, cols = name.split(".")
        key = (op, dtype, cols if cols == "*" else int(cols))
        if key not in rows:
            raise CalibrationError(f"write_table: the base table has no [formulas] row for {key}")
        rows[key] = (fields["slope"], fields["bias"])
    lines = ["op,dtype,cols,slope,bias"] + [f"{op},{_CSV_DTYPE[dt]},{cols},{slope!r},{bias!r}"
                                            for (op, dt, cols), (slope, bias) in rows.items()]
    return "\n".join(lines) + "\n"


def _text(text):
    """write(f) of a text."""
    return lambda f: f.write(text)


def write_table(fitted, base, path, label=None) -> Path:
    """Write the base table (a Machine, a shipped name or a path) with the fitted entries
    (a :class:`~pypto_sim.calibrate.fit.Fitted` or any ``{name: {field: value}}``) to ``path``;
    ``label`` names the measurements in the sources (default: today's date). The result is
    loaded with ``load_machine_from`` before this returns, so it is a valid table. A directory
    target is a CalibrationError before anything is done; a file already at ``path`` is
    replaced atomically (never half-written, and a failure leaves it and any
    ``<table>_formulas.csv`` as they were, with no temporary file left behind)."""
    path = output_path(path, "write_table", CalibrationError, example="my_npu.toml", regular=True)
    base = resolve_machine(base)
    label = label or datetime.date.today().isoformat()
    undetermined = undetermined_entries(fitted)
    if undetermined:
        raise CalibrationError(
            f"write_table: the fit could not determine {len(undetermined)} entr"
            f"{'y' if len(undetermined) == 1 else 'ies'}: " + "; ".join(undetermined[:8])
            + (f" (and {len(undetermined) - 8} more)" if len(undetermined) > 8 else "")
            + f"; nothing was written to {path}",
            hint="a negative or non-finite value means the measurements contradict the model's rule "
                 "for that entry (see the fit's notes); drop those rows or measure again")
    source = f"fitted from microbenchmarks ({label})"
    pending = {name: dict(fields) for name, fields in fitted.items()
               if not name.startswith(("fusion.", "formula."))}
    for name in pending:
        if name.startswith(("memory.", "aicore.")):
            pending[name] = {"value": float(pending[name]["value"])}
    formulas = {name: fields for name, fields in fitted.items() if name.startswith("formula.")}
    formula_path = path.with_name(f"{path.stem}_formulas.csv")
    if formulas:
        output_path(formula_path, "write_table", CalibrationError, example="my_npu_formulas.csv",
                    regular=True)
    fusions = {name[len("fusion."):]: fields["saving"] for name, fields in fitted.items()
               if name.startswith("fusion.")}
    out, section, skipping = [], None, False
    for line in base.path.read_text(encoding="utf-8").splitlines():
        head = _HEADER.match(line)
        if head:
            section = head.group(1)
            skipping = False
            if line.strip().startswith("[[fusion"):
                block_start = len(out)
        if section == "fusion" and not head and not skipping:
            rule = re.match(r"^\s*(first|second)\s*=\s*\"([A-Za-z_]+)\"", line)
            if rule:
                out.append(line)
                text = "\n".join(out[block_start:])
                pair = re.findall(r'first\s*=\s*"(\w+)"', text), re.findall(r'second\s*=\s*"(\w+)"', text)
                if pair[0] and pair[1] and f"{pair[0][0].upper()}+{pair[1][0].upper()}" in fusions:
                    del out[block_start:]
                    skipping = True
                continue
        if skipping:
            continue
        m = _ENTRY.match(line)
        if m and section in ("instruction", "memory", "pipes", "aicore"):
            key = m.group(2) if section == "instruction" else f"{section}.{m.group(2)}"
            if key in pending:
                line = _rewrite(line, pending.pop(key), source)
        elif m and section == "formulas" and m.group(2) == "vector" and formulas:
            line = _rewrite(line, {"file": formula_path.name},
                            f"{source}: {len(formulas)} of {len(base.vector_formulas)} rows refitted; "
                            f"the base's: {base.formula_source}")
        elif section is None and re.match(r"^name\s*=", line):
            line = f"name = {json.dumps(path.stem)}"
        out.append(line)
    if pending:
        raise CalibrationError(f"write_table: the base table {base.path} has no single-line entry for "
                               f"{sorted(pending)}", hint="entries must be inline tables on one line")
    text = (f"# Fitted from microbenchmarks ({label}) starting from {base.path.name}: entries whose\n"
            f"# source says \"fitted from microbenchmarks\" were measured; the rest are the base's.\n"
            + "\n".join(out).rstrip("\n") + "\n")
    for pair, saving in fusions.items():
        if saving:
            first, second = pair.split("+")
            text += (f"\n[[fusion]]\nfirst = \"{first}\"\nsecond = \"{second}\"\nsaving = {int(saving)}\n"
                     f"source = \"{source}\"\n")
    # written beside the target (the formulas file first, in its place: the table names it),
    # loaded, and only then put in its place: a table that does not load never replaces
    # anything, and on any failure the formulas file that was there before is put back
    formula_text = _formulas_text(base, formulas) if formulas else None
    kept = formula_path.read_bytes() if formulas and formula_path.is_file() else None
    replaced = False
    try:
        if formula_text is not None:
            write_file(formula_path, _text(formula_text), "write_table", CalibrationError)
            replaced = True
        write_file(path, _text(text), "write_table", CalibrationError,
                   check=lambda trial: load_machine_from(trial[0]))   # MachineError naming the entry
    except BaseException:
        if replaced and kept is None:
            formula_path.unlink(missing_ok=True)
        elif replaced:
            write_file(formula_path, lambda f: f.write(kept), "write_table", CalibrationError, binary=True)
        raise
    return path


def undetermined_entries(fitted) -> list:
    """``NAME.FIELD = value (how it was derived)`` for every fitted value a machine table would
    refuse: not a finite number, or below the field's least value (fit.LEAST: 0 for latencies,
    heads, tails, floors, savings and formula terms, 1 for issue intervals, above 0 for the
    rest)."""
    bad = []
    for name, fields in fitted.items():
        for field, value in fields.items():
            if field == "source":
                continue
            number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            least = LEAST.get(field)
            if not number or (value < least if least is not None else value <= 0):
                how = fitted.derivation(name, field) if hasattr(fitted, "derivation") else ""
                bad.append(f"{name}.{field} = {value!r}" + (f" ({how})" if how else ""))
    return bad
