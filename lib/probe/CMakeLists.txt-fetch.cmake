# SPDX-License-Identifier: LGPL-2.1-or-later
# fdr_fetch_objs: the fetch programs of dynamic probes (fetch.h), libc only.
# The executor runs inside traced processes (the probe agent), the checker on
# both sides; libfdr-ctl links these objects to compile and check programs.
# Included from lib/probe/CMakeLists.txt (before anything there can return).
add_library(fdr_fetch_objs OBJECT ${CMAKE_CURRENT_LIST_DIR}/fetch.c)
target_include_directories(fdr_fetch_objs PUBLIC ${CMAKE_CURRENT_LIST_DIR}/..
  ${CMAKE_CURRENT_LIST_DIR}/../../include)
set_target_properties(fdr_fetch_objs PROPERTIES POSITION_INDEPENDENT_CODE ON)
# its run path is part of a jump probe's hit: no vector register (fetch.c)
if(FDR_HIT_NOVEC)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/fetch.c PROPERTIES COMPILE_OPTIONS
    "${FDR_HIT_FLAGS}")
endif()
