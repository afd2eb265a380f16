// The main of the suites' GoogleTest programs: GoogleTest's own, but a skip is reported as one (skip_aware.h).
#include <gtest/gtest.h>

#include "skip_aware.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  return test_support::run_all_tests_skip_aware();
}
