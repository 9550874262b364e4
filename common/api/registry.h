/// @file registry.h
/// @brief The step registry: every step registers its number, name, launcher
///        and what it supports; tests, the benchmark and the main program
///        iterate over it, so adding a step needs no edit anywhere else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/api/gemm.h"
#include "common/api/grouped.h"

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
  /// Bit i set: OutputType(i) is accepted for D (BF16 and FP32 by default;
  /// FP8 D also means d_scale and d_amax are honoured).
  uint32_t outputs = 0b11;
  /// Bit i set: ScaleGranularity(i) is accepted for A's scales (per tensor only by default).
  uint32_t a_scales = 1u << static_cast<int>(ScaleGranularity::kPerTensor);
  /// Bit i set: ScaleGranularity(i) is accepted for B's scales.
  uint32_t b_scales = 1u << static_cast<int>(ScaleGranularity::kPerTensor);
  /// Per-tensor scales may come from device memory (GemmArgs::a_scales / b_scales with kPerTensor).
  bool scale_pointers = false;
  /// Epilogue operations accepted: kEpilogueBias, kEpilogueGeluTanh, kEpilogueGeluErf (none by default).
  uint32_t epilogue = 0;
  /// The most K slices GemmArgs::split_k may ask for (1: the step does not split K).
  int max_split_k = 1;
  /// Bit i set: SplitKReduction(i) may be asked for. kAuto always may: the
  /// step then chooses per launch (StepInfo::describe_launch says which).
  uint32_t split_k_reductions = 0;
};

/// StepConstraints::epilogue: a bias vector (either BiasType).
inline constexpr uint32_t kEpilogueBias = 1u << 0;
/// StepConstraints::epilogue: Activation::kGeluTanh.
inline constexpr uint32_t kEpilogueGeluTanh = 1u << 1;
/// StepConstraints::epilogue: Activation::kGeluErf.
inline constexpr uint32_t kEpilogueGeluErf = 1u << 2;

/// The cases every step must run, for each pair of formats (A, B) and each
/// output type that `c` accepts: the ladder's 4096 x 4096 x 4096 and
/// DeepSeek-V3's decode shape 64 x 2112 x 7168 (M x N x K), in this order,
/// then A's format, B's format, D's type (formats in Fp8Format order; a pair
/// of different formats only when c.mixed_formats). Derived from the formats
/// and outputs alone: constraints that refuse one of these cases (say
/// k_multiple = 2^40) make the step fail its must-run tests rather than
/// shrink the list.
std::vector<GemmShape> default_must_run(const StepConstraints& c);

/// True when two GemmShapes are the same problem: sizes, formats and output type.
bool same_gemm_shape(const GemmShape& x, const GemmShape& y);

/// "4096x4096x4096", then "_e5m2_e4m3" unless both formats are e4m3, then
/// "_fp32" for FP32 output or "_to_e4m3" / "_to_e5m2" for FP8 output: the
/// name the GPU tests give a case.
std::string gemm_shape_name(const GemmShape& shape);

/// Launches the step's kernel on already-validated arguments. Returns
/// kNotSupported if the GPU cannot run the step's code, kRuntimeError for
/// other runtime errors.
using StepLauncher = Status (*)(const GemmArgs& args);

/// Launches a grouped GEMM (common/api/grouped.h) on arguments that passed
/// validate_grouped_args; call through run_grouped_step().
using GroupedLauncher = Status (*)(const GroupedGemmArgs& args);

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
  /// The cases the step must run: its constraints must accept each one, and
  /// the GPU tests fail (rather than accept a refusal) unless the step runs it
  /// and passes the check. FP8GEMM_REGISTER_STEP fills it with
  /// default_must_run(constraints), then StepOptions::extra_must_run;
  /// tests/test_registry.cpp checks both rules for every registered step.
  std::vector<GemmShape> must_run = {};
  /// The GPU the step's code needs, as a compute capability major * 10 + minor
  /// that the GPU must equal: 90 for sm_90a code (wgmma, setmaxnreg), which
  /// runs on compute capability 9.0 and no other GPU. 0: any GPU the build
  /// targets. On another GPU the launcher refuses with kNotSupported, and the
  /// GPU tests skip the step, saying so (a skip even with FP8GEMM_REQUIRE_GPU=1).
  int required_compute_capability = 0;
  /// Optional: how the step would launch `args` (e.g. its split-K slice
  /// count and why), for `fp8gemm --check` to print; nullptr: nothing to say.
  std::string (*describe_launch)(const GemmArgs& args) = nullptr;
  /// Optional: the step's grouped GEMM (a mixture-of-experts layer's GEMMs
  /// in one launch); nullptr for a step that has none.
  GroupedLauncher launch_grouped = nullptr;
};

/// What a registration may state beyond FP8GEMM_REGISTER_STEP's four
/// required arguments (its optional fifth).
struct StepOptions {
  /// StepInfo::required_compute_capability: 90 for a step built from sm_90a code.
  int required_compute_capability = 0;
  /// Cases the step must run beyond default_must_run(constraints), e.g. the
  /// shape it was tuned for; they join StepInfo::must_run.
  std::vector<GemmShape> extra_must_run = {};
  /// StepInfo::describe_launch.
  std::string (*describe_launch)(const GemmArgs& args) = nullptr;
  /// StepInfo::launch_grouped.
  GroupedLauncher launch_grouped = nullptr;
};

/// The StepInfo of one registration (what FP8GEMM_REGISTER_STEP builds):
/// the arguments as they are, must_run = default_must_run(constraints) followed
/// by options.extra_must_run (repeats dropped), and the options' compute capability.
StepInfo make_step_info(int number, const std::string& folder, const std::string& title, StepLauncher launch,
                        const StepConstraints& constraints, Accumulation accumulation,
                        const StepOptions& options = StepOptions{});

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

/// The one way to run a step's grouped GEMM: validate_grouped_args, the
/// step's constraints on args.gemm (formats, output, scales, epilogue), then,
/// with args.check_on_host, check_grouped_device_data, then the step's
/// grouped launcher. kNotSupported when the step has none.
Status run_grouped_step(const StepInfo& step, const GroupedGemmArgs& args);

/// Text of a step's constraints for tables, e.g. "K % 16 == 0; formats e4m3, e5m2".
std::string describe_constraints(const StepConstraints& c);

/// Short name of an accumulation: "fp32", "tensor_core_promoted", "tensor_core_fast".
const char* accumulation_name(Accumulation accumulation);

/// The registry as JSON, for machines (`fp8gemm --list=json`, committed as
/// docs/steps.json, from which README.md's table of what each step accepts is
/// generated): per step its number, folder, title, accumulation, required
/// compute capability, whether it has a grouped GEMM, constraints field by field, describe_constraints()'s
/// text and its must-run cases; then the refusals. Deterministic: the same
/// registry gives the same bytes.
std::string steps_json(const std::vector<StepInfo>& steps, const std::vector<std::string>& refusals);

}  // namespace fp8gemm

/// Registers the step of this folder, at static-initialization time, from the
/// step's registration unit (steps/NN_name/step*.cu):
///
///     FP8GEMM_REGISTER_STEP("naive: one thread per output", launch_naive, StepConstraints{},
///                           Accumulation::kFp32);
///     FP8GEMM_REGISTER_STEP("wgmma: ...", launch_wgmma, kConstraints, Accumulation::kTensorCorePromoted,
///                           StepOptions{/*required_compute_capability=*/90});
///
/// The arguments are make_step_info()'s after the folder: title, launcher,
/// constraints, accumulation and, optionally, StepOptions. The step's
/// must-run cases are default_must_run(constraints) and the options' extras.
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
#define FP8GEMM_REGISTER_STEP(...)                             \
  [[maybe_unused]] static const bool fp8gemm_step_registered = \
      ::fp8gemm::register_step(::fp8gemm::make_step_info(FP8GEMM_STEP_NUMBER, FP8GEMM_STEP_FOLDER, __VA_ARGS__))
#endif
#endif
