"""What a sweep point's factory returns."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SweepCase:
    """One simulation of a sweep: ``kernel`` launched on ``grid`` x ``block`` with ``args``
    (device tensors the factory allocated and filled, and scalars). ``check``, if given, is
    called after the launch with ``outputs`` (name -> host array of each tensor in
    ``outputs``) and returns True (values right), False, or raises; its verdict is the row's
    ``check`` column."""

    kernel: object
    grid: tuple
    block: tuple
    args: tuple
    outputs: dict = field(default_factory=dict)
    check: object = None
    mode: str = "timing"
