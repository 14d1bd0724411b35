// The fake's exported hiprtc functions: programs "compiled" into a small AMDGPU ELF that names the plugin's
// kernels, their logs and code (see api.hpp, README.md).
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "api.hpp"
#include "api_internal.hpp"
#include "code_object.hpp"
#include "kernels.hpp"
#include "runtime.hpp"

using namespace fakehip;

namespace {

// ---- hiprtc programs ----
struct Program {
  std::string source, name, log;
  std::vector<char> code;
  bool compiled = false;
};
struct ProgramTable {
  std::mutex mu;
  std::set<Program*> live;
};
ProgramTable& programs() {
  static auto* t = new ProgramTable;
  return *t;
}
Program* program(void* p) {
  std::lock_guard<std::mutex> lock(programs().mu);
  auto* prog = static_cast<Program*>(p);
  return programs().live.count(prog) ? prog : nullptr;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// hiprtc.

FAKEHIP_API const char* hiprtcGetErrorString(hiprtcResult result) { return hiprtcErrorText(result); }

FAKEHIP_API hiprtcResult hiprtcVersion(int* major, int* minor) {
  if (enter("hiprtcVersion", HIPRTC_ERROR_INTERNAL_ERROR)) return HIPRTC_ERROR_INTERNAL_ERROR;
  if (!major || !minor) return HIPRTC_ERROR_INVALID_INPUT;
  *major = config().majorVersion();
  *minor = config().runtimeVersion / 100000 % 100;
  return HIPRTC_SUCCESS;
}

FAKEHIP_API hiprtcResult hiprtcCreateProgram(void** prog, const char* src, const char* name, int numHeaders,
                                             const char** headers, const char** includeNames) {
  if (const int e = enter("hiprtcCreateProgram", HIPRTC_ERROR_PROGRAM_CREATION_FAILURE)) return e;
  if (!prog || !src || numHeaders < 0 || (numHeaders > 0 && (!headers || !includeNames))) return HIPRTC_ERROR_INVALID_INPUT;
  auto* p = new Program;
  p->source = src;
  p->name = name ? name : "";
  std::lock_guard<std::mutex> lock(programs().mu);
  programs().live.insert(p);
  *prog = p;
  return HIPRTC_SUCCESS;
}

FAKEHIP_API hiprtcResult hiprtcCompileProgram(void* prog, int numOptions, const char** options) {
  if (const int e = enter("hiprtcCompileProgram", HIPRTC_ERROR_COMPILATION)) {
    counters().compileFailures++;
    if (Program* p = program(prog)) p->log = "fakehip: injected compilation failure\n";
    return e;
  }
  Program* p = program(prog);
  if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
  if (numOptions < 0 || (numOptions > 0 && !options)) return HIPRTC_ERROR_INVALID_INPUT;
  std::string arch = deviceArch(currentDevice());
  for (int i = 0; i < numOptions; ++i) {
    if (!options[i]) return HIPRTC_ERROR_INVALID_OPTION;
    const std::string o = options[i];
    if (o.rfind("--offload-arch=", 0) == 0) arch = o.substr(15);
    else if (o.rfind("--gpu-architecture=", 0) == 0) arch = o.substr(19);
  }
  const uint32_t mach = machOfArch(arch);
  if (mach == 0) {
    counters().compileFailures++;
    p->log = "fakehip: unknown offload architecture '" + arch + "'\n";
    return HIPRTC_ERROR_INVALID_OPTION;
  }
  if (p->source.find("hetccl_") == std::string::npos) {  // not the plugin's kernels: nothing it could run
    counters().compileFailures++;
    p->log = "fakehip: the source defines none of the plugin's kernels\n";
    return HIPRTC_ERROR_COMPILATION;
  }
  p->code = makeElf(mach, kernelNames(), "fakehip hiprtc " + arch + " " + p->name);
  p->compiled = true;
  p->log = "";
  counters().compiles++;
  return HIPRTC_SUCCESS;
}

FAKEHIP_API hiprtcResult hiprtcGetProgramLogSize(void* prog, size_t* logSizeRet) {
  if (const int e = enter("hiprtcGetProgramLogSize", HIPRTC_ERROR_INTERNAL_ERROR)) return e;
  Program* p = program(prog);
  if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
  if (!logSizeRet) return HIPRTC_ERROR_INVALID_INPUT;
  *logSizeRet = p->log.size() + 1;
  return HIPRTC_SUCCESS;
}

FAKEHIP_API hiprtcResult hiprtcGetProgramLog(void* prog, char* log) {
  if (const int e = enter("hiprtcGetProgramLog", HIPRTC_ERROR_INTERNAL_ERROR)) return e;
  Program* p = program(prog);
  if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
  if (!log) return HIPRTC_ERROR_INVALID_INPUT;
  std::memcpy(log, p->log.c_str(), p->log.size() + 1);
  return HIPRTC_SUCCESS;
}

FAKEHIP_API hiprtcResult hiprtcGetCodeSize(void* prog, size_t* codeSizeRet) {
  if (const int e = enter("hiprtcGetCodeSize", HIPRTC_ERROR_INTERNAL_ERROR)) return e;
  Program* p = program(prog);
  if (!p || !p->compiled) return HIPRTC_ERROR_INVALID_PROGRAM;
  if (!codeSizeRet) return HIPRTC_ERROR_INVALID_INPUT;
  *codeSizeRet = p->code.size();
  return HIPRTC_SUCCESS;
}

FAKEHIP_API hiprtcResult hiprtcGetCode(void* prog, char* code) {
  if (const int e = enter("hiprtcGetCode", HIPRTC_ERROR_INTERNAL_ERROR)) return e;
  Program* p = program(prog);
  if (!p || !p->compiled) return HIPRTC_ERROR_INVALID_PROGRAM;
  if (!code) return HIPRTC_ERROR_INVALID_INPUT;
  std::memcpy(code, p->code.data(), p->code.size());
  return HIPRTC_SUCCESS;
}

FAKEHIP_API hiprtcResult hiprtcDestroyProgram(void** prog) {
  if (const int e = enter("hiprtcDestroyProgram", HIPRTC_ERROR_INTERNAL_ERROR)) return e;
  if (!prog) return HIPRTC_ERROR_INVALID_INPUT;
  auto* p = static_cast<Program*>(*prog);
  {
    std::lock_guard<std::mutex> lock(programs().mu);
    if (!programs().live.erase(p)) return HIPRTC_ERROR_INVALID_PROGRAM;
  }
  delete p;
  *prog = nullptr;
  return HIPRTC_SUCCESS;
}
