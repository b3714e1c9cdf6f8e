# Helpers shared by every ferry target, so that each library, test, benchmark
# and sample is declared the same way.

include(GNUInstallDirs)

# Warnings for ferry's own code. FERRY_WERROR (on in CI presets) turns them into
# errors. Third-party headers are included as SYSTEM by their imported targets.
# Under clang, -Wthread-safety checks the locking annotations
# (ferry/serializers/detail/thread_safety.hpp).
function(ferry_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    target_compile_options(${target} PRIVATE -Wthread-safety)
  endif()
  if(FERRY_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # GCC 12's flow-sensitive -Warray-bounds and -Wmaybe-uninitialized fire
      # inside CAF's and libstdc++'s templates once inlined at -O2/-O3 (e.g.
      # caf::data_processor over std::vector<std::byte>): false positives in
      # third-party code. They stay visible as warnings, not errors.
      target_compile_options(${target} PRIVATE -Wno-error=array-bounds
                                               -Wno-error=maybe-uninitialized)
    endif()
  endif()
endfunction()

# ferry_precompile(<target> <header>...)
#
# Precompiles the given third-party headers for <target> when FERRY_PCH is on
# (the default). Parsing CAF's and GoogleTest's headers takes several seconds
# per file; a target of many files parses them once. With FERRY_PCH=OFF every
# file compiles on its own includes alone.
function(ferry_precompile target)
  if(FERRY_PCH)
    target_precompile_headers(${target} PRIVATE ${ARGN})
  endif()
endfunction()

# ferry_add_library(<area> SOURCES ... [PUBLIC ...] [PRIVATE ...])
#
# Declares the library target ferry_<area> with the alias and export name
# ferry::<area>, public headers in <area>/include, and installs both.
function(ferry_add_library area)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  set(target ferry_${area})
  add_library(${target} ${ARG_SOURCES})
  add_library(ferry::${area} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${area}
                                             POSITION_INDEPENDENT_CODE ON)
  target_include_directories(
    ${target} PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
                     $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target} PUBLIC ${ARG_PUBLIC} PRIVATE ${ARG_PRIVATE})
  ferry_set_warnings(${target})
  install(TARGETS ${target} EXPORT ferryTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()

# ferry_generate_detail_headers(<area>)
#
# Writes ferry/<area>/detail/thread_safety.hpp (the annotated mutex and lock
# holders) and ferry/<area>/detail/error_render.hpp (how an error reads) from
# the templates in cmake/templates, in namespace ferry::<area>::detail, and
# adds them to ferry_<area>'s public headers. The serializers and the store
# do not know each other; each gets the same code from one source.
function(ferry_generate_detail_headers area)
  set(FERRY_AREA ${area})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/generated/include)
  foreach(name thread_safety error_render)
    configure_file(${PROJECT_SOURCE_DIR}/cmake/templates/${name}.hpp.in
                   ${out}/ferry/${area}/detail/${name}.hpp @ONLY)
  endforeach()
  target_include_directories(ferry_${area} PUBLIC $<BUILD_INTERFACE:${out}>)
  install(DIRECTORY ${out}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()

# ferry_label_discovered(<test list> <labels>)
#
# Gives every case of a gtest_discover_tests list (its TEST_LIST variable)
# all of `labels` when there are several: discovery passes PROPERTIES through
# a command line, where a list of labels would fall apart into words, so the
# labels come from a file ctest reads after the discovered cases.
function(ferry_label_discovered list labels)
  list(LENGTH labels count)
  if(count GREATER 1)
    set(file "${CMAKE_CURRENT_BINARY_DIR}/${list}_labels.cmake")
    file(WRITE "${file}"
         "if(${list})\n"
         "  set_tests_properties(\${${list}} PROPERTIES LABELS \"${labels}\")\n"
         "endif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${file}")
  endif()
endfunction()

# ferry_add_test_binary(<name> SOURCES ... LIBS ... [LABELS ...] [TIMEOUT s]
#                       [RUN_SERIAL] [TIMING_TESTS <suite.case>...])
#
# One GoogleTest binary; every TEST becomes its own ctest case carrying LABELS.
# RUN_SERIAL keeps its cases from running beside any other test (memory).
# TIMING_TESTS names cases whose outcome can depend on timing under load: they
# carry the label `timing` in place of `unit` (LABELS' others stay).
function(ferry_add_test_binary name)
  cmake_parse_arguments(ARG "RUN_SERIAL" "TIMEOUT"
                        "SOURCES;LIBS;LABELS;TIMING_TESTS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest
                                        GTest::gtest_main)
  ferry_set_warnings(${name})
  list(LENGTH ARG_SOURCES source_count)
  if(source_count GREATER 1)
    ferry_precompile(${name} <gtest/gtest.h> <caf/all.hpp>)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  set(serial FALSE)
  if(ARG_RUN_SERIAL)
    set(serial TRUE)
  endif()
  # TIMING_TESTS get a discovery of their own (gtest filters).
  set(all_labels ${ARG_LABELS})
  set(rest_filter)
  if(ARG_TIMING_TESTS)
    list(APPEND all_labels timing)
    set(timing_labels ${ARG_LABELS})
    list(REMOVE_ITEM timing_labels unit)
    list(APPEND timing_labels timing)
    list(JOIN ARG_TIMING_TESTS ":" timing_filter)
    set(rest_filter TEST_FILTER "-${timing_filter}")
  endif()
  # Aggregate targets per label, so CI can build just what a run needs
  # (e.g. the TSan stage builds ferry_tests_concurrency).
  foreach(label IN LISTS all_labels)
    if(NOT TARGET ferry_tests_${label})
      add_custom_target(ferry_tests_${label})
    endif()
    add_dependencies(ferry_tests_${label} ${name})
  endforeach()
  # Every case requires the fixture `ferry_shm`: the suite's check that no
  # test leaves an unused store in /dev/shm runs after all of them. The
  # cases get their first label here, all of them through
  # ferry_label_discovered.
  list(GET ARG_LABELS 0 first_label)
  gtest_discover_tests(
    ${name} DISCOVERY_TIMEOUT 60 ${rest_filter}
    PROPERTIES LABELS ${first_label} TIMEOUT ${ARG_TIMEOUT} RUN_SERIAL ${serial}
               FIXTURES_REQUIRED ferry_shm)
  ferry_label_discovered(${name}_TESTS "${ARG_LABELS}")
  if(ARG_TIMING_TESTS)
    # `timing` and what remains of LABELS without `unit`.
    list(GET timing_labels 0 first_timing_label)
    gtest_discover_tests(
      ${name} DISCOVERY_TIMEOUT 60 TEST_FILTER "${timing_filter}"
      TEST_LIST ${name}_timing_tests
      PROPERTIES LABELS ${first_timing_label} TIMEOUT ${ARG_TIMEOUT}
                 RUN_SERIAL ${serial} FIXTURES_REQUIRED ferry_shm)
    ferry_label_discovered(${name}_timing_tests "${timing_labels}")
  endif()
endfunction()
