// pto-isa's Perf-Sim (commit ecb6c303) on the published topk and conv2d_forward kernels, one core each
// (the per-core work of the published multi-core launch): the figures benchmarks/published.py puts
// beside pypto_sim's. Built by build.sh here; the GEMM and flash attention figures come from
// ../shared/tools/ptoisa-perfsim (the same build, the same one-core launch).
// topk:   kernels/manual/a2a3/topk/topk_kernel.cpp, launchTopk's template arguments with gShape3 =
//         gWholeShape3 = rows (the README's 4800 / 3456 / 2304; float, topk 1000; half, topk 1008),
//         blockDim 48: a core takes rows / 48 rows.
// conv2d: kernels/manual/a2a3/conv2d_forward/conv2d_forward_kernel.cpp, launchConv2dForward's
//         template arguments at the README's five shapes X = [4, C1, H, W, 16], N: m = 4 H W,
//         k = 144 C1, n = N, singleCoreM = m / 4, singleCoreN = n / 6, singleCoreK = k, blockDim 24.
#include <pto/pto-inst.hpp>
#include <pto/common/constants.hpp>
#include <pto/costmodel/perf_sim/launch.hpp>
#include <gtest/gtest.h>
#include "timed.hpp"

#include "conv2d_forward_kernel.cpp"

using namespace pto;

template <uint32_t C1, uint32_t H, uint32_t W, uint32_t N>
void conv_shape()
{
    constexpr uint32_t m = 4 * H * W, k = C1 * 9 * 16;
    Conv2dForward<uint16_t, 24, m, k, N, m / 4, k, N / 6, 128, 48, 256, 1, 3, 3, 1, 4, C1, H, W, 16, 3, 3, H, W>(
        nullptr, nullptr, nullptr);
}
void runConv_8() { conv_shape<8, 8, 48, 1536>(); }
void runConv_16() { conv_shape<16, 12, 64, 3072>(); }
void runConv_24() { conv_shape<24, 12, 96, 4608>(); }
void runConv_32() { conv_shape<32, 16, 96, 6144>(); }
void runConv_40() { conv_shape<40, 15, 128, 7680>(); }

TEST(MorePerfSim, Conv8) { TIMED(runConv_8); }
TEST(MorePerfSim, Conv16) { TIMED(runConv_16); }
TEST(MorePerfSim, Conv24) { TIMED(runConv_24); }
TEST(MorePerfSim, Conv32) { TIMED(runConv_32); }
TEST(MorePerfSim, Conv40) { TIMED(runConv_40); }
