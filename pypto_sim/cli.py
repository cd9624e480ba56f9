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

A user error (a file that is not there, a machine that does not exist, a flag value out of
range, a pto.PtoError raised by the script under run/profile/trace or by a launch it queued
and never synchronized, run when it ends) is one line on stderr, ``pypto-sim: error: ...``,
and exit code 1 (2 for a command line argparse refuses); ``--debug``
(before or after the command's name) shows the traceback instead. Any other exception is a bug
and keeps its traceback; an exception of the script's own is shown as Python shows it.
"""
from __future__ import annotations

import argparse
import errno
import os
import runpy
import sys
import time
import traceback
from pathlib import Path

from .errors import CommandLineError, PtoError
from .calibrate import fit, read_rows, run_microbenchmarks, write_rows, write_table
from .exec.lane import cache_dir
from .runtime.cache import cache_report, prune_cache
from .runtime.teardown import discard_unsynced_launches, run_unsynced_launches
from .runtime.warm import warm
from .isa import load_isa
from .profiler.collect import collect_profiles
from .profiler.export import csv_folder
from .profiler.plot import plot_path
from .sweep.spec import run_spec
from .timing import peaks
from .timing.machine import DEFAULT_MACHINE, load_machine_from, machine_names, resolve_machine


def main(argv=None) -> int:
    """Entry point of the pypto-sim command: returns the exit code. User errors are one line
    on stderr (``--debug``: the traceback); see the module docstring."""
    argv = list(sys.argv[1:] if argv is None else argv)
    script_args = []
    command = next((a for a in argv if not a.startswith("-")), None)
    if command in ("profile", "trace") and "--" in argv:
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1:]
    ns = _parser().parse_args(argv)
    if ns.command in ("profile", "trace"):
        ns.args = script_args
    try:
        return _dispatch(ns)
    except BrokenPipeError:      # `pypto-sim isa | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        if ns.debug:
            raise
        print("pypto-sim: interrupted", file=sys.stderr)
        return 130
    except ScriptFailed as failed:
        return failed.report(ns.debug)
    except Exception as exc:
        message = None if ns.debug else user_error(exc)
        if message is None:
            raise
        print(f"pypto-sim: error: {message}", file=sys.stderr)
        return 1


def user_error(exc) -> str | None:
    """The one-line message of a user error (what is wrong and what to do), or None when exc
    is not one (a bug, shown with its traceback)."""
    if isinstance(exc, PtoError):
        return one_line(str(exc))
    if isinstance(exc, OSError) and exc.filename is not None:
        what = {errno.ENOENT: "check the path", errno.EACCES: "check its permissions or choose "
                "another path", errno.EPERM: "check its permissions or choose another path",
                errno.EISDIR: "give a file, not a directory", errno.ENOTDIR: "check the path",
                errno.EROFS: "choose a writable place", errno.ENOSPC: "free some space"}
        todo = what.get(exc.errno, "check the path")
        return f"{exc.filename}: {exc.strerror or exc}; {todo}"
    return None


def one_line(text: str) -> str:
    """A multi-line error message (message, source line, hint) as one line."""
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


class _Parser(argparse.ArgumentParser):
    """argparse with its refusals on one line: ``pypto-sim: error: ...`` and exit code 2."""

    def error(self, message):
        self.exit(2, f"pypto-sim: error: {message} (see `{self.prog} --help`)\n")


class ScriptFailed(Exception):
    """The script run by run/profile/trace raised ``error``."""

    def __init__(self, script, error):
        super().__init__(script)
        self.script = script
        self.error = error

    def report(self, debug) -> int:
        """Print the failure, return the exit code: a PtoError on one line with the script's
        line that led to it; anything else as Python shows it, from the script's frame on."""
        exc = self.error
        tb = exc.__traceback__
        script = os.path.abspath(self.script)
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != script:
            tb = tb.tb_next
        if isinstance(exc, PtoError) and not debug:
            last = None
            while tb is not None:        # the script's own line nearest the error
                if os.path.abspath(tb.tb_frame.f_code.co_filename) == script:
                    last = tb.tb_lineno
                tb = tb.tb_next
            where = f" (from {self.script}:{last})" if last is not None else ""
            print(f"pypto-sim: error: {one_line(str(exc))}{where}", file=sys.stderr)
            return 1
        traceback.print_exception(type(exc), exc, tb if (tb is not None and not debug) else exc.__traceback__)
        return 1


def _run_script(ns):
    """Run ns.script as __main__ with ns.args as its argv; its exceptions become ScriptFailed
    (SystemExit passes: the script's own exit code). When the script ends (or exits with 0),
    the launches it queued and never synchronized run (runtime/teardown.py), so that their
    error is the command's (an UnsyncedLaunchError: one line, exit code 1) and profile/trace see
    them; a script that failed has them dropped, unrun, and keeps its own error."""
    if not Path(ns.script).is_file():
        raise CommandLineError(f"no script {ns.script!r} (looked in {Path(ns.script).resolve().parent})",
                               hint="give the path of a Python file")
    sys.argv = [ns.script] + ns.args
    # as `python script.py` does: the script's folder comes first on the import path, so it
    # imports its neighbours (examples/softmax.py imports row_kernels)
    folder = str(Path(ns.script).resolve().parent)
    sys.path.insert(0, folder)
    try:
        try:
            # its globals are held until its queue has run: dropped, they would free the tensors
            # of the launches still queued (a UseAfterFreeError, as a `del` would)
            script_globals = runpy.run_path(ns.script, run_name="__main__")
        except SystemExit as stop:
            if stop.code in (None, 0):
                run_unsynced_launches()
            raise
        except Exception as exc:
            raise ScriptFailed(ns.script, exc) from exc
        run_unsynced_launches()
        del script_globals
    except BaseException:
        discard_unsynced_launches()      # whatever the script left queued dies with it
        raise
    finally:
        if folder in sys.path:
            sys.path.remove(folder)


def _check_output(path, flag, reads=()):
    """Refuse an output path that is a directory, or whose folder is missing or not writable,
    or that is a file the command reads (``reads``: its script, its rows), before any work is
    done."""
    for source in reads:
        if source is not None and Path(source).exists() and Path(path).exists() and \
                Path(path).resolve() == Path(source).resolve():
            raise CommandLineError(f"{flag} {path}: that is the file this command reads; writing it would "
                                   "replace it", hint="give another path for the output")
    if Path(path).is_dir():
        raise CommandLineError(f"{flag} {path}: {path} is a directory, not a file",
                               hint=f"give the file to write, e.g. {Path(path) / 'out'}")
    folder = Path(path).parent
    if not folder.is_dir():
        raise CommandLineError(f"{flag} {path}: the folder {folder} does not exist",
                               hint="create it first or choose another path")
    if not os.access(folder, os.W_OK):
        raise CommandLineError(f"{flag} {path}: the folder {folder} is not writable",
                               hint="choose a writable place")


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be 1 or more")
    return value


def _parser():
    parser = _Parser(prog="pypto-sim", description="PTO kernels on a simulated NPU")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error instead of one line")
    debug = _Parser(add_help=False)      # --debug after the command's name, too
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the traceback of an error instead of one line")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def add(name, **kw):
        return sub.add_parser(name, parents=[debug], **kw)

    run = add("run", help="run a Python script that uses pypto_sim")
    run.add_argument("script")
    run.add_argument("args", nargs=argparse.REMAINDER)
    prof = add("profile", help="run a script and profile the kernels it launches")
    trace = add("trace", help="run a script and write the Chrome trace of a launch")
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
    prof.add_argument("--top", type=_positive_int, default=10, help="hotspot lines to show (default 10)")
    trace.add_argument("-o", "--output", required=True, metavar="OUT.json")
    add("isa", help="list the instruction set")
    add("machines", help="list the shipped machine tables")
    show = add("machine", help="show a machine table, or `machine diff A B`")
    show.add_argument("name", nargs="+", metavar="NAME", help="NAME|PATH, or: diff A B")
    bench = add("microbench", help="run the calibration microbenchmarks, write their rows")
    bench.add_argument("--machine", default=None, help="table name or path (default: ascend910b)")
    bench.add_argument("-o", "--output", required=True, metavar="ROWS.csv")
    bench.add_argument("--only", help="comma-separated instructions / table keys to measure")
    bench.add_argument("--npu", action="store_true", help="run on hardware via pto.profile_on_npu")
    bench.add_argument("--kernels", metavar="DIR", help="keep the generated kernel sources in DIR")
    cal = add("calibrate", help="fit a latency table to microbenchmark rows")
    cal.add_argument("rows", help="CSV of rows: benchmark,instruction,size,cycles[,machine,notes]")
    cal.add_argument("--base", default="ascend910b", help="table to start from (default ascend910b)")
    cal.add_argument("-o", "--output", required=True, metavar="NEW.toml")
    cal.add_argument("--label", help="names the measurements in the sources (default: the rows file)")
    sw = add("sweep", help="run a design-space sweep from a TOML spec (docs/sweeps.md)")
    sw.add_argument("spec", help="SPEC.toml: factory, [params], [machine_overrides], machine")
    sw.add_argument("-o", "--output", required=True, metavar="RESULTS.parquet")
    sw.add_argument("--engine", default=None, help="serial, or a scheduler address (default: a "
                                                   "local Dask cluster)")
    sw.add_argument("--workers", type=_positive_int, default=None, help="local cluster workers (default: cores)")
    sw.add_argument("--resume", action="store_true", help="skip the points already in the output")
    sw.add_argument("--top", type=_positive_int, default=5, help="how many of the best points to print")
    sw.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                    help="stop a point that runs longer (default: the spec's timeout, or 600)")
    add("warm", help="compile the numba executor into the on-disk cache (before a sweep)")
    cache = add("cache", help="show the compiled executor's on-disk cache: current and stale entries")
    cache.add_argument("--prune", action="store_true",
                       help="remove the stale entries (other versions' code); run it when no other "
                            "pypto_sim process uses the cache")
    return parser


def _dispatch(ns) -> int:
    """Run the parsed command; returns the exit code."""
    if ns.command == "run":
        _run_script(ns)
        return 0
    if ns.command in ("profile", "trace"):
        return _profile(ns)
    if ns.command == "sweep":
        return run_spec(ns.spec, ns.output, ns.engine, ns.workers, ns.resume, ns.top, ns.timeout)
    if ns.command == "warm":
        start = time.perf_counter()
        warm()
        print(f"numba executor compiled in {time.perf_counter() - start:.1f} s (cache: {cache_dir()})")
        return 0
    if ns.command == "cache":
        report = prune_cache() if ns.prune else cache_report()
        print(report.describe())
        if ns.prune:
            print(f"removed {len(report.stale)} stale entries ({report.stale_bytes / (1 << 20):.1f} MiB)")
        return 0
    if ns.command == "isa":
        isa = load_isa()
        print(f"PTO ISA {isa.version}: {len(isa.specs)} instructions")
        for s in isa.specs:
            emitted = f"pto.{s.builtin}{s.signature}" if s.builtin else s.syntax
            print(f"  0x{s.opcode:02X} {s.name:14s} {s.category:12s} {s.pipe:7s} {emitted:34s} {s.doc}")
        return 0
    if ns.command == "machines":
        for name in machine_names():
            print(f"{name:16s} {resolve_machine(name).description}")
        return 0
    if ns.command == "machine":
        if ns.name[0] == "diff":
            if len(ns.name) != 3:
                raise CommandLineError(f"machine diff takes two tables, got {len(ns.name) - 1}",
                                       hint="pypto-sim machine diff A B (names or paths)")
            print(machine_diff(resolve_machine(ns.name[1]), resolve_machine(ns.name[2])))
            return 0
        if len(ns.name) != 1:
            raise CommandLineError(f"machine takes one table, got {len(ns.name)}: {' '.join(ns.name)}",
                                   hint="pypto-sim machine NAME|PATH, or pypto-sim machine diff A B")
        print(resolve_machine(ns.name[0]).describe())
        return 0
    if ns.command == "microbench":
        return _microbench(ns)
    if ns.command == "calibrate":
        return _calibrate(ns)
    return 2


def _microbench(ns) -> int:
    """Run the microbenchmarks on a machine (or the NPU) and write their rows as CSV."""
    _check_output(ns.output, "-o")
    m = resolve_machine(ns.machine or DEFAULT_MACHINE)
    only = [x.strip() for x in ns.only.split(",") if x.strip()] if ns.only is not None else None
    if only == []:
        raise CommandLineError(f"--only {ns.only!r} names no microbenchmark or instruction",
                               hint="leave --only out to run them all, or give names: --only ADD,TLOAD")
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
    _check_output(ns.output, "-o", reads=(ns.rows,))
    base = resolve_machine(ns.base)
    fitted = fit(read_rows(ns.rows), base=base)
    path = write_table(fitted, base, ns.output, label=ns.label or Path(ns.rows).name)
    new = load_machine_from(path)
    print(f"pypto-sim: fitted {sum(len(v) for v in fitted.values())} values of {len(fitted)} entries "
          f"from {ns.rows}; {len(fitted.bounded)} only bounded by the rows")
    if fitted.constrained:
        print(f"pypto-sim: {len(fitted.constrained)} entries came out up to a cycle below their least "
              "value (the rounding of the slopes they subtract) and were fitted at it: "
              + ", ".join(f"{name}.{fld} {derived} -> {taken}"
                          for (name, fld), (derived, taken) in fitted.constrained.items()), file=sys.stderr)
    if fitted.unused:
        print(f"pypto-sim: warning: no formula uses the rows of {len(fitted.unused)} benchmark(s): "
              + ", ".join(f"{b} ({i})" for b, i in fitted.unused[:8]), file=sys.stderr)
    beaten = peaks.violations(new)
    if beaten:
        print(f"pypto-sim: warning: {len(beaten)} fitted cost(s) beat the vendor's parallelism ([peaks]); "
              "the rows may be too short or noisy: " + "; ".join(beaten[:8]),
              file=sys.stderr)
    print(machine_diff(base, new))
    print(f"pypto-sim: wrote {path}; use it with pto.use_machine({str(path)!r})")
    return 0


def _profile(ns) -> int:
    """Run the script with every launch's Profile collected; report and export."""
    for flag, path in (("-o", getattr(ns, "output", None)), ("--trace", getattr(ns, "trace", None)),
                       ("--plot", getattr(ns, "plot", None))):
        if path is not None:
            _check_output(path, flag, reads=(ns.script,))
    if getattr(ns, "plot", None):
        plot_path(ns.plot)                  # a format matplotlib cannot write, before the run
    if getattr(ns, "csv", None):
        csv_folder(ns.csv)                  # a file where the folder should be, before the run
    with collect_profiles() as profiles:
        try:
            _run_script(ns)
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
        raise CommandLineError(f"{ns.script} ran no timed launch"
                               + (f" of kernel '{ns.kernel}' (it launched: {', '.join(names) or 'nothing'})"
                                  if ns.kernel else ""),
                               hint="--kernel names one of the kernels it launches" if ns.kernel else
                               "profile a script that calls pto.launch or pto.profile in timing mode")
    if not -len(chosen) <= ns.launch < len(chosen):
        raise CommandLineError(f"--launch {ns.launch} but there are {len(chosen)} launches",
                               hint=f"give 0 to {len(chosen) - 1}, or -1 for the last")
    export = chosen[ns.launch]
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
