# Sanitizer and fuzzing builds; hack/test-sanitizers.sh builds one tree of each.
#   BASALT_SANITIZE  AddressSanitizer + UndefinedBehaviorSanitizer (GCC or Clang)
#   BASALT_TSAN      ThreadSanitizer
#   BASALT_FUZZ      Clang only: ASan + UBSan + libFuzzer coverage on every target, and the
#                    fuzz/ targets (linked with -fsanitize=fuzzer)
#
# UBSan checks stay recoverable: only recoverable reports can be suppressed, and RapidJSON 1.1.0
# needs one suppression (cmake/sanitizers/ubsan.supp). Every executable links
# basalt_sanitizer_options (cmake/sanitizers/options.cc), whose built-in defaults make any other
# report fatal (halt_on_error=1) and point the runtimes at the suppression files, so plain ctest
# in a sanitizer tree fails on the first finding. ASAN_OPTIONS / UBSAN_OPTIONS / TSAN_OPTIONS in
# the environment are read after the defaults and win.

if(BASALT_SANITIZE AND BASALT_TSAN)
  message(FATAL_ERROR "BASALT_SANITIZE and BASALT_TSAN are mutually exclusive")
endif()
if(BASALT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "BASALT_FUZZ needs Clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  if(BASALT_TSAN)
    message(FATAL_ERROR "BASALT_FUZZ and BASALT_TSAN are mutually exclusive")
  endif()
endif()

set(BASALT_SANITIZER_DIR ${CMAKE_CURRENT_LIST_DIR}/sanitizers)
# Line tables only: symbolized stack traces with file:line, at a fraction of the cost of -g.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(_basalt_san_debug -gline-tables-only)
else()
  set(_basalt_san_debug -g1)
endif()

if(BASALT_SANITIZE OR BASALT_FUZZ)
  set(_basalt_san_flags -fsanitize=address,undefined)
  if(BASALT_FUZZ)
    # Coverage instrumentation everywhere; the libFuzzer driver (main) only in fuzz/ targets.
    list(PREPEND _basalt_san_flags -fsanitize=fuzzer-no-link)
  endif()
  add_compile_options(${_basalt_san_flags} -fno-omit-frame-pointer ${_basalt_san_debug})
  add_link_options(-fsanitize=address,undefined)
  set(_basalt_san_defs BASALT_ASAN=1)
elseif(BASALT_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer ${_basalt_san_debug})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC warns on Asio's atomic_thread_fence under TSan, and -Werror would stop the build.
    add_compile_options(-Wno-tsan)
  endif()
  add_link_options(-fsanitize=thread)
  set(_basalt_san_defs BASALT_TSAN=1)
endif()

if(BASALT_SANITIZE OR BASALT_FUZZ OR BASALT_TSAN)
  add_library(basalt_sanitizer_options OBJECT ${BASALT_SANITIZER_DIR}/options.cc)
  target_compile_definitions(basalt_sanitizer_options PRIVATE ${_basalt_san_defs}
    BASALT_UBSAN_SUPPRESSIONS="${BASALT_SANITIZER_DIR}/ubsan.supp"
    BASALT_TSAN_SUPPRESSIONS="${BASALT_SANITIZER_DIR}/tsan.supp")
  if(BASALT_TSAN)
    # Debian's Abseil is not built with TSan, so TSan cannot see absl::Mutex; this shim
    # interposes the Mutex/CondVar entry points and tells TSan about them (see the file).
    target_sources(basalt_sanitizer_options PRIVATE ${BASALT_SANITIZER_DIR}/tsan_absl_mutex.cc)
    target_link_libraries(basalt_sanitizer_options PUBLIC absl::synchronization ${CMAKE_DL_LIBS})
  endif()
endif()

# basalt_link_sanitizer_options(<executable>): the sanitizer defaults above, in sanitizer builds.
function(basalt_link_sanitizer_options target)
  if(TARGET basalt_sanitizer_options)
    target_link_libraries(${target} PRIVATE basalt_sanitizer_options)
  endif()
endfunction()
