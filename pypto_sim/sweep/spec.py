"""`pypto-sim sweep SPEC.toml`: a sweep described in TOML.

    factory = "sweep_gemm_tiles.py:gemm_case"   # file.py:function (relative to the spec) or module:function
    machine = "ascend910b"                # optional base table (name or path)
    metric = "total_cycles"               # optional: the column the best points minimise
    path = ["."]                          # optional: directories to import a module factory from
    timeout = 600                         # optional: seconds one point may run
    [params]
    tile_k = [32, 64]
    depth = [1, 2]
    [machine_overrides]
    "memory.hbm_chip_bytes_per_cycle" = [973, 1946]
"""
from __future__ import annotations

import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from ..errors import SweepError
from .run import DEFAULT_TIMEOUT_S, sweep

# key -> (what it must be, a check)
_KEYS = {
    "factory": ("a string 'file.py:function' or 'module:function'", lambda v: isinstance(v, str)),
    "machine": ("a table name or path", lambda v: isinstance(v, str)),
    "metric": ("a column name", lambda v: isinstance(v, str)),
    "path": ("a list of directories", lambda v: isinstance(v, list) and all(isinstance(d, str) for d in v)),
    "timeout": ("a number of seconds > 0", lambda v: isinstance(v, (int, float))
                and not isinstance(v, bool) and v > 0),
    "params": ("a table [params] of name = values", lambda v: isinstance(v, dict)),
    "machine_overrides": ("a table [machine_overrides] of key = values", lambda v: isinstance(v, dict)),
}


def load_spec(spec_path) -> dict:
    """The spec's keys, checked: unknown keys, wrong types and a missing factory are a
    SweepError naming the file and the key."""
    spec_path = Path(spec_path)
    try:
        spec = tomllib.loads(spec_path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SweepError(f"sweep spec {spec_path}: cannot be read: {exc.strerror}",
                         hint="check the path (a spec is a TOML file: docs/sweeps.md)") from None
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"sweep spec {spec_path}: not valid TOML: {exc}") from None
    for key, value in spec.items():
        if key not in _KEYS:
            raise SweepError(f"sweep spec {spec_path}: unknown key {key!r}",
                             hint="the keys are " + ", ".join(_KEYS))
        what, ok = _KEYS[key]
        if not ok(value):
            raise SweepError(f"sweep spec {spec_path}: {key} = {value!r} must be {what}")
    if "factory" not in spec:
        raise SweepError(f"sweep spec {spec_path}: needs factory = \"file.py:function\" or "
                         "\"module:function\"")
    return spec


def run_spec(spec_path, output, engine=None, workers=None, resume=False, top=5,
             timeout=None) -> int:
    """Run the sweep a spec describes, write the table to output, print the best points.
    Returns 0; a spec or usage mistake, or every point failing, raises SweepError (the
    pypto-sim command says it in one line and exits 1)."""
    return _run_spec(spec_path, output, engine, workers, resume, top, timeout)


def _run_spec(spec_path, output, engine, workers, resume, top, timeout) -> int:
    spec_path = Path(spec_path)
    spec = load_spec(spec_path)
    for d in spec.get("path", []):
        p = str((spec_path.parent / d).resolve())
        if p not in sys.path:
            sys.path.insert(0, p)
    factory = spec["factory"]
    target, _, function = factory.rpartition(":")
    if target.endswith(".py"):                      # a file is relative to the spec
        factory = f"{(spec_path.parent / target).resolve()}:{function}"
    machine = spec.get("machine")
    if machine is not None and machine.endswith(".toml"):
        machine = str((spec_path.parent / machine).resolve())
    if timeout is None:
        timeout = spec.get("timeout", DEFAULT_TIMEOUT_S)
    frame = sweep(factory, params=spec.get("params"),
                  machine_overrides=spec.get("machine_overrides"), machine=machine,
                  engine=engine, workers=workers, out=output, resume=resume, timeout=timeout)
    metric = spec.get("metric", "total_cycles")
    if metric not in frame.columns:
        raise SweepError(f"sweep spec {spec_path}: metric {metric!r} is not a column of the table",
                         hint="e.g. total_cycles, simulated_us, warp_instructions, busy.<instruction>")
    ok = frame[frame["error"].isna()]
    cols = [c for c in frame.columns if c.startswith(("param.", "override."))] + [metric]
    print(f"{len(frame)} points, {len(frame) - len(ok)} failed; table in {output}")
    if len(ok) < len(frame):
        print(f"first failure: {frame[frame['error'].notna()]['error'].iloc[0]}")
    print(ok.sort_values(metric)[cols].head(top).to_string(index=False))
    return 0
