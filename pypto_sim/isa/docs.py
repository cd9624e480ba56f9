"""docs/isa.md, generated from the ISA table (``python -m pypto_sim.isa.docs > docs/isa.md``)."""
from __future__ import annotations

from .table import CATEGORIES, load_isa


def emitted_by(spec) -> str:
    """The "emitted by" cell: the builtin, its alias (the AI core's name for the same instruction,
    e.g. ``pto.tload`` for TLOAD), or the syntax that emits the instruction."""
    calls = [f"`pto.{name}{sig}`" for name, sig in ((spec.builtin, spec.signature),
                                                      (spec.alias, spec.alias_signature)) if name]
    return "; AI core: ".join(calls) if calls else spec.syntax


def render_markdown() -> str:
    """The ISA reference as Markdown, one table per category."""
    isa = load_isa()
    out = [f"# PTO instruction set (isa_version {isa.version})", "",
           "Generated from `isa/*.toml` by `python -m pypto_sim.isa.docs`; do not edit by hand.",
           f"{len(isa.specs)} instructions. Latencies and issue intervals are per machine: see "
           "`pto.machine().latency(name)` and `latency_tables/`.", ""]
    for category in CATEGORIES:
        specs = [s for s in isa.specs if s.category == category]
        if not specs:
            continue
        out += [f"## {category}", "", "| opcode | name | pipe | emitted by | operands | dtypes | semantics | description |",
                "|---|---|---|---|---|---|---|---|"]
        for s in specs:
            pipe = s.pipe + (f" ({s.uniform_pipe} if uniform)" if s.uniform_pipe else "")
            emitted = emitted_by(s)
            operands = ", ".join(f"{o.name}:{o.kind}" for o in s.operands) or "-"
            sem = "; ".join(f"{k}: `{e}`" for k, e in (("float", s.float_expr), ("int", s.int_expr)) if e) or "-"
            sem = sem.replace("|", "\\|")
            out.append(f"| 0x{s.opcode:02X} | {s.name} | {pipe} | {emitted} | {operands} | "
                       f"{', '.join(s.dtypes) or '-'} | {sem} | {s.doc.replace('|', '/')} |")
        out.append("")
    if isa.composites:
        out += ["## composite", "", "Builtins that lower to several instructions of the table (`[[composite]]` records: "
                "pto-isa's header-level operations); each costs what it expands to.", "",
                "| name | emitted by | expands to | pto-isa source | description |", "|---|---|---|---|---|"]
        for c in isa.composites:
            out.append(f"| {c.name} | `pto.{c.builtin}{c.signature}` | {', '.join(c.expands_to)} | {c.source} | "
                       f"{c.doc.replace('|', '/')} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(render_markdown(), end="")
