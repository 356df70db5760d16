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
  # jump-optimised probes (lib/probe/jump.c): every target, refusals, registers,
  # vector registers, the switch, a thread inside the window, live optimisation
  add_executable(test-probe-jump unit/test-probe-jump.c unit/probe-targets.S)
  target_include_directories(test-probe-jump PRIVATE ${CRITERION_INCLUDE_DIRS})
  target_compile_options(test-probe-jump PRIVATE ${CRITERION_CFLAGS_OTHER})
  target_link_libraries(test-probe-jump PRIVATE fdr-probe ${CRITERION_LINK_LIBRARIES}
                        Threads::Threads)
  foreach(variant "default;" "mremap;FDR_PROBE_PATCH=mremap")
    list(GET variant 0 vname)
    list(GET variant 1 venv)
    set(tname unit/test-probe-jump)
    if(NOT vname STREQUAL "default")
      set(tname unit/test-probe-jump-${vname})
    endif()
    add_test(NAME ${tname} COMMAND test-probe-jump --jobs=2 --short-filename)
    set_tests_properties(${tname} PROPERTIES
      LABELS unit
      TIMEOUT 300
      ENVIRONMENT "${venv};TMPDIR=${CMAKE_CURRENT_BINARY_DIR};${FDR_TEST_SAN_ENV}")
  endforeach()
  # a jump probe's hit touches no vector register: the machine code of everything
  # it can reach (docs/design/probes.md, "A hit without the vector state"). Only
  # where the build promises it (FDR_HIT_NOVEC: not the sanitizer builds).
  find_program(FDR_PYTHON3 python3)
  find_program(FDR_OBJDUMP objdump)
  if(FDR_HIT_NOVEC AND FDR_PYTHON3 AND FDR_OBJDUMP)
    add_test(NAME unit/check-hit-path
      COMMAND ${FDR_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/unit/check-hit-path.py
              $<TARGET_FILE:fdr-probe> $<TARGET_FILE:fdr>)
    set_tests_properties(unit/check-hit-path PROPERTIES LABELS unit TIMEOUT 60)
  endif()
  # return probes: normal returns, recursion, longjmp, thread exit, signals, unwinding
  add_executable(test-probe-ret unit/test-probe-ret.c)
  target_include_directories(test-probe-ret PRIVATE ${CRITERION_INCLUDE_DIRS})
  target_compile_options(test-probe-ret PRIVATE ${CRITERION_CFLAGS_OTHER})
  # -fexceptions: pthread_cleanup_push() and cleanup attributes run during pthread_exit()'s
  # forced unwind, which must pass the trampoline (thread_exit_pending)
  target_compile_options(test-probe-ret PRIVATE -fexceptions)
  target_link_libraries(test-probe-ret PRIVATE fdr-probe ${CRITERION_LINK_LIBRARIES}
                        Threads::Threads)
  add_test(NAME unit/test-probe-ret COMMAND test-probe-ret --jobs=2 --short-filename)
  set_tests_properties(unit/test-probe-ret PROPERTIES
    LABELS unit
    TIMEOUT 120
    ENVIRONMENT "TMPDIR=${CMAKE_CURRENT_BINARY_DIR};${FDR_TEST_SAN_ENV}")
  # C++ exceptions and forced unwinds through pending returns: built where a C++
  # compiler is found (the library itself is C). A plain program, label stress too:
  # the TSan build runs it.
  include(CheckLanguage)
  check_language(CXX)
  if(CMAKE_CXX_COMPILER)
    enable_language(CXX)
    add_executable(test-probe-ret-cxx unit/test-probe-ret-cxx.cc)
    target_compile_options(test-probe-ret-cxx PRIVATE -Wall -Wextra
                           $<$<BOOL:${FDR_WERROR}>:-Werror>)
    target_link_libraries(test-probe-ret-cxx PRIVATE fdr-probe Threads::Threads)
    add_test(NAME unit/test-probe-ret-cxx COMMAND test-probe-ret-cxx)
    set_tests_properties(unit/test-probe-ret-cxx PROPERTIES
      LABELS "unit;stress"
      TIMEOUT 120
      ENVIRONMENT "${FDR_TEST_SAN_ENV}")
  else()
    message(STATUS "probe: no C++ compiler, test-probe-ret-cxx not built")
  endif()
  # a probe whose text was unmapped or replaced (dlclose): fdr_probe_forget()
  add_executable(test-probe-forget unit/test-probe-forget.c)
  target_include_directories(test-probe-forget PRIVATE ${CRITERION_INCLUDE_DIRS})
  target_compile_options(test-probe-forget PRIVATE ${CRITERION_CFLAGS_OTHER})
  target_link_libraries(test-probe-forget PRIVATE fdr-probe ${CRITERION_LINK_LIBRARIES})
  foreach(variant "default;" "mremap;FDR_PROBE_PATCH=mremap")
    list(GET variant 0 vname)
    list(GET variant 1 venv)
    set(tname unit/test-probe-forget)
    if(NOT vname STREQUAL "default")
      set(tname unit/test-probe-forget-${vname})
    endif()
    add_test(NAME ${tname} COMMAND test-probe-forget --jobs=2 --short-filename)
    set_tests_properties(${tname} PROPERTIES
      LABELS unit
      TIMEOUT 60
      ENVIRONMENT "${venv};TMPDIR=${CMAKE_CURRENT_BINARY_DIR};${FDR_TEST_SAN_ENV}")
  endforeach()
  # live patching, outside Criterion (label stress: the TSan build runs it too)
  add_executable(probe-live stress/probe-live.c unit/probe-targets.S)
  target_link_libraries(probe-live PRIVATE fdr-probe Threads::Threads)
  # 10,000 cycles on each path but mremap, the fallback for kernels that refuse
  # /proc/self/mem writes: 4000 there, where each write makes the 4 threads
  # fault the page in again (10,000 took 60 to 75 s beside other tests)
  foreach(variant "mem;FDR_PROBE_PATCH=mem;10000" "mremap;FDR_PROBE_PATCH=mremap;4000"
                  "xol;FDR_PROBE_XOL_ALL=1;10000")
    list(GET variant 0 vname)
    list(GET variant 1 venv)
    list(GET variant 2 vcycles)
    add_test(NAME stress/probe-live-${vname} COMMAND probe-live ${vcycles})
    set_tests_properties(stress/probe-live-${vname} PROPERTIES
      LABELS stress
      TIMEOUT 300
      ENVIRONMENT "${venv};${FDR_TEST_SAN_ENV}")
  endforeach()
  # the same with every probe jump-optimised, switched back to int3 and on again
  # every other cycle (about 0.1 s a cycle on a loaded 2-CPU machine: 2000 cycles).
  # Not under TSan: it defers asynchronous signals until a thread enters its
  # runtime, so the threads calling the probed functions never answer jump.c's
  # request in time and every probe stays int3 (docs/design/probes.md)
  add_test(NAME stress/probe-live-jump COMMAND probe-live 2000)
  set_tests_properties(stress/probe-live-jump PROPERTIES
    LABELS "stress;no-tsan"
    TIMEOUT 600
    ENVIRONMENT "PROBE_LIVE_JUMP=1;${FDR_TEST_SAN_ENV}")
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

# The probe agent (lib/probe/agent.c, libfdr's event.c): probes defined through
# the control side ('fdr append uprobe_events') armed in a program linked with
# libfdr and in one started with LD_PRELOAD=libfdr-probe.so; a shared library
# and a dlopen'ed one; fork. probe-count reads a probe's hits and misses.
if(TARGET fdr-probe AND TARGET fdr-ctl_static)
  add_executable(probe-count integration/probe-count.c)
  target_include_directories(probe-count PRIVATE ${PROJECT_SOURCE_DIR}/lib)
  target_link_libraries(probe-count PRIVATE fdr-ctl_static)
  add_library(probe-agent-lib SHARED integration/probe-agent-lib.c)
  target_compile_definitions(probe-agent-lib PRIVATE PA_LIB_FN=pa_lib_fn)
  target_compile_options(probe-agent-lib PRIVATE -O1)
  add_library(probe-agent-dl MODULE integration/probe-agent-lib.c)
  target_compile_definitions(probe-agent-dl PRIVATE PA_LIB_FN=pa_dl_fn)
  target_compile_options(probe-agent-dl PRIVATE -O1)
  add_library(probe-agent-dl2 MODULE integration/probe-agent-lib.c)
  target_compile_definitions(probe-agent-dl2 PRIVATE PA_LIB_FN=pa_dl_fn PA_LIB_NOP)
  target_compile_options(probe-agent-dl2 PRIVATE -O1)
  # PIE, -O1: the probed function's arguments are in %edi and %rsi at its entry
  add_executable(probe-agent-target integration/probe-agent-target.c)
  target_compile_definitions(probe-agent-target PRIVATE PA_WITH_FDR)
  target_compile_options(probe-agent-target PRIVATE -fPIE -O1)
  target_link_options(probe-agent-target PRIVATE -pie)
  target_link_libraries(probe-agent-target PRIVATE fdr probe-agent-lib ${CMAKE_DL_LIBS})
  # linked with libfdr, no static event: the agent from libfdr's constructor
  add_executable(probe-agent-target-noev integration/probe-agent-target.c)
  target_compile_definitions(probe-agent-target-noev PRIVATE PA_NO_EVENT)
  target_compile_options(probe-agent-target-noev PRIVATE -fPIE -O1)
  target_link_options(probe-agent-target-noev PRIVATE -pie)
  target_link_libraries(probe-agent-target-noev PRIVATE fdr probe-agent-lib ${CMAKE_DL_LIBS})
  add_executable(probe-agent-target-nofdr integration/probe-agent-target.c)
  target_compile_options(probe-agent-target-nofdr PRIVATE -fPIE -O1)
  target_link_options(probe-agent-target-nofdr PRIVATE -pie)
  target_link_libraries(probe-agent-target-nofdr PRIVATE probe-agent-lib ${CMAKE_DL_LIBS})
  set(probe_agent_cmd bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/probe-agent.sh
    $<TARGET_FILE:fdr-cli> $<TARGET_FILE:probe-count> $<TARGET_FILE:probe-agent-target>
    $<TARGET_FILE:probe-agent-target-nofdr> $<TARGET_FILE:fdr-probe>
    $<TARGET_FILE:probe-agent-lib> $<TARGET_FILE:probe-agent-dl>
    $<TARGET_FILE:probe-agent-target-noev> $<TARGET_FILE:probe-agent-dl2>)
  add_test(NAME integration/probe-agent COMMAND ${probe_agent_cmd})
  # label stress too: the TSan build runs it. There the fork child's agent thread
  # (libfdr starts it again in a child) needs die_after_fork=0; every target must
  # exit 0, so a sanitizer's report fails the case. Label clang: the clang build
  # of scripts/test.sh runs it (and attach), of the integration tests.
  set_tests_properties(integration/probe-agent PROPERTIES
    LABELS "integration;stress;clang"
    TIMEOUT 120
    ENVIRONMENT "TMPDIR=${CMAKE_CURRENT_BINARY_DIR};ASAN_OPTIONS=verify_asan_link_order=0;${FDR_TEST_SAN_ENV};TSAN_OPTIONS=die_after_fork=0:${FDR_TEST_TSAN_OPTIONS}")
  # the same with the agent reading /proc/self/maps as text, as on kernels
  # before 6.11 (no PROCMAP_QUERY)
  add_test(NAME integration/probe-agent-maps-text COMMAND ${probe_agent_cmd})
  set_tests_properties(integration/probe-agent-maps-text PROPERTIES
    LABELS integration
    TIMEOUT 120
    ENVIRONMENT "FDR_PROBE_MAPS=text;TMPDIR=${CMAKE_CURRENT_BINARY_DIR};ASAN_OPTIONS=verify_asan_link_order=0;${FDR_TEST_SAN_ENV};TSAN_OPTIONS=die_after_fork=0:${FDR_TEST_TSAN_OPTIONS}")
endif()

# README.md's "Dynamic probes" walk-through, its commands taken from README and
# run as written, in a fresh install (cmake --install into a private HOME)
if(TARGET fdr-probe)
  add_test(NAME integration/readme-probes
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/readme-probes.sh ${CMAKE_COMMAND}
      ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}/README.md)
  set_tests_properties(integration/readme-probes PROPERTIES
    LABELS integration
    TIMEOUT 120
    ENVIRONMENT "TMPDIR=${CMAKE_CURRENT_BINARY_DIR};ASAN_OPTIONS=verify_asan_link_order=0;${FDR_TEST_SAN_ENV}")
endif()

# fdr attach and fdr detach (cli/attach.c): a program that never linked fdr,
# attached, probed, detached and attached again while it checks its results;
# fdr killed at each point of its work and at random; a thread blocking SIGTRAP;
# a user without the right to ptrace (root only); a program linked with libfdr
# (left alone) and one with libfdr-probe preloaded (refused).
if(TARGET fdr-probe AND TARGET fdr-ctl_static AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  add_executable(attach-target integration/attach-target.c)
  target_compile_options(attach-target PRIVATE -fPIE -O1)
  target_link_options(attach-target PRIVATE -pie)
  target_link_libraries(attach-target PRIVATE Threads::Threads)
  add_test(NAME integration/attach
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/attach.sh $<TARGET_FILE:fdr-cli>
      $<TARGET_FILE:attach-target> $<TARGET_FILE:probe-count>
      $<TARGET_FILE:probe-agent-target> $<TARGET_FILE:fdr-probe>)
  set_tests_properties(integration/attach PROPERTIES
    LABELS "integration;clang"
    TIMEOUT 300
    ENVIRONMENT "TMPDIR=${CMAKE_CURRENT_BINARY_DIR};ASAN_OPTIONS=verify_asan_link_order=0;${FDR_TEST_SAN_ENV}")
endif()
