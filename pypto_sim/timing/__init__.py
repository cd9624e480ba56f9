"""The timing side: machine descriptions (latency tables) and the SimPy model of the NPU."""
