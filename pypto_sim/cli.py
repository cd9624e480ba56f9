"""The ``pypto-sim`` command line (also ``python -m pypto_sim``).

  pypto-sim run SCRIPT [ARGS...]          run a Python program that uses pypto_sim
  pypto-sim profile SCRIPT [OPTIONS] [-- ARGS...]
        run the script (with ARGS) and report every launch: cycle breakdown, bubbles, hotspots,
        core balance; OPTIONS: --kernel NAME, --launch I (which launch to export, default the
        last), --trace OUT.json, --csv DIR, --plot OUT.png, --time-unit cycle|us, --top N
  pypto-sim trace SCRIPT -o OUT.json [--kernel NAME] [--launch I] [-- ARGS...]
        run the script and write the Chrome trace of one launch
  pypto-sim isa                           list the instruction set
  pypto-sim machines                      list the shipped machine tables
  pypto-sim machine NAME|PATH             show a machine table with the source of every number
  pypto-sim machine diff A B              show the entries that differ between two tables
  pypto-sim microbench [--machine X] -o ROWS.csv [--only ADD,TLOAD] [--npu] [--kernels DIR]
        run the calibration microbenchmarks and write their rows (docs/calibration.md)
  pypto-sim calibrate ROWS.csv [--base X] -o NEW.toml [--label TEXT]
        fit a latency table to measured rows, starting from the base table
"""
from __future__ import annotations

import argparse
import runpy
import sys


def main(argv=None) -> int:
    """Entry point of the pypto-sim command."""
    try:
        return _main(argv)
    except BrokenPipeError:      # `pypto-sim isa | head`
        sys.stderr.close()
        return 0


def _parser():
    parser = argparse.ArgumentParser(prog="pypto-sim", description="PTO kernels on a simulated NPU")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a Python script that uses pypto_sim")
    run.add_argument("script")
    run.add_argument("args", nargs=argparse.REMAINDER)
    prof = sub.add_parser("profile", help="run a script and profile the kernels it launches")
    trace = sub.add_parser("trace", help="run a script and write the Chrome trace of a launch")
    for p in (prof, trace):
        p.add_argument("script", help="the Python script to run; its own arguments go after --")
        p.add_argument("--kernel", help="only launches of the kernel with this name")
        p.add_argument("--launch", type=int, default=-1,
                       help="which of the (matching) launches to export: 0 first, -1 last (default)")
        p.add_argument("--time-unit", choices=("cycle", "us"), default="cycle",
                       help="trace time: 1 us = 1 cycle (default) or real time at the clock")
    prof.add_argument("--trace", metavar="OUT.json", help="write a Chrome trace event JSON file")
    prof.add_argument("--csv", metavar="DIR", help="write instr_exe, code_exe, pipeline_summary and "
                      "bubbles CSVs into DIR")
    prof.add_argument("--plot", metavar="OUT.png", help="write a Gantt + utilisation plot (matplotlib)")
    prof.add_argument("--top", type=int, default=10, help="hotspot lines to show (default 10)")
    trace.add_argument("-o", "--output", required=True, metavar="OUT.json")
    sub.add_parser("isa", help="list the instruction set")
    sub.add_parser("machines", help="list the shipped machine tables")
    show = sub.add_parser("machine", help="show a machine table, or `machine diff A B`")
    show.add_argument("name", nargs="+", metavar="NAME", help="NAME|PATH, or: diff A B")
    bench = sub.add_parser("microbench", help="run the calibration microbenchmarks, write their rows")
    bench.add_argument("--machine", default=None, help="table name or path (default: ascend910b)")
    bench.add_argument("-o", "--output", required=True, metavar="ROWS.csv")
    bench.add_argument("--only", help="comma-separated instructions / table keys to measure")
    bench.add_argument("--npu", action="store_true", help="run on hardware via pto.profile_on_npu")
    bench.add_argument("--kernels", metavar="DIR", help="keep the generated kernel sources in DIR")
    cal = sub.add_parser("calibrate", help="fit a latency table to microbenchmark rows")
    cal.add_argument("rows", help="CSV of rows: benchmark,instruction,size,cycles[,machine,notes]")
    cal.add_argument("--base", default="ascend910b", help="table to start from (default ascend910b)")
    cal.add_argument("-o", "--output", required=True, metavar="NEW.toml")
    cal.add_argument("--label", help="names the measurements in the sources (default: the rows file)")
    sw = sub.add_parser("sweep", help="run a design-space sweep from a TOML spec (docs/sweeps.md)")
    sw.add_argument("spec", help="SPEC.toml: factory, [params], [machine_overrides], machine")
    sw.add_argument("-o", "--output", required=True, metavar="RESULTS.parquet")
    sw.add_argument("--engine", default=None, help="serial, or a scheduler address (default: a "
                                                   "local Dask cluster)")
    sw.add_argument("--workers", type=int, default=None, help="local cluster workers (default: cores)")
    sw.add_argument("--resume", action="store_true", help="skip the points already in the output")
    sw.add_argument("--top", type=int, default=5, help="how many of the best points to print")
    sw.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                    help="stop a point that runs longer (default: the spec's timeout, or 600)")
    sub.add_parser("warm", help="compile the numba executor into the on-disk cache (before a sweep)")
    return parser


def _main(argv) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    script_args = []
    if argv and argv[0] in ("profile", "trace") and "--" in argv:
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1:]
    ns = _parser().parse_args(argv)
    if ns.command in ("profile", "trace"):
        ns.args = script_args
    if ns.command == "run":
        sys.argv = [ns.script] + ns.args
        runpy.run_path(ns.script, run_name="__main__")
        return 0
    if ns.command in ("profile", "trace"):
        return _profile(ns)
    if ns.command == "sweep":
        from .sweep.spec import run_spec
        return run_spec(ns.spec, ns.output, ns.engine, ns.workers, ns.resume, ns.top, ns.timeout)
    if ns.command == "warm":
        import time
        from .exec.lane import cache_dir, executor
        start = time.perf_counter()
        executor()
        print(f"numba executor ready in {time.perf_counter() - start:.1f} s (cache: {cache_dir()})")
        return 0
    if ns.command == "isa":
        from .isa import load_isa
        isa = load_isa()
        print(f"PTO ISA {isa.version}: {len(isa.specs)} instructions")
        for s in isa.specs:
            emitted = f"pto.{s.builtin}{s.signature}" if s.builtin else s.syntax
            print(f"  0x{s.opcode:02X} {s.name:14s} {s.category:12s} {s.pipe:7s} {emitted:34s} {s.doc}")
        return 0
    if ns.command == "machines":
        from .timing.machine import machine_names, resolve_machine
        for name in machine_names():
            print(f"{name:16s} {resolve_machine(name).description}")
        return 0
    if ns.command == "machine":
        from .timing.machine import resolve_machine
        if ns.name[0] == "diff":
            if len(ns.name) != 3:
                print("usage: pypto-sim machine diff A B", file=sys.stderr)
                return 2
            print(machine_diff(resolve_machine(ns.name[1]), resolve_machine(ns.name[2])))
            return 0
        if len(ns.name) != 1:
            print("usage: pypto-sim machine NAME|PATH  or  pypto-sim machine diff A B", file=sys.stderr)
            return 2
        print(resolve_machine(ns.name[0]).describe())
        return 0
    if ns.command == "microbench":
        return _microbench(ns)
    if ns.command == "calibrate":
        return _calibrate(ns)
    return 2


def _microbench(ns) -> int:
    """Run the microbenchmarks on a machine (or the NPU) and write their rows as CSV."""
    import time
    from .calibrate import run_microbenchmarks, write_rows
    from .timing.machine import DEFAULT_MACHINE, resolve_machine
    m = resolve_machine(ns.machine or DEFAULT_MACHINE)
    only = [x.strip() for x in ns.only.split(",") if x.strip()] if ns.only else None
    start = time.perf_counter()
    rows = run_microbenchmarks(m, only=only, on_npu=ns.npu, keep_sources=ns.kernels)
    path = write_rows(rows, ns.output)
    kinds = len({(r.benchmark, r.instruction) for r in rows})
    print(f"pypto-sim: ran {kinds} microbenchmarks ({len(rows)} kernel runs) on "
          f"{'the NPU' if ns.npu else m.name} in {time.perf_counter() - start:.1f} s; wrote {path}")
    if ns.kernels:
        print(f"pypto-sim: kernel sources in {ns.kernels}")
    return 0


def _calibrate(ns) -> int:
    """Fit a table to rows and write it; print what changed against the base."""
    from pathlib import Path
    from .calibrate import fit, read_rows, write_table
    from .timing.machine import load_machine_from, resolve_machine
    base = resolve_machine(ns.base)
    fitted = fit(read_rows(ns.rows), base=base)
    path = write_table(fitted, base, ns.output, label=ns.label or Path(ns.rows).name)
    new = load_machine_from(path)
    print(f"pypto-sim: fitted {sum(len(v) for v in fitted.values())} values of {len(fitted)} entries "
          f"from {ns.rows}; {len(fitted.bounded)} only bounded by the rows")
    if fitted.unused:
        print(f"pypto-sim: warning: no formula uses the rows of {len(fitted.unused)} benchmark(s): "
              + ", ".join(f"{b} ({i})" for b, i in fitted.unused[:8]), file=sys.stderr)
    print(machine_diff(base, new))
    print(f"pypto-sim: wrote {path}; use it with pto.use_machine({str(path)!r})")
    return 0


def _profile(ns) -> int:
    """Run the script with every launch's Profile collected; report and export."""
    from .profiler.collect import collect_profiles
    sys.argv = [ns.script] + ns.args
    with collect_profiles() as profiles:
        try:
            runpy.run_path(ns.script, run_name="__main__")
        except SystemExit as stop:          # a script's own sys.exit(0) still gets its report
            if stop.code not in (None, 0):
                raise
    untimed = [p for p in profiles if not hasattr(p, "bubbles")]     # mode="functional" launches
    if untimed:
        print(f"pypto-sim {ns.command}: {len(untimed)} launch(es) ran in functional mode (values "
              "only, no cycles) and are not profiled", file=sys.stderr)
    chosen = [p for p in profiles if hasattr(p, "bubbles")
              and (ns.kernel is None or p.kernel_name == ns.kernel)]
    if not chosen:
        names = sorted({getattr(p, "kernel_name", "?") for p in profiles})
        print(f"pypto-sim {ns.command}: {ns.script} ran no launch"
              + (f" of kernel '{ns.kernel}' (it launched: {', '.join(names) or 'nothing'})"
                 if ns.kernel else ""), file=sys.stderr)
        return 1
    try:
        export = chosen[ns.launch]
    except IndexError:
        print(f"pypto-sim {ns.command}: --launch {ns.launch} but there are {len(chosen)} launches",
              file=sys.stderr)
        return 2
    which = f"launch {chosen.index(export)} of {len(chosen)}"
    if ns.command == "trace":
        path = export.save_trace(ns.output, time_unit=ns.time_unit)
        print(f"pypto-sim: wrote {path} ({export.kernel_name}, {which}, {export.total_cycles} cycles); "
              f"open it in https://ui.perfetto.dev or chrome://tracing")
        return 0
    for k, prof in enumerate(chosen):
        bar = "=" * 100
        print(f"{bar}\n[launch {k} of {len(chosen)}] {prof.report()}\n")
        print(prof.bubbles(), end="\n\n")
        print(prof.hotspots().top(ns.top), end="\n\n")
        print(prof.core_balance())
    if ns.trace:
        print(f"pypto-sim: wrote {export.save_trace(ns.trace, time_unit=ns.time_unit)} ({which})")
    if ns.csv:
        paths = export.export_csv(ns.csv)
        print(f"pypto-sim: wrote {', '.join(str(p) for p in paths.values())} ({which})")
    if ns.plot:
        print(f"pypto-sim: wrote {export.save_plot(ns.plot)} ({which})")
    return 0


def machine_diff(a, b) -> str:
    """The entries that differ between machines a and b (values; sources only where the value
    differs), then how many entries are the same."""
    rows, same = [], 0

    def compare(key, va, vb, sa="", sb=""):
        nonlocal same
        if va == vb:
            same += 1
        else:
            rows.append((key, va, vb, sa, sb))

    for key in sorted(set(a.values) | set(b.values)):
        compare(key, a.values.get(key, "-"), b.values.get(key, "-"), a.sources.get(key, ""),
                b.sources.get(key, ""))
    for pipe in sorted(set(a.pipes) | set(b.pipes)):
        pa, pb = a.pipes.get(pipe, {}), b.pipes.get(pipe, {})
        for field in sorted((set(pa) | set(pb)) - {"source"}):
            compare(f"pipe {pipe}.{field}", pa.get(field, "-"), pb.get(field, "-"),
                    pa.get("source", ""), pb.get("source", ""))
    for name in sorted(set(a.instructions) | set(b.instructions)):
        ta, tb = a.instructions.get(name), b.instructions.get(name)
        fa = {"latency": ta.latency, "issue_interval": ta.issue_interval, **ta.extra} if ta else {}
        fb = {"latency": tb.latency, "issue_interval": tb.issue_interval, **tb.extra} if tb else {}
        for field in sorted(set(fa) | set(fb)):
            compare(f"{name}.{field}", fa.get(field, "-"), fb.get(field, "-"),
                    ta.source if ta else "", tb.source if tb else "")
    fa = {r.name: r for r in getattr(a, "fusions", ())}
    fb = {r.name: r for r in getattr(b, "fusions", ())}
    for name in sorted(set(fa) | set(fb)):
        ra, rb = fa.get(name), fb.get(name)
        compare(f"fusion {name}.saving", ra.saving if ra else "-", rb.saving if rb else "-",
                ra.source if ra else "", rb.source if rb else "")
    va, vb = getattr(a, "vector_formulas", {}), getattr(b, "vector_formulas", {})
    for key in sorted(set(va) | set(vb), key=str):
        compare(f"formula {key[0]} {key[1]} cols={key[2]}", va.get(key, "-"), vb.get(key, "-"),
                a.formula_source if key in va else "", b.formula_source if key in vb else "")
    out = [f"machine diff: A = {a.name} ({a.path}), B = {b.name} ({b.path})",
           f"{len(rows)} entries differ, {same} are the same"]
    if rows:
        width = max(len(r[0]) for r in rows)
        out.append(f"  {'entry':{width}s} {'A':>14s} {'B':>14s}")
        for key, va, vb, sa, sb in rows:
            out.append(f"  {key:{width}s} {va!s:>14} {vb!s:>14}")
            if sa or sb:
                out.append(f"  {'':{width}s}   A: {_clip(sa)}")
                out.append(f"  {'':{width}s}   B: {_clip(sb)}")
    return "\n".join(out)


def _clip(text, width=110):
    return text if len(text) <= width else text[:width - 3] + "..."


if __name__ == "__main__":
    sys.exit(main())
