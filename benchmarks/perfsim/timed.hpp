// The launch and wall-clock timer the Perf-Sim runs here share (topk.cpp, conv.cpp).
#pragma once
#include <pto/costmodel/perf_sim/launch.hpp>
#include <chrono>
#include <cstdio>

#define TIMED(name)                                                                                      \
    do {                                                                                                 \
        auto t0 = std::chrono::steady_clock::now();                                                      \
        LAUNCH_KERNEL(name, , (1, nullptr, nullptr));                                                    \
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();         \
        std::printf("WALL %s blocks=1 %.3f s\n", #name, s);                                              \
    } while (0)
