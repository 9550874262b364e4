// Lists the steps of the installed library, and what each accepts; exits 1
// if it has none. It needs no GPU: the registry is filled when the library
// is loaded.
#include <cstdio>

#include "common/api/registry.h"

int main() {
  const std::vector<fp8gemm::StepInfo>& steps = fp8gemm::registered_steps();
  for (const fp8gemm::StepInfo& step : steps) {
    std::printf("%s: %s\n", step.folder.c_str(), fp8gemm::describe_constraints(step.constraints).c_str());
  }
  return steps.empty() ? 1 : 0;
}
