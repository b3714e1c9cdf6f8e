# Script mode (cmake -P): install, configure the consumer, build it, run it.
# The consumer is built with the same compiler flags as ferry (sanitizer
# builds need the sanitizer runtime at link time).
file(REMOVE_RECURSE ${SCRATCH_DIR})
set(prefix ${SCRATCH_DIR}/prefix)

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
         -DCMAKE_PREFIX_PATH=${prefix})
run_step("build consumer" ${CMAKE_COMMAND} --build ${SCRATCH_DIR}/build)
run_step("run consumer" ${SCRATCH_DIR}/build/ferry_consumer)
