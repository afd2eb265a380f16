// Who wrote a report: enough to find the process again and to order the reports of a distributed job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace firstassert {

struct ProcessInfo {
  int pid = 0;
  std::string host;
  std::vector<std::string> argv;
  std::optional<long> rank;  // RANK, SLURM_PROCID or OMPI_COMM_WORLD_RANK
  int64_t start_time_ns = 0;  // wall clock, from the kernel's start time of the process
};

ProcessInfo current_process_info();

}  // namespace firstassert
