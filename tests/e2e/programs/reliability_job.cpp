// Jobs that do to the shim what real jobs do to it, for the reliability tests.
//
// usage: reliability_job MODE [ARG]
//   fork-after-error   the first error, then a forked worker exits normally (its exit handlers run), then the
//                      parent is killed: the report must be the parent's, written at detection
//   fork-exec PROGRAM  a CUDA process forks and execs PROGRAM (a CUDA job), and waits for it
//   load THREADS N     THREADS threads launch N kernels each on their own streams, then one bad launch
//   segv               launches, then a segmentation fault with no CUDA error
//   abort | term       the first error, then abort() / raise(SIGTERM)
//   idle-term          CUDA initialized, nothing launched, then SIGTERM (a helper process a pool stops)
//   thread-only        all CUDA work on a second thread
//   odd-names          kernels named with 64 KiB and with bytes that are not UTF-8
//   many-names N       N distinct kernels, one launch each, then a bad launch
//   nofile             the first error after the process ran out of file descriptors
// Prints "launches: N" where it counts them, and "rss_kb: before after" for load.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bad_labels.h"
#include "kernels/stock_kernels.h"
#include "simcuda.h"

namespace {

long rss_kb() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = 0;
  while (status >> key) {
    if (key == "VmRSS:") {
      status >> value;
      return value;
    }
  }
  return 0;
}

cudaError_t busy(cudaStream_t stream, unsigned long long us) {
  void* args[] = {&us};
  return cudaLaunchKernel(simkernels_host_stub("busy"), dim3{1}, dim3{1}, args, 0, stream);
}

// An nll_loss launch with a label out of range, then the sync that reports it.
cudaError_t fail_now() {
  BadLabelsLoss bad;
  cudaLaunchKernel(simkernels_host_stub("nll_loss"), dim3{1}, dim3{32}, bad.args, 0, nullptr);
  return cudaDeviceSynchronize();
}

int load(int threads, int per_thread) {
  long before = rss_kb();
  std::atomic<long> launched{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      cudaStream_t stream;
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
      for (int i = 0; i < per_thread; ++i) {
        launched += busy(stream, 0) == cudaSuccess;
        // Drained now and then, so that the memory measured is what stays, not the simulator's queue of the moment.
        if (i % 1000 == 999) cudaStreamSynchronize(stream);
      }
      if (t % 2 == 0) cudaStreamSynchronize(stream);
    });
  }
  for (std::thread& w : workers) w.join();
  long after = rss_kb();
  std::printf("launches: %ld\nrss_kb: %ld %ld\n", launched.load() + 1, before, after);
  std::fflush(stdout);
  return fail_now() == cudaSuccess ? 0 : 1;
}

// A kernel the test registers under any name, launched through the driver by that name.
void launch_named(const std::string& name) {
  simcuda_register_kernel_with_params(nullptr, name.c_str(), [](void**, dim3, dim3) {}, 0, nullptr);
  CUmodule module;
  CUfunction f;
  cuModuleLoadData(&module, "cubin");
  if (cuModuleGetFunction(&f, module, name.c_str()) == CUDA_SUCCESS)
    cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "thread-only") {
    int result = 0;
    std::thread([&] {
      busy(nullptr, 1000);
      result = fail_now() == cudaSuccess ? 0 : 1;
    }).join();
    return result;
  }
  if (cudaFree(nullptr) != cudaSuccess) return 4;
  if (mode == "fork-after-error") {
    busy(nullptr, 1000);
    if (fail_now() == cudaSuccess) return 5;
    pid_t child = fork();
    if (child == 0) std::exit(0);  // a DataLoader worker: exit handlers run
    int status = 0;
    waitpid(child, &status, 0);
    std::printf("worker: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    std::fflush(stdout);
    kill(getpid(), SIGKILL);  // no exit handler of the parent: the report is what it wrote at detection
  }
  if (mode == "fork-exec" && argc > 2) {
    busy(nullptr, 1000);
    cudaDeviceSynchronize();
    pid_t child = fork();
    if (child == 0) {
      execl(argv[2], argv[2], static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::printf("child: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return 0;
  }
  if (mode == "load" && argc > 3) return load(std::atoi(argv[2]), std::atoi(argv[3]));
  if (mode == "segv") {
    for (int i = 0; i < 5; ++i) busy(nullptr, 100);
    cudaDeviceSynchronize();
    std::fflush(stdout);
    // A real fault, on a page that may not be read (a null dereference would be caught earlier by UBSan builds).
    auto* page = static_cast<volatile int*>(mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    return *page;
  }
  if (mode == "abort" || mode == "term") {
    if (fail_now() == cudaSuccess) return 5;
    if (mode == "abort") std::abort();
    raise(SIGTERM);
    return 6;
  }
  if (mode == "idle-term") {
    cudaFree(nullptr);  // the context exists; no kernel is launched
    raise(SIGTERM);
    return 6;
  }
  if (mode == "odd-names") {
    launch_named("_Z" + std::string(65536, 'k'));
    launch_named(std::string("kernel_\xff\xfe_latin1_\xe9t\xe9"));
    return fail_now() == cudaSuccess ? 0 : 1;
  }
  if (mode == "many-names" && argc > 2) {
    int n = std::atoi(argv[2]);
    for (int i = 0; i < n; ++i) launch_named("distinct_kernel_" + std::to_string(i));
    std::printf("launches: %d\n", n + 1);
    return fail_now() == cudaSuccess ? 0 : 1;
  }
  if (mode == "nofile") {
    busy(nullptr, 100);
    cudaDeviceSynchronize();
    struct rlimit limit {3, 3};  // stdin, stdout, stderr: no room for a report
    setrlimit(RLIMIT_NOFILE, &limit);
    return fail_now() == cudaSuccess ? 0 : 1;
  }
  std::fprintf(stderr, "reliability_job: unknown mode '%s'\n", mode.c_str());
  return 2;
}
