#!/usr/bin/env bash
# Builds pto-isa's Perf-Sim (pipeline-level cost simulation, no values) at commit ecb6c303, the last
# whose __COSTMODEL build compiles, with topk.cpp and conv.cpp here (the published topk and conv2d_forward
# kernels, one core each), and runs them. Needs a git dir of hw-native-sys/pto-isa (the search tool's fetch gives
# one) and Debian's clang-16, libgtest-dev, cmake, ninja-build. No CANN. The GEMM and flash attention
# figures come from ../shared/tools/ptoisa-perfsim, the same recipe.
# Usage: PTOISA_GIT=<git dir> WORK=<scratch dir> benchmarks/perfsim/build.sh [gtest filter]
set -euo pipefail
: "${PTOISA_GIT:?set PTOISA_GIT to a git dir of hw-native-sys/pto-isa}" "${WORK:?set WORK to a scratch folder}"
here=$(cd "$(dirname "$0")" && pwd)
command -v clang++-16 >/dev/null || { apt-get update && apt-get install -y clang-16 libgtest-dev cmake ninja-build; }
src="$WORK/pto-isa-ecb6c303"
t="$src/tests/costmodel/perf_sim_st/testcase"
if [ ! -d "$src" ]; then
  mkdir -p "$src" && git --git-dir="$PTOISA_GIT" archive ecb6c303 | tar -x -C "$src"
  (cd "$src" && python3 include/pto/costmodel/a2a3/formula_costmodel/gen_formula_params_header.py \
             && python3 include/pto/costmodel/a5/formula_costmodel/gen_formula_params_header.py)
fi
if [ ! -d "$t/more_perf_sim" ]; then
  mkdir -p "$t/more_perf_sim"
  sed -i 's/^    fa_perf_sim$/    fa_perf_sim\n    more_perf_sim/' "$t/CMakeLists.txt"
fi
cp "$here"/*.cpp "$here"/*.hpp "$here/CMakeLists.txt" "$t/more_perf_sim/"
b="$src/tests/costmodel/perf_sim_st/build"
cmake -S "$src/tests/costmodel/perf_sim_st" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_C_COMPILER=clang-16 >/dev/null
cmake --build "$b" --target more_perf_sim_topk more_perf_sim_conv -j2
mkdir -p "$WORK/runs" && cd "$WORK/runs"
for k in topk conv; do "$b/bin/more_perf_sim_$k" --gtest_filter="${1:-MorePerfSim.*}"; done
echo "pipeline summaries: $WORK/runs/perf_sim_output/"
