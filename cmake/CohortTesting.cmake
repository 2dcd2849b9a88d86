# cohort_add_test(NAME SOURCES ... LIBS ... LABELS ...): one GoogleTest binary, registered with ctest.
function(cohort_add_test name)
  # SERIAL: its tests run alone, for those that would starve others on a small machine.
  cmake_parse_arguments(T "SERIAL" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  cohort_target_defaults(${name})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  include(GoogleTest)
  gtest_discover_tests(${name}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES LABELS "${T_LABELS}" RUN_SERIAL ${T_SERIAL}
    DISCOVERY_TIMEOUT 60)
endfunction()
