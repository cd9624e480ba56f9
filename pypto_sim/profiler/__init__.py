"""Profiles: what a simulated launch did, turned into breakdowns, timelines and reports.

profile.py (the Profile), deps.py (who waited for whom), bubbles.py (idle gaps and causes),
hotspots.py (per source line, per core), export.py (CSVs), trace.py (Chrome trace JSON,
streamed), tracks.py (the trace's tracks), rowtext.py (JSON rows rendered by numpy),
plot.py (matplotlib), collect.py (collect every launch's Profile, for the CLI).
"""
