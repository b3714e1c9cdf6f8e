# Script mode (cmake -P): install, take the README's example out of the
# README (the cpp block after the line `<!-- readme-example: ... -->`),
# configure the consumer with it, build both programs, run both. The
# consumer is built with the same compiler flags as ferry (sanitizer builds
# need the sanitizer runtime at link time). The example must load CAF's core
# and neither CAF's middleman nor its OpenSSL module.
file(REMOVE_RECURSE ${SCRATCH_DIR})
set(prefix ${SCRATCH_DIR}/prefix)

file(READ ${README} readme)
string(FIND "${readme}" "<!-- readme-example:" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${README} has no line `<!-- readme-example: ... -->`")
endif()
string(SUBSTRING "${readme}" ${at} -1 readme)
string(FIND "${readme}" "```cpp\n" begin)
string(FIND "${readme}" "\n```\n" end)
if(begin EQUAL -1 OR end EQUAL -1 OR end LESS begin)
  message(FATAL_ERROR "no ```cpp block after the readme-example line")
endif()
math(EXPR begin "${begin} + 7")
math(EXPR length "${end} + 1 - ${begin}")
string(SUBSTRING "${readme}" ${begin} ${length} example)
set(example_file ${SCRATCH_DIR}/readme_example/main.cpp)
file(WRITE ${example_file} "${example}")

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok\n${out}")
endfunction()

run_step("install ferry" ${CMAKE_COMMAND} --install ${FERRY_BUILD_DIR}
         --prefix ${prefix})
run_step("configure consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR}
         -B ${SCRATCH_DIR}/build -G ${CMAKE_GENERATOR}
         -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
         -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}
         "-DCMAKE_CXX_FLAGS=${CONSUMER_CXX_FLAGS}"
         "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_LINKER_FLAGS}"
         -DCMAKE_PREFIX_PATH=${prefix}
         -DREADME_EXAMPLE=${example_file})
run_step("build consumer" ${CMAKE_COMMAND} --build ${SCRATCH_DIR}/build)
run_step("run consumer" ${SCRATCH_DIR}/build/ferry_consumer)
execute_process(COMMAND ${SCRATCH_DIR}/build/readme_example
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 60)
if(NOT rc EQUAL 0 OR NOT out MATCHES "table 7: soup, cooked\n"
   OR NOT out MATCHES "to kitchen: 1 x [a-z.]+, 0 bytes by store, 0 refused")
  message(FATAL_ERROR "the README's example failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "run the README's example: ok\n${out}")

# A program linked with ferry::framework alone loads CAF's core, not CAF's
# middleman or OpenSSL module: ferry's links run on a transport of its own.
execute_process(COMMAND ldd ${SCRATCH_DIR}/build/readme_example
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "libcaf_core")
  message(FATAL_ERROR "ldd of the README's example failed (${rc}):\n${out}\n${err}")
endif()
if(out MATCHES "libcaf_io|libcaf_openssl")
  message(FATAL_ERROR "the README's example loads CAF's middleman or OpenSSL "
                      "module, which ferry must not link:\n${out}")
endif()
message(STATUS "the README's example loads libcaf_core only: ok")

# The Python peer is installed beside the library, and runs from there:
# `python3 -m ferry.ping` against a port where nothing listens reports the
# refused connection by ferry's error name.
set(python_dir ${prefix}/${PYTHON_DIR})
if(NOT EXISTS ${python_dir}/ferry/__init__.py
   OR NOT EXISTS ${python_dir}/ferry/ping.py)
  message(FATAL_ERROR "the Python peer is not installed in ${python_dir}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${python_dir}
                        /usr/bin/python3 -I -c
                        "import sys; sys.path.insert(0, '${python_dir}'); import ferry; print(ferry.__file__)"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^${python_dir}/ferry/__init__.py")
  message(FATAL_ERROR "python3 does not import the installed ferry (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${python_dir}
                        /usr/bin/python3 -m ferry.ping 127.0.0.1:1
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 60)
if(NOT rc EQUAL 1 OR NOT err MATCHES "ferry.ping: ferry_fw: connect_failed")
  message(FATAL_ERROR "python3 -m ferry.ping from the prefix failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "the installed Python peer runs: ok\n${err}")
