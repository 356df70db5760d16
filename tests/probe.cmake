# SPDX-License-Identifier: LGPL-2.1-or-later
# Included from tests/CMakeLists.txt (CRITERION_*, FDR_TEST_SAN_ENV come from there).
# libfdr-probe's engine (lib/probe), where it is built (x86-64 with Zydis). Three
# runs: /proc/self/mem patching, the mremap path, and every displaced instruction
# run out of line (fdr_reloc_emit(), as issue 16's trampolines run them).
if(TARGET fdr-probe)
  add_executable(test-probe-engine unit/test-probe-engine.c unit/probe-targets.S)
  target_include_directories(test-probe-engine PRIVATE ${CRITERION_INCLUDE_DIRS}
                             ${CMAKE_CURRENT_SOURCE_DIR}/harness)
  target_compile_options(test-probe-engine PRIVATE ${CRITERION_CFLAGS_OTHER})
  # fdr-probe first: its sigaction()/pthread_sigmask() interpose libc's
  target_link_libraries(test-probe-engine PRIVATE fdr-probe ${CRITERION_LINK_LIBRARIES}
                        Threads::Threads)
  foreach(variant "default;" "mremap;FDR_PROBE_PATCH=mremap" "xol;FDR_PROBE_XOL_ALL=1")
    list(GET variant 0 vname)
    list(GET variant 1 venv)
    set(tname unit/test-probe-engine)
    if(NOT vname STREQUAL "default")
      set(tname unit/test-probe-engine-${vname})
    endif()
    add_test(NAME ${tname} COMMAND test-probe-engine --jobs=2 --short-filename)
    set_tests_properties(${tname} PROPERTIES
      LABELS unit
      TIMEOUT 300
      ENVIRONMENT "${venv};TMPDIR=${CMAKE_CURRENT_BINARY_DIR};${FDR_TEST_SAN_ENV}")
  endforeach()
  # live patching, outside Criterion (label stress: the TSan build runs it too)
  add_executable(probe-live stress/probe-live.c unit/probe-targets.S)
  target_link_libraries(probe-live PRIVATE fdr-probe Threads::Threads)
  foreach(variant "mem;FDR_PROBE_PATCH=mem" "mremap;FDR_PROBE_PATCH=mremap"
                  "xol;FDR_PROBE_XOL_ALL=1")
    list(GET variant 0 vname)
    list(GET variant 1 venv)
    add_test(NAME stress/probe-live-${vname} COMMAND probe-live 10000)
    set_tests_properties(stress/probe-live-${vname} PROPERTIES
      LABELS stress
      TIMEOUT 300
      ENVIRONMENT "${venv};${FDR_TEST_SAN_ENV}")
  endforeach()
  # LD_PRELOADed into a program not linked with it: the interposition still works
  add_executable(probe-preload unit/probe-preload.c unit/probe-targets.S)
  target_include_directories(probe-preload PRIVATE ${PROJECT_SOURCE_DIR}/lib/probe)
  target_link_libraries(probe-preload PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  add_test(NAME unit/probe-preload COMMAND probe-preload)
  set_tests_properties(unit/probe-preload PROPERTIES
    LABELS unit
    TIMEOUT 60
    ENVIRONMENT "LD_PRELOAD=$<TARGET_FILE:fdr-probe>;ASAN_OPTIONS=verify_asan_link_order=0;${FDR_TEST_SAN_ENV}")
endif()
