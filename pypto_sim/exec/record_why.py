"""How an AI-core tile instruction's ``why`` record field packs what its ``cause`` does not say
(timing/records.py reads it with why_fields / why_hbm_read_bytes): the scalar unit's issue cause
(a CAUSE index < 16) + WHY_MISSED x the load's L2 miss (0 / 1) + WHY_SHARED x its wait for the
shared L2/HBM links (cycles, < 2**32) + WHY_HBM x the bytes it read from HBM. Written once here:
timing/records.py packs with these, and exec/lane.py puts them into the compiled engine."""
WHY_MISSED = 16
WHY_SHARED = 32
WHY_HBM = 1 << 37
