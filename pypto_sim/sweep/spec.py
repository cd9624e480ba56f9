"""`pypto-sim sweep SPEC.toml`: a sweep described in TOML.

    factory = "my_cases:gemm_case"        # module:function returning a pto.SweepCase
    machine = "ascend910b"                # optional base table (name or path)
    metric = "total_cycles"               # optional: the column the best points minimise
    path = ["."]                          # optional: directories to import the factory from
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


def run_spec(spec_path, output, engine=None, workers=None, resume=False, top=5) -> int:
    """Run the sweep a spec describes, write the table to output, print the best points."""
    from .run import sweep
    spec_path = Path(spec_path)
    spec = tomllib.loads(spec_path.read_text(encoding="utf-8"))
    if "factory" not in spec:
        print(f"{spec_path}: needs factory = \"module:function\"", file=sys.stderr)
        return 2
    for d in spec.get("path", ["."]):
        p = str((spec_path.parent / d).resolve())
        if p not in sys.path:
            sys.path.insert(0, p)
    # (local-cluster workers start with spawn and inherit this sys.path)
    frame = sweep(spec["factory"], params=spec.get("params"),
                  machine_overrides=spec.get("machine_overrides"), machine=spec.get("machine"),
                  engine=engine, workers=workers, out=output, resume=resume)
    metric = spec.get("metric", "total_cycles")
    ok = frame[frame["error"].isna()] if "error" in frame else frame
    cols = [c for c in frame.columns if c.startswith(("param.", "override."))] + [metric]
    print(f"{len(frame)} points, {len(frame) - len(ok)} failed; table in {output}")
    print(ok.sort_values(metric)[cols].head(top).to_string(index=False))
    return 0
