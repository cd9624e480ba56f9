"""The ``pypto-sim`` command line (also ``python -m pypto_sim``).

  pypto-sim run SCRIPT [ARGS...]   run a Python program that uses pypto_sim
  pypto-sim isa                    list the instruction set
  pypto-sim machines               list the shipped machine tables
  pypto-sim machine NAME|PATH      show a machine table with the source of every number
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


def _main(argv) -> int:
    parser = argparse.ArgumentParser(prog="pypto-sim", description="PTO kernels on a simulated NPU")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a Python script that uses pypto_sim")
    run.add_argument("script")
    run.add_argument("args", nargs=argparse.REMAINDER)
    sub.add_parser("isa", help="list the instruction set")
    sub.add_parser("machines", help="list the shipped machine tables")
    show = sub.add_parser("machine", help="show a machine table")
    show.add_argument("name")
    ns = parser.parse_args(argv)

    if ns.command == "run":
        sys.argv = [ns.script] + ns.args
        runpy.run_path(ns.script, run_name="__main__")
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
        print(resolve_machine(ns.name).describe())
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
