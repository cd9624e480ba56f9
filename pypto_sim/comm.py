"""``pto.comm``: pto-isa's communication instructions under pto-isa's names, as kernel code
may call them (``pto::comm::TGATHER(...)`` is ``pto.comm.tgather(...)``): each is the builtin of
the same record (frontend/builtins.py comm_names: every record of isa/*_comm_*.toml), so
``pto.comm.tput is pto.tput`` and ``pto.comm.tgather is pto.comm_tgather`` (pto.tgather is the
tile instruction that gathers by index inside a tile); ``pto.comm.parallel_group`` is
``pto.parallel_group`` (comm::ParallelGroup). docs/aicore.md, "TPUT, TGET and the collectives", has the list.
"""
from .frontend.aicore_names import parallel_group
from .frontend.builtins import BUILTINS, COMM_BUILTINS

globals().update({name: BUILTINS[builtin] for name, builtin in COMM_BUILTINS.items()})

__all__ = sorted(COMM_BUILTINS) + ["parallel_group"]
