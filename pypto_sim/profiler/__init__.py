"""Profiles: what a simulated launch did, turned into breakdowns, timelines and reports."""
