/// @file registry.h
/// @brief The step registry: every step registers its number, name, launcher
///        and what it supports; tests, the benchmark and the main program
///        iterate over it, so adding a step needs no edit anywhere else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/api/gemm.h"

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
  int number = 0;                 ///< 1, 2, ...: the order of the ladder; the two digits of the folder name.
  std::string folder;             ///< Folder under steps/, e.g. "01_naive"; also the benchmark name prefix.
  std::string title;              ///< One line saying what the step is.
  StepConstraints constraints;    ///< Shapes and types the step accepts.
  StepLauncher launch = nullptr;  ///< The step's launcher; call through run_step().
  /// How the step sums with GemmArgs::fast_accumulation off: kFp32 (FP32
  /// FMAs) or kTensorCorePromoted (FP8 tensor cores, promoted into FP32 every
  /// 128 of K). A tensor-core step honours fast_accumulation (see
  /// accumulation_of()). It picks the tolerance of every check.
  Accumulation accumulation = Accumulation::kFp32;
};

/// How `step` sums when run with `fast_accumulation`: the tensor-core steps
/// switch to kTensorCoreFast, the FP32 ones ignore the flag.
inline Accumulation accumulation_of(const StepInfo& step, bool fast_accumulation) {
  if (step.accumulation == Accumulation::kFp32) return Accumulation::kFp32;
  return fast_accumulation ? Accumulation::kTensorCoreFast : Accumulation::kTensorCorePromoted;
}

/// True when the step runs on tensor (matrix) cores, so that
/// GemmArgs::fast_accumulation changes what it computes.
inline bool uses_tensor_cores(const StepInfo& step) { return step.accumulation != Accumulation::kFp32; }

/// A list of steps ordered by number, at most one per number. The program's
/// steps live in one instance (registered_steps()); tests make their own.
class StepRegistry {
 public:
  /// Adds `step`, unless another step already has its number: then the step
  /// is refused (kept out of steps()) and the refusal, naming both folders,
  /// is added to refusals(). Returns whether the step was added.
  bool add(const StepInfo& step);
  /// The accepted steps, ordered by number.
  const std::vector<StepInfo>& steps() const { return steps_; }
  /// One message per refused step, e.g. "steps/05_mine: number 5 is taken by
  /// steps/05_matrix_cores; rename the folder to a free number".
  const std::vector<std::string>& refusals() const { return refusals_; }

 private:
  std::vector<StepInfo> steps_;
  std::vector<std::string> refusals_;
};

/// The program's registry, which every step of the build joins at start-up.
StepRegistry& step_registry();

/// Adds a step to the program's registry (FP8GEMM_REGISTER_STEP calls it).
/// A step whose number is taken is refused: see StepRegistry::add().
bool register_step(const StepInfo& step);

/// All registered steps, ordered by number.
const std::vector<StepInfo>& registered_steps();

/// Why steps of this build were refused (empty when none was). Programs
/// print these; a test fails on them.
const std::vector<std::string>& refused_steps();

/// The step with this number or folder name ("1", "01", "01_naive"), or nullptr.
const StepInfo* find_step(const std::string& number_or_folder);

/// Checks args against the step's constraints; kNotSupported naming the first
/// constraint that fails, success otherwise. Does not check the shared contract.
Status check_step_constraints(const StepInfo& step, const GemmArgs& args);

/// The one way to run a step: validate_gemm_args, check_step_constraints,
/// then the step's launcher. Asynchronous on args.stream. A message of the
/// launcher's is prefixed with the step's folder ("02_lds_tiling: ...").
Status run_step(const StepInfo& step, const GemmArgs& args);

/// Text of a step's constraints for tables, e.g. "K % 16 == 0; formats e4m3, e5m2".
std::string describe_constraints(const StepConstraints& c);

}  // namespace fp8gemm

/// Registers the step of this folder, at static-initialization time, from the
/// step's registration unit (steps/NN_name/step*.cu):
///
///     FP8GEMM_REGISTER_STEP("naive: one thread per output", launch_naive, StepConstraints{},
///                           Accumulation::kFp32);
///
/// The number and folder come from the folder's name: the build
/// (fp8gemm_add_step in steps/CMakeLists.txt) defines FP8GEMM_STEP_NUMBER and
/// FP8GEMM_STEP_FOLDER for the step's sources, so a copy of the folder under
/// another name is another step with no edit. Compiled to nothing in the HIP
/// device-only build, where no host code exists.
#if defined(FP8GEMM_HIP_DEVICE_ONLY)
#define FP8GEMM_REGISTER_STEP(...)
#else
#if !defined(FP8GEMM_STEP_NUMBER) || !defined(FP8GEMM_STEP_FOLDER)
#define FP8GEMM_REGISTER_STEP(...) \
  static_assert(false, "FP8GEMM_STEP_NUMBER/FP8GEMM_STEP_FOLDER undefined: build steps with fp8gemm_add_step()")
#else
#define FP8GEMM_REGISTER_STEP(title, launcher, constraints, accumulation)                \
  [[maybe_unused]] static const bool fp8gemm_step_registered = ::fp8gemm::register_step( \
      ::fp8gemm::StepInfo{FP8GEMM_STEP_NUMBER, FP8GEMM_STEP_FOLDER, title, constraints, launcher, accumulation})
#endif
#endif
