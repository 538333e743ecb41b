# Helpers shared by every Basalt CMakeLists.txt.

# Warnings as errors on our own targets only; third-party headers come in as SYSTEM.
function(basalt_target_options target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # RapidJSON 1.1.0's iterator operator== takes its argument as a non-const template, which
    # C++20's reversed candidates make "ambiguous" to Clang (not to GCC) at every
    # FindMember(...) == MemberEnd() in our code; the comparison is well-defined.
    target_compile_options(${target} PRIVATE -Wno-ambiguous-reversed-operator)
  endif()
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
endfunction()

# basalt_library(NAME <target> SOURCES <files...> [DEPS <targets...>])
function(basalt_library)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_library(${ARG_NAME} STATIC ${ARG_SOURCES})
  basalt_target_options(${ARG_NAME})
  if(ARG_DEPS)
    target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS})
  endif()
endfunction()

# basalt_binary(NAME <target> SOURCES <files...> [DEPS <targets...>])
function(basalt_binary)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  basalt_target_options(${ARG_NAME})
  basalt_link_sanitizer_options(${ARG_NAME})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
endfunction()

# Directory of the throwaway cluster that CTest's "cluster" fixture starts for the
# integration and e2e tests (separate from hack/local-up.sh's _output/local).
set(BASALT_TEST_CLUSTER_DIR ${PROJECT_SOURCE_DIR}/_output/test-cluster CACHE PATH
    "State directory of the test cluster started by the CTest fixture")

# basalt_unit_test(NAME <target> SOURCES <files...> [DEPS <targets...>])
# Pure tests: no network, no sleeping; labelled "unit".
function(basalt_unit_test)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  basalt_target_options(${ARG_NAME})
  basalt_link_sanitizer_options(${ARG_NAME})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} Catch2::Catch2WithMain)
  catch_discover_tests(${ARG_NAME} TEST_PREFIX "${ARG_NAME}: " PROPERTIES LABELS unit)
endfunction()

# basalt_integration_test(NAME <target> SOURCES <files...> [DEPS <targets...>])
# Tests against the real API server of the test cluster (CTest fixture "cluster");
# they read the admin kubeconfig from $BASALT_TEST_KUBECONFIG (its directory holds cluster.env).
function(basalt_integration_test)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  basalt_target_options(${ARG_NAME})
  basalt_link_sanitizer_options(${ARG_NAME})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} Catch2::Catch2WithMain)
  catch_discover_tests(${ARG_NAME} TEST_PREFIX "${ARG_NAME}: " PROPERTIES
    LABELS integration
    FIXTURES_REQUIRED cluster
    RESOURCE_LOCK cluster
    TIMEOUT 300
    # One variable only: catch_discover_tests splits list values, so a second one would be
    # lost. Tests derive the cluster dir from the kubeconfig's directory.
    ENVIRONMENT "BASALT_TEST_KUBECONFIG=${BASALT_TEST_CLUSTER_DIR}/kubeconfig")
endfunction()
