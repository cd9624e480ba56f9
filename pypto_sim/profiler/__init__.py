"""Profiles: what a simulated launch did, turned into breakdowns, timelines and reports.

profile.py (the Profile), deps.py (who waited for whom), bubbles.py (idle gaps and causes),
aicore_bubbles.py (an AI-core kernel's bubbles per unit and PTO pipe, with their true causes),
hotspots.py (per source line, per core), export.py (CSVs), aicore_summary.py (Perf-Sim's
pipeline_summary of AI-core kernels), msprof.py (msprof's op_summary), roofline.py (the
kernel against the machine's roofs), tables.py (rows, CSV, pandas), trace.py (Chrome trace JSON,
streamed), tracks.py (the trace's tracks), rowtext.py (JSON rows rendered by numpy),
plot.py (matplotlib), collect.py (collect every launch's Profile, for the CLI).
"""
