# Every test carries the label of what it needs (`ctest -L LABEL` runs them, `-LE LABEL` leaves
# them out), and `slow` beside it when it takes long:
#   unit         troupe_unit_tests and the scripts' checks (config fields, layering)
#   integration  troupe_integration_tests in one process: actors on the virtual clock, emulated
#                runs, the troupe binary run to an end on its own (report, sweep, chaos, bad input)
#   process      the real mode on the wall clock and runs across processes or network links: troupe
#                node processes, agents, external schedulers, the live view, TLS deployments
#   slow         also: over 25 s a test under the sanitizers on 2 cores
# make test runs them all, make test-asan all but the slow ones (Makefile). A test of a new suite in
# one of TROUPE_PROCESS_TEST_SOURCES is labelled process by itself; any other integration test is
# labelled integration. The slow ones are named one by one.

# The integration sources whose every test is a process test (in tests/integration/).
set(TROUPE_PROCESS_TEST_SOURCES
    agent_proxy_test.cpp
    agent_run_test.cpp
    allreduce_test.cpp
    deployment_tls_test.cpp
    external_scheduler_test.cpp
    live_view_test.cpp
    nccl_gang_test.cpp
    network_plugin_test.cpp
    node_kill_test.cpp
    node_release_test.cpp
    ps_fabric_real_test.cpp
    ps_remote_test.cpp
    real_compute_test.cpp
    real_mode_test.cpp
    real_pacing_test.cpp
    remote_compute_test.cpp
    remote_node_test.cpp
    two_process_test.cpp)

set(TROUPE_SLOW_TESTS
    Chaos.ShortCampaignHoldsEveryInvariant
    ConfigEdges.ClusterRunFields
    ConfigEdges.ParamServerFields
    CudaPlugin.VersionValidateAndAnEmulatedRunMapNoCudaLibrary
    Determinism.DefaultConfigTwiceGivesIdenticalFiles
    FabricRun.PhillyWithContentionTwiceGivesTheSameBytes
    LargeClusterHeap.TheProgramsRecordsEqualThoseOfTheSameRunInProcess
    LiveView.BrowserShowsTheRunsNumbersAndResultsAreUnchanged
    LiveView.ParameterServerRunShowsStepsAndHitRates
    LiveView.SlowClientsDoNotHoldTheRunsExit
    NetworkPlugin.VersionValidateAndAnEmulatedRunMapNoNetworkLibrary
    PsFaults.CrashedShardRecoversEveryAcknowledgedUpdate
    PsFaults.RealModeRestartRightAfterTheKillRecoversEverything
    PsHitRates.MemPsHoldingThePapersShareOfTheModelHitsNearItsRate
    RemoteCompute.ARestartedGangResumesFromTheWeightsOfItsCheckpoint
    RemoteCompute.EveryPartRunsInTheProcessOfItsServerAndTheJctsAreTheEmulatedOnes
    RemoteCompute.SigkillOfANodeMidRunLosesItsLeasesAndEveryJobFinishesOnce
    StandingLeases.PreemptingPoliciesOnMultiGpuJobsGiveTheSameRecords
    StandingLeasesUnderFaults.AFailureTraceGivesTheSameRecords
    StarvationRun.OnALongQueueTheGuardActsAndEveryJobFinishes
    # A value-parameterized test by its name without gtest's "  # GetParam() = ..." suffix.
    Sequences/SynergyReplay.EveryJobFinishesWhenSynergysSimulatorFinishedIt/ftf_starving_seed7_ftf_proportional
    Sequences/SynergyReplay.EveryJobFinishesWhenSynergysSimulatorFinishedIt/ftf_starving_seed7_ftf_greedy
    Sequences/SynergyReplay.EveryJobFinishesWhenSynergysSimulatorFinishedIt/ftf_starving_seed7_ftf_tune
    Sequences/SynergyCodeReplay.EveryJobFinishesWhenSynergysSimulatorFinishedIt/ftf_starving_seed7_ftf_greedy
    Sequences/SynergyCodeReplay.EveryJobFinishesWhenSynergysSimulatorFinishedIt/ftf_starving_seed7_ftf_tune)

# The suites of the process sources, read from their TEST, TEST_F and TEST_P lines.
set(TROUPE_PROCESS_SUITES "")
foreach(source ${TROUPE_PROCESS_TEST_SOURCES})
  set(path ${CMAKE_CURRENT_LIST_DIR}/integration/${source})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
  file(STRINGS ${path} lines REGEX "^TEST(_F|_P)?\\(")
  foreach(line ${lines})
    string(REGEX REPLACE "^TEST(_F|_P)?\\(([A-Za-z0-9_]+).*" "\\2" suite "${line}")
    list(APPEND TROUPE_PROCESS_SUITES ${suite})
  endforeach()
endforeach()
list(REMOVE_DUPLICATES TROUPE_PROCESS_SUITES)

# Labels the tests that gtest_discover_tests found in `target` (after it ran, when ctest reads
# the test list): process or integration by suite, and slow where named above.
function(troupe_label_tests target)
  set(script ${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake)
  file(WRITE ${script}
       "set(process_suites \"${TROUPE_PROCESS_SUITES}\")\n"
       "set(slow_tests \"${TROUPE_SLOW_TESTS}\")\n"
       "foreach(test IN LISTS ${target}_TESTS)\n"
       "  string(REGEX REPLACE \"^([^/]*/)?([A-Za-z0-9_]+)\\\\..*$\" \"\\\\2\" suite \"\${test}\")\n"
       "  list(FIND process_suites \"\${suite}\" process)\n"
       "  string(REGEX REPLACE \"  # GetParam\\\\(\\\\) = .*$\" \"\" bare \"\${test}\")\n"
       "  list(FIND slow_tests \"\${bare}\" slow)\n"
       "  set(labels integration)\n"
       "  if(process GREATER -1)\n"
       "    set(labels process)\n"
       "  endif()\n"
       "  if(slow GREATER -1)\n"
       "    list(APPEND labels slow)\n"
       "  endif()\n"
       "  set_tests_properties(\"\${test}\" PROPERTIES LABELS \"\${labels}\")\n"
       "endforeach()\n")
  # After gtest_discover_tests' own file, which sets ${target}_TESTS.
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
endfunction()
