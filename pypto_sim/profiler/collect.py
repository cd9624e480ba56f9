"""Collect the Profile of every launch that runs while a collector is active.

``pypto-sim profile SCRIPT`` runs the script inside ``collect_profiles()``; the device reports
each launch it runs (``pto.launch`` + sync, ``pto.profile``) with ``report(profile)``. With no
collector active, reporting costs one truth test.

    with collect_profiles() as profiles:
        run_my_program()
    for prof in profiles: print(prof.report())
"""
from __future__ import annotations

import contextlib

_ACTIVE: list = []      # the lists of the collectors now active (innermost last)


@contextlib.contextmanager
def collect_profiles():
    """Yield a list that receives the Profile of every launch run inside the ``with``."""
    profiles: list = []
    _ACTIVE.append(profiles)
    try:
        yield profiles
    finally:
        _ACTIVE.remove(profiles)


def collecting() -> bool:
    """True inside collect_profiles(): every launch then keeps its timeline."""
    return bool(_ACTIVE)


def report(profile) -> None:
    """Called by the device after each launch has run."""
    if _ACTIVE:
        for profiles in _ACTIVE:
            profiles.append(profile)
