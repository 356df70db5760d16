# SPDX-License-Identifier: LGPL-2.1-or-later
# fdr-filter-bench: the writer's cost of an event filter (filter_cost_ns).
# include()d from bench/CMakeLists.txt; needs the fdr_filter_objs target
# (lib/common). Run: build/bench/fdr-filter-bench [N]
add_executable(fdr-filter-bench ${CMAKE_CURRENT_LIST_DIR}/filter-bench.c)
if(FDR_BENCH_FLAGS)
  target_compile_options(fdr-filter-bench PRIVATE ${FDR_BENCH_FLAGS})
endif()
target_link_libraries(fdr-filter-bench PRIVATE fdr_filter_objs)
