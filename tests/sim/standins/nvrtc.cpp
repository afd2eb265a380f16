// The stand-in libnvrtc.so.13 and libnvrtc.so.12 (needed by libtorch_cuda.so and libcaffe2_nvrtc.so, for torch's
// jiterator and fusers). Programs are modelled as objects holding their source, name expressions and log; compiling is
// not: the simulated device runs no generated code, so nvrtcCompileProgram says so once and fails with
// NVRTC_ERROR_COMPILATION, its log carrying the same line, which torch puts in the error it raises. Codes and their
// meaning are nvrtc.h's.
#include <cuda.h>  // CUDA_VERSION
#include <nvrtc.h>

#include <atomic>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "unsupported.h"

namespace {

constexpr uint64_t kProgramTag = 0x73696d2d6e767274;  // "sim-nvrt"

struct Program {
  uint64_t tag = kProgramTag;
  std::string source;
  std::string name;
  std::vector<std::string> name_expressions;
  std::string log;
  bool compile_attempted = false;
};

Program* program(nvrtcProgram handle) {
  auto* p = reinterpret_cast<Program*>(handle);
  return p != nullptr && p->tag == kProgramTag ? p : nullptr;
}

nvrtcResult no_output(nvrtcProgram prog, const void* out) {
  if (program(prog) == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
  return out == nullptr ? NVRTC_ERROR_INVALID_INPUT : NVRTC_ERROR_INVALID_PROGRAM;
}

}  // namespace

extern "C" {

const char* nvrtcGetErrorString(nvrtcResult result) {
  switch (result) {
    case NVRTC_SUCCESS: return "NVRTC_SUCCESS";
    case NVRTC_ERROR_OUT_OF_MEMORY: return "NVRTC_ERROR_OUT_OF_MEMORY";
    case NVRTC_ERROR_PROGRAM_CREATION_FAILURE: return "NVRTC_ERROR_PROGRAM_CREATION_FAILURE";
    case NVRTC_ERROR_INVALID_INPUT: return "NVRTC_ERROR_INVALID_INPUT";
    case NVRTC_ERROR_INVALID_PROGRAM: return "NVRTC_ERROR_INVALID_PROGRAM";
    case NVRTC_ERROR_INVALID_OPTION: return "NVRTC_ERROR_INVALID_OPTION";
    case NVRTC_ERROR_COMPILATION: return "NVRTC_ERROR_COMPILATION";
    case NVRTC_ERROR_BUILTIN_OPERATION_FAILURE: return "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE";
    case NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION:
      return "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION";
    case NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION: return "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION";
    case NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID: return "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID";
    case NVRTC_ERROR_INTERNAL_ERROR: return "NVRTC_ERROR_INTERNAL_ERROR";
    case NVRTC_ERROR_TIME_FILE_WRITE_FAILED: return "NVRTC_ERROR_TIME_FILE_WRITE_FAILED";
    case NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED: return "NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED";
    case NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED: return "NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED";
    case NVRTC_ERROR_PCH_CREATE: return "NVRTC_ERROR_PCH_CREATE";
    case NVRTC_ERROR_CANCELLED: return "NVRTC_ERROR_CANCELLED";
    case NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED: return "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED";
  }
  return "NVRTC_ERROR unknown";  // nvrtc.h documents this text for values it does not know
}

// The NVRTC of the CUDA release this stand-in presents itself as (STANDIN_CUDA_VERSION, encoded as CUDA_VERSION is:
// cuda12/ builds libnvrtc.so.12 from these sources and CUDA 13's headers), by default that of the headers.
#ifndef STANDIN_CUDA_VERSION
#define STANDIN_CUDA_VERSION CUDA_VERSION
#endif

nvrtcResult nvrtcVersion(int* major, int* minor) {
  if (major == nullptr || minor == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  *major = STANDIN_CUDA_VERSION / 1000;
  *minor = STANDIN_CUDA_VERSION % 1000 / 10;
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram* prog, const char* src, const char* name, int numHeaders,
                               const char* const*, const char* const*) {
  if (prog == nullptr || src == nullptr || numHeaders < 0) return NVRTC_ERROR_INVALID_INPUT;
  auto* created = new (std::nothrow) Program;
  if (created == nullptr) return NVRTC_ERROR_OUT_OF_MEMORY;
  created->source = src;
  created->name = name != nullptr ? name : "default_program";
  *prog = reinterpret_cast<nvrtcProgram>(created);
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog) {
  Program* p = prog != nullptr ? program(*prog) : nullptr;
  if (p == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
  p->tag = 0;
  delete p;
  *prog = nullptr;
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcAddNameExpression(nvrtcProgram prog, const char* name_expression) {
  Program* p = program(prog);
  if (p == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
  if (name_expression == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  if (p->compile_attempted) return NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION;
  p->name_expressions.emplace_back(name_expression);
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char* const* options) {
  static std::atomic<bool> said{false};
  Program* p = program(prog);
  if (p == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
  if (numOptions < 0 || (numOptions > 0 && options == nullptr)) return NVRTC_ERROR_INVALID_INPUT;
  standins::say_unsupported(said, "nvrtcCompileProgram");
  p->compile_attempted = true;
  p->log = p->name + ": simcuda: nvrtcCompileProgram is not supported by the simulator\n";
  return NVRTC_ERROR_COMPILATION;
}

// The log's size counts its terminating NUL (nvrtc.h).
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t* logSizeRet) {
  Program* p = program(prog);
  if (p == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
  if (logSizeRet == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  *logSizeRet = p->log.size() + 1;
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char* log) {
  Program* p = program(prog);
  if (p == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
  if (log == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  std::memcpy(log, p->log.c_str(), p->log.size() + 1);
  return NVRTC_SUCCESS;
}

// No program ever compiles here, so there are no lowered names, and no PTX or CUBIN: asking a program for output it
// does not have is answered as for a program that is not (yet) a compiled one.
nvrtcResult nvrtcGetLoweredName(nvrtcProgram prog, const char* name_expression, const char** lowered_name) {
  if (program(prog) == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
  if (name_expression == nullptr || lowered_name == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  return NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION;
}

nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t* ptxSizeRet) { return no_output(prog, ptxSizeRet); }

nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char* ptx) { return no_output(prog, ptx); }

nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t* cubinSizeRet) { return no_output(prog, cubinSizeRet); }

nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char* cubin) { return no_output(prog, cubin); }

}  // extern "C"
