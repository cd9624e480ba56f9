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

#include "topk_kernel.cpp"

using namespace pto;

template <typename T, int ROWS, int TOPK>
void topk_rows()
{
    Topk<T, 1, 1, 1, ROWS, 1024, 1, 1, 1, ROWS, 1280, TOPK, 48>(nullptr, nullptr, nullptr, nullptr);
}
void runTopk_4800() { topk_rows<float, 4800, 1000>(); }
void runTopk_3456() { topk_rows<float, 3456, 1000>(); }
void runTopk_2304() { topk_rows<float, 2304, 1000>(); }
void runTopk_4800_half() { topk_rows<uint16_t, 4800, 1008>(); }

TEST(MorePerfSim, Topk4800) { TIMED(runTopk_4800); }
TEST(MorePerfSim, Topk3456) { TIMED(runTopk_3456); }
TEST(MorePerfSim, Topk2304) { TIMED(runTopk_2304); }
TEST(MorePerfSim, Topk4800Half) { TIMED(runTopk_4800_half); }
