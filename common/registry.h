/// @file registry.h
/// @brief The step registry: every step registers its number, name, launcher
///        and what it supports; tests, the benchmark and the main program
///        iterate over it, so adding a step needs no edit anywhere else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/gemm.h"

namespace fp8gemm {

/// What a step accepts beyond the shared API contract. Each field that is not
/// met gives kNotSupported with a message naming it (see check_step_constraints).
struct StepConstraints {
  int64_t m_multiple = 1;  ///< M must be a multiple of this.
  int64_t n_multiple = 1;  ///< N must be a multiple of this.
  int64_t k_multiple = 1;  ///< K must be a multiple of this.
  /// Row starts of A and B (pointer and lda/ldb in bytes) must be aligned to
  /// this many bytes, for vector loads. D's pointer and ldd * element bytes too.
  int64_t operand_alignment_bytes = 1;
  /// Bit i set: Fp8Format(i) is accepted for A and B.
  uint32_t formats = (1u << kNumFp8Formats) - 1;
  bool mixed_formats = true;  ///< A and B may have different formats.
  /// Bit i set: OutputType(i) is accepted for D.
  uint32_t outputs = 0b11;
};

/// Launches the step's kernel on already-validated arguments. Returns
/// kNotSupported if the GPU cannot run the step's code, kRuntimeError for
/// other runtime errors.
using StepLauncher = Status (*)(const GemmArgs& args);

/// One registered step.
struct StepInfo {
  int number = 0;           ///< 1, 2, ...: the order of the ladder.
  std::string folder;       ///< Folder under steps/, e.g. "01_naive"; also the benchmark name prefix.
  std::string title;        ///< One line saying what the step is.
  StepConstraints constraints;  ///< Shapes and types the step accepts.
  StepLauncher launch = nullptr;  ///< The step's launcher; call through run_step().
  /// True when the step sums on FP8 tensor cores / matrix cores, whose partial
  /// sums have reduced precision (the tests then use the tensor-core tolerance,
  /// see docs/tolerances.md); false for FP32 FMA accumulation.
  bool tensor_cores = false;
};

/// Adds a step to the registry. Used by FP8GEMM_REGISTER_STEP; returns true.
bool register_step(const StepInfo& step);

/// All registered steps, ordered by number.
const std::vector<StepInfo>& registered_steps();

/// The step with this number or folder name ("1", "01", "01_naive"), or nullptr.
const StepInfo* find_step(const std::string& number_or_folder);

/// Checks args against the step's constraints; kNotSupported naming the first
/// constraint that fails, success otherwise. Does not check the shared contract.
Status check_step_constraints(const StepInfo& step, const GemmArgs& args);

/// The one way to run a step: validate_gemm_args, check_step_constraints,
/// then the step's launcher. Asynchronous on args.stream.
Status run_step(const StepInfo& step, const GemmArgs& args);

/// Text of a step's constraints for tables, e.g. "K % 16 == 0; formats e4m3, e5m2".
std::string describe_constraints(const StepConstraints& c);

/// Maps the runtime's error after a launch to a Status: success, kNotSupported
/// (no kernel image for this GPU, naming what the step was built for), or
/// kRuntimeError with the runtime's message. `step` names the step in the message.
Status status_from_launch(const char* step);

}  // namespace fp8gemm

/// Registers a step from its kernel file, at static-initialization time.
/// Usage: FP8GEMM_REGISTER_STEP(register_naive, StepInfo{1, "01_naive", "...", {}, &launch_naive});
/// Compiled to nothing in the HIP device-only build, where no host code exists.
#if defined(FP8GEMM_HIP_DEVICE_ONLY)
#define FP8GEMM_REGISTER_STEP(name, ...)
#else
#define FP8GEMM_REGISTER_STEP(name, ...) \
  [[maybe_unused]] static const bool name = ::fp8gemm::register_step(__VA_ARGS__)
#endif
