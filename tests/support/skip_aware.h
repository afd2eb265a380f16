#pragma once
// A skipped test is never reported as a pass. Meson counts a test program that exits 77 as SKIP; a GoogleTest run in
// which a test skipped (and none failed) would otherwise exit 0 and be counted OK. So the suites' programs end
// through run_all_tests_skip_aware(): one line per skipped test, with its reason, and status 77.
//
// A check that depends on what a machine has (an interpreter, a tool, the root user's powers) is therefore
// registered as a meson test of its own (--gtest_filter), so that its skip hides no pass of the others.

namespace test_support {

// RUN_ALL_TESTS(), then: its status when a test failed; 1 when no test ran (a filter matching nothing); 77 after
// listing the skipped tests when one skipped; else 0.
int run_all_tests_skip_aware();

}  // namespace test_support
