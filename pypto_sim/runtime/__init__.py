"""The host runtime: simulated HBM, device tensors, memcpy, the launch stream and sync."""
