# cmake/TDSL.cmake — build TDSL kernels from CMake.
#
#   include(path/to/cmake/TDSL.cmake)
#   tdsl_add_library(kernels SOURCES a.tdsl b.tdsl [FLAGS -O3 --mcpu=x86-64-v3 ...])
#   target_link_libraries(app PRIVATE kernels)   # objects, headers, and the runtime libraries
#
# For each source, `tdslc --emit=obj --via=cpp` makes an object and `tdslc --emit=header` the
# header <stem>.h; both record the files the source imports in a depfile (-MD -MF), so that
# editing an imported .tdsl rebuilds what uses it. The library is STATIC; its include
# directory (PUBLIC) holds the headers; it links -lm, the threads library and LLVM's OpenMP
# runtime (libomp, for parallel loops; see docs/cpp-backend.md).
#
# Settings: TDSLC (the compiler; found on PATH unless given), TDSL_OMP_LIBRARY (libomp).
# From an installed TDSL, `find_package(TDSL)` includes this file (packaging/TDSLConfig.cmake.in).
#
# Cross-compiling (a toolchain file: CMAKE_CROSSCOMPILING), CMake's conventions give the target:
# TDSL_TRIPLE, else CMAKE_CXX_COMPILER_TARGET, else CMAKE_SYSTEM_PROCESSOR-linux-gnu (aarch64 ->
# aarch64-linux-gnu), passed as --triple unless FLAGS has its own; the objects then link the
# target compiler's OpenMP (find_package(OpenMP): GCC's libgomp; the objects call GOMP_parallel)
# instead of the host's libomp. docs/cross-compiling.md has an example.
include_guard(GLOBAL)
cmake_minimum_required(VERSION 3.20) # DEPFILE with every generator, CMP0116

find_program(TDSLC tdslc DOC "the TDSL compiler")
if(NOT TDSLC)
  message(FATAL_ERROR "tdslc not found: pass -DTDSLC=/path/to/tdslc")
endif()
if(CMAKE_CROSSCOMPILING)
  if(NOT TDSL_TRIPLE)
    if(CMAKE_CXX_COMPILER_TARGET)
      set(TDSL_TRIPLE ${CMAKE_CXX_COMPILER_TARGET})
    elseif(CMAKE_SYSTEM_PROCESSOR)
      set(TDSL_TRIPLE ${CMAKE_SYSTEM_PROCESSOR}-linux-gnu)
    else()
      message(FATAL_ERROR "cross-compiling with neither CMAKE_CXX_COMPILER_TARGET nor "
                          "CMAKE_SYSTEM_PROCESSOR: pass -DTDSL_TRIPLE=<triple>")
    endif()
  endif()
  set(TDSL_TRIPLE ${TDSL_TRIPLE} CACHE STRING "tdslc --triple of tdsl_add_library's objects")
  find_package(OpenMP REQUIRED COMPONENTS CXX)
  set(TDSL_OMP_LIBRARY OpenMP::OpenMP_CXX)
else()
  find_library(TDSL_OMP_LIBRARY NAMES omp PATHS /usr/lib/llvm-19/lib NO_DEFAULT_PATH
    DOC "LLVM's OpenMP runtime (libomp), needed by kernels with parallel loops")
  if(NOT TDSL_OMP_LIBRARY)
    find_library(TDSL_OMP_LIBRARY NAMES omp)
  endif()
  if(NOT TDSL_OMP_LIBRARY)
    message(FATAL_ERROR "LLVM's OpenMP runtime (libomp) not found: install libomp-19-dev")
  endif()
endif()
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)

function(tdsl_add_library name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "SOURCES;FLAGS")
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "tdsl_add_library(${name}): no SOURCES")
  endif()
  set(flags ${ARG_FLAGS})
  if(TDSL_TRIPLE AND NOT flags MATCHES "(^|;)--triple")
    list(PREPEND flags --triple=${TDSL_TRIPLE})
  endif()
  set(objdir ${CMAKE_CURRENT_BINARY_DIR}/${name}.tdsl)
  set(incdir ${CMAKE_CURRENT_BINARY_DIR}/${name}.include)
  file(MAKE_DIRECTORY ${objdir} ${incdir})
  set(outputs)
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(abs ${src} ABSOLUTE)
    get_filename_component(stem ${src} NAME_WE)
    set(obj ${objdir}/${stem}.o)
    set(hdr ${incdir}/${stem}.h)
    add_custom_command(OUTPUT ${obj}
      COMMAND ${TDSLC} --emit=obj --via=cpp ${flags} -MD -MF ${obj}.d -o ${obj} ${abs}
      DEPENDS ${abs} ${TDSLC}
      DEPFILE ${obj}.d
      COMMENT "tdslc ${src} (object)"
      VERBATIM)
    add_custom_command(OUTPUT ${hdr}
      COMMAND ${TDSLC} --emit=header ${flags} -MD -MF ${hdr}.d -o ${hdr} ${abs}
      DEPENDS ${abs} ${TDSLC}
      DEPFILE ${hdr}.d
      COMMENT "tdslc ${src} (header)"
      VERBATIM)
    set_source_files_properties(${obj} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    list(APPEND outputs ${obj} ${hdr})
  endforeach()
  add_library(${name} STATIC ${outputs})
  set_target_properties(${name} PROPERTIES LINKER_LANGUAGE CXX)
  target_include_directories(${name} PUBLIC ${incdir})
  if(TDSL_INCLUDE_DIR) # an installed TDSL (TDSLConfig.cmake): tdsl.h
    target_include_directories(${name} PUBLIC ${TDSL_INCLUDE_DIR})
  endif()
  target_link_libraries(${name} PUBLIC ${TDSL_OMP_LIBRARY} Threads::Threads m)
endfunction()
