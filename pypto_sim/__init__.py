"""pypto_sim: write PTO-level NPU kernels in Python and run them, cycle by cycle, on a
simulated Ascend-style NPU.

``import pypto_sim as pto`` gives the public API of API.md; nothing else is exported here.
"""
from .dtypes import (bfloat16, bool_, float16, float32, float64, int8, int16, int32, int64, uint8,
                     uint16, uint32, float8_e4m3, float8_e5m2, hifloat8, float4_e2m1x2, float4_e1m2x2)
from .errors import (ArgumentError, CompileError, DeadlockError, KernelValueError, L1CapacityError, LaunchError,
                     NPUUnavailableError, OutOfBoundsError, ProfileError, PtoError, RaceError,
                     SimulationLimitError, SweepError, SyncCheckError, UninitializedReadError,
                     UseAfterFreeError)
from .frontend.builtins import BUILTINS as _BUILTINS
from .frontend.kernel import Kernel
from .frontend.pipeline import pipeline
from .frontend.warp_builtins import activemask, lanemask_lt
from .frontend.aicore_names import (DN, FRACTAL_Z, ND, NZ, Acc, Bias, ColMajor, Left, Mat, PIPE_ALL,
                                    PIPE_FIX, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_S, PIPE_V,
                                    Right, RowMajor, Scaling, Vec, cube, get_subblock_id, parallel_group, setfmatrix,
                                    tile_group, vector)

globals().update(_BUILTINS)

from ._version import __version__
from .settings import Settings, settings
from .runtime.api import Tensor, alloc_tensor, launch, memcpy_d2h, memcpy_h2d, profile, sync, to_device
from .runtime.memory import DeviceTensor
from .runtime.launcher import kernel
from .timing.machine import machine, use_machine
from .calibrate.npu import profile_on_npu
from .sweep import SweepCase, sweep
from .isa import load_isa as _load_isa
from . import comm          # pto.comm: pto-isa's communication instructions under pto-isa's names


def instructions():
    """The ISA table: one record per instruction (.name, .opcode, .pipe, .category, .doc, ...)."""
    return _load_isa().specs


# The public names (API.md), listed so linters and `from pypto_sim import *` see what is
# exported; the builtins (pto.load, pto.tload, ...) come from the ISA table.
__all__ = ["bfloat16", "bool_", "float16", "float32", "float64", "int8", "int16", "int32",
           "int64", "uint8", "uint16", "uint32", "float8_e4m3", "float8_e5m2", "hifloat8",
           "float4_e2m1x2", "float4_e1m2x2", "ArgumentError", "CompileError", "DeadlockError",
           "KernelValueError", "L1CapacityError", "LaunchError", "NPUUnavailableError", "OutOfBoundsError",
           "ProfileError", "PtoError", "RaceError", "SimulationLimitError", "SweepError",
           "SyncCheckError", "UninitializedReadError", "UseAfterFreeError", "Kernel", "pipeline",
           "activemask", "lanemask_lt", "Acc", "Bias", "ColMajor", "Left", "Mat", "PIPE_ALL",
           "PIPE_FIX", "PIPE_M", "PIPE_MTE1", "PIPE_MTE2", "PIPE_MTE3", "PIPE_S", "PIPE_V",
           "Right", "RowMajor", "Scaling", "Vec", "ND", "DN", "NZ", "FRACTAL_Z", "cube", "get_subblock_id",
           "setfmatrix", "tile_group", "vector", "parallel_group", "comm",
           "__version__", "Settings", "settings", "Tensor", "alloc_tensor", "launch",
           "memcpy_d2h", "memcpy_h2d", "profile", "sync", "to_device", "DeviceTensor", "kernel",
           "machine", "use_machine", "profile_on_npu", "SweepCase", "sweep", "instructions"]
__all__ += sorted(_BUILTINS)
