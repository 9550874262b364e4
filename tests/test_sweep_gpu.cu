// A seeded random sweep of every registered step against the FP64 reference.
//
// Every run draws new cases from the run's seed (support/seed.h: fresh and
// printed, FP8GEMM_TEST_SEED=<seed> replays a run): FP8GEMM_SWEEP_CASES of them
// (default 320). A case is a registered step and a problem of one of six shape
// classes, a pair of operand formats, an output type, leading dimensions
// (tight, padded on 16-byte boundaries, or padded off them) and, for the
// tensor-core steps, fast accumulation on or off:
//
//   class    weight  M x N x K
//   tiny      15 %   each 1 .. 16
//   ragged    25 %   each 1 .. 1100: uniform, next to a multiple of 16, or log-uniform
//   aligned   20 %   each a multiple of 16 or of 128, up to 2048
//   decode    20 %   M 1 .. 128 (half of them powers of two), N and K up to 7168
//                    (DeepSeek-V3's sizes, multiples of 16, or ragged)
//   tall      10 %   M 1024 .. 70000 (a third above 65535), N 1 .. 64, K 1 .. 512
//   large     10 %   each 2048 .. 4096 (multiples of 128, or any)
//
// Steps are dealt in rounds, each round every registered step once in a
// shuffled order, so every step gets count / steps cases. The draw knows the
// step's constraints: nine cases in ten take formats and an output the step
// accepts, and about six in seven of those that would break a multiple or an
// alignment rule are fixed (sizes rounded up, rows padded to the alignment);
// the rest break the rule on purpose, so that refusals are exercised too. The
// host-side cost is capped per case (the FP64 reference runs on the CPU):
// (M + N) K <= 2^25 operand elements, M N <= 2^24 outputs, a reference of at
// most 2^32 multiply-adds on the rows the check compares (common/check:
// rows_to_check), and M N K <= 2^30 for the naive step 01.
//
// Each case runs through the path of tests/test_steps_gpu.cu
// (support/step_test.h: run_step_checked): fresh random operands quantized per
// tensor with NaN codes in their row padding, D poisoned with NaN inside a
// guard band, the step's constraints deciding. Its outcome is one of
//   pass     the step computed D, every element written, nothing around it,
//            within the tolerance of its accumulation (matches_reference);
//   refused  the constraints refuse the case and the step returned
//            kNotSupported with exactly check_step_constraints' message and left
//            D untouched (a must-run case refused is wrong);
//   wrong    any check failed: a value out of tolerance, an element left NaN,
//            a byte written outside D, a refusal of a case the constraints
//            accept, a refusal with another code or message;
//   crashed  a CUDA runtime error or another exception. When the CUDA context
//            is dead afterwards (a sticky error), the sweep stops and the
//            remaining cases are counted as not run.
// A case of a step built for another GPU (StepInfo::required_compute_capability)
// is skipped (architecture) and printed, never counted as a pass. Each case
// that does not pass gets one line; at the end comes the tally
//   sweep: seed <seed>, <N> cases: <p> pass, <r> refused, <w> wrong, <c> crashed
// with the skipped and not-run cases on the next line and the breakdown per
// step and per shape class. The test fails unless wrong == 0 and crashed == 0.
// FP8GEMM_SWEEP_OUT=<path> also writes the tally as JSON there;
// FP8GEMM_SWEEP_ONLY=<i>[,<j>...] runs only those cases of the seed's list (to
// replay one); FP8GEMM_SWEEP_VERBOSE=1 prints every case before it runs.
//
// Without a usable GPU the sweep skips; with FP8GEMM_REQUIRE_GPU=1 it fails.
// The tests of the SweepCases suite need no GPU: they check the draw
// (deterministic, covering, within its caps, valid arguments, few refusals)
// and the tally's text and JSON.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/api/gemm.h"
#include "common/api/json.h"
#include "common/api/registry.h"
#include "common/check/check.h"
#include "support/check_result.h"
#include "support/device_matrices.h"
#include "support/random_problem.h"
#include "support/require_gpu.h"
#include "support/seed.h"
#include "support/step_test.h"

namespace fp8gemm {
namespace {

using test_support::Layout;

// -----------------------------------------------------------------------------
// The cases
// -----------------------------------------------------------------------------

/// Cases per run unless FP8GEMM_SWEEP_CASES says otherwise.
constexpr int kDefaultCaseCount = 320;
/// Host-side caps per case (see the top of the file).
constexpr int64_t kMaxOperandElements = int64_t{1} << 25;        // (M + N) K
constexpr int64_t kMaxOutputElements = int64_t{1} << 24;         // M N
constexpr int64_t kMaxReferenceMultiplyAdds = int64_t{1} << 32;  // checked rows x N x K
constexpr int64_t kMaxNaiveMultiplyAdds = int64_t{1} << 30;      // M N K for step 01

enum class ShapeClass : uint8_t { kTiny, kRagged, kAligned, kDecode, kTall, kLarge };
constexpr int kNumShapeClasses = 6;
constexpr ShapeClass kShapeClasses[kNumShapeClasses] = {ShapeClass::kTiny,   ShapeClass::kRagged, ShapeClass::kAligned,
                                                        ShapeClass::kDecode, ShapeClass::kTall,   ShapeClass::kLarge};
// Percent of the cases drawn from each class, in the order of ShapeClass.
constexpr int kShapeClassWeights[kNumShapeClasses] = {15, 25, 20, 20, 10, 10};

const char* shape_class_name(ShapeClass c) {
  switch (c) {
    case ShapeClass::kTiny: return "tiny";
    case ShapeClass::kRagged: return "ragged";
    case ShapeClass::kAligned: return "aligned";
    case ShapeClass::kDecode: return "decode";
    case ShapeClass::kTall: return "tall";
    case ShapeClass::kLarge: return "large";
  }
  return "unknown";
}

/// How the leading dimensions were drawn.
enum class LayoutKind : uint8_t {
  kTight,             ///< lda = ldb = K, ldd = N.
  kAlignedPadding,    ///< Larger, every row on a 16-byte (or the step's) boundary.
  kUnalignedPadding,  ///< Larger by a few elements, rows off those boundaries.
};
constexpr int kNumLayoutKinds = 3;

const char* layout_kind_name(LayoutKind k) {
  switch (k) {
    case LayoutKind::kTight: return "tight";
    case LayoutKind::kAlignedPadding: return "aligned padding";
    case LayoutKind::kUnalignedPadding: return "unaligned padding";
  }
  return "unknown";
}

/// One case of the sweep.
struct SweepCase {
  int index = 0;     ///< Position in the run's list, from 0.
  std::string step;  ///< The step's folder.
  ShapeClass shape_class = ShapeClass::kTiny;
  GemmShape gemm;          ///< Sizes, formats, output type.
  Layout layout{1, 1, 1};  ///< lda, ldb, ldd.
  LayoutKind layout_kind = LayoutKind::kTight;
  bool fast_accumulation = false;
  uint64_t data_seed = 0;  ///< Seed of the operands and of the checked rows.
};

bool operator==(const SweepCase& x, const SweepCase& y) {
  return x.index == y.index && x.step == y.step && x.shape_class == y.shape_class && same_gemm_shape(x.gemm, y.gemm) &&
         x.layout.lda == y.layout.lda && x.layout.ldb == y.layout.ldb && x.layout.ldd == y.layout.ldd &&
         x.layout_kind == y.layout_kind && x.fast_accumulation == y.fast_accumulation && x.data_seed == y.data_seed;
}

/// "05_matrix_cores_255x1000x1008_e5m2_e4m3_fp32_lda1024_ldb1040_ldd1000_fast".
std::string case_name(const SweepCase& c) {
  std::string name = c.step + "_" + gemm_shape_name(c.gemm);
  if (c.layout_kind != LayoutKind::kTight) name += test_support::layout_suffix(c.layout);
  if (c.fast_accumulation) name += "_fast";
  return name;
}

/// Random draws that depend only on the seed: std::mt19937_64's output is
/// fixed by the standard, and these helpers use no std:: distribution (whose
/// algorithms differ between standard libraries) and no floating point.
class Draw {
 public:
  explicit Draw(uint64_t seed) : engine_(seed) {}

  /// Uniform in [lo, hi], without bias.
  int64_t uniform(int64_t lo, int64_t hi) {
    const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
    if (range == 0) return static_cast<int64_t>(engine_());  // the whole 64-bit range
    const uint64_t limit = UINT64_MAX - UINT64_MAX % range;  // a multiple of range
    uint64_t x = engine_();
    while (x >= limit) x = engine_();
    return lo + static_cast<int64_t>(x % range);
  }
  /// True with probability percent / 100.
  bool percent(int percent) { return uniform(0, 99) < percent; }
  /// Roughly log-uniform in [lo, hi] (lo >= 1): a bit length, then a value of it.
  int64_t log_uniform(int64_t lo, int64_t hi) {
    const int bits_lo = bit_length(lo), bits_hi = bit_length(hi);
    const int bits = static_cast<int>(uniform(bits_lo, bits_hi));
    const int64_t from = std::max(lo, int64_t{1} << (bits - 1));
    const int64_t to = std::min(hi, (int64_t{1} << bits) - 1);
    return uniform(from, to);
  }

 private:
  static int bit_length(int64_t v) {
    int bits = 0;
    while ((v >> bits) != 0) ++bits;
    return bits;
  }
  std::mt19937_64 engine_;
};

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// A size of up to `max` that tiles do not divide: uniform, next to a multiple
// of 16 (where a tile's edge falls), or log-uniform (small sizes often).
int64_t ragged_size(Draw& draw, int64_t max) {
  switch (draw.uniform(0, 2)) {
    case 0: return draw.uniform(1, max);
    case 1: {
      constexpr int64_t kOffsets[] = {-15, -9, -3, -1, 1, 3, 9, 15};
      const int64_t edge = 16 * draw.uniform(1, std::max<int64_t>(1, max / 16));
      return std::clamp<int64_t>(edge + kOffsets[draw.uniform(0, 7)], 1, max);
    }
    default: return draw.log_uniform(1, max);
  }
}

// N or K of a decode case: DeepSeek-V3's sizes, a multiple of 16, or ragged.
int64_t decode_size(Draw& draw) {
  constexpr int64_t kDeepSeek[] = {512, 576, 1536, 2048, 2112, 4096, 7168};
  const int64_t roll = draw.uniform(0, 9);
  if (roll < 4) return kDeepSeek[draw.uniform(0, 6)];
  if (roll < 8) return 16 * draw.uniform(1, 7168 / 16);
  return ragged_size(draw, 7168);
}

ShapeClass draw_shape_class(Draw& draw) {
  int64_t roll = draw.uniform(0, 99);
  for (int i = 0; i < kNumShapeClasses; ++i) {
    if (roll < kShapeClassWeights[i]) return kShapeClasses[i];
    roll -= kShapeClassWeights[i];
  }
  return ShapeClass::kTiny;
}

// M, N, K of a case of class `c`.
void draw_sizes(Draw& draw, ShapeClass c, GemmShape* g) {
  switch (c) {
    case ShapeClass::kTiny:
      g->m = draw.uniform(1, 16);
      g->n = draw.uniform(1, 16);
      g->k = draw.uniform(1, 16);
      break;
    case ShapeClass::kRagged:
      g->m = ragged_size(draw, 1100);
      g->n = ragged_size(draw, 1100);
      g->k = ragged_size(draw, 1100);
      break;
    case ShapeClass::kAligned:
      for (int64_t* size : {&g->m, &g->n, &g->k}) {
        *size = draw.percent(50) ? 16 * draw.uniform(1, 128) : 128 * draw.uniform(1, 16);
      }
      break;
    case ShapeClass::kDecode:
      g->m = draw.percent(50) ? int64_t{1} << draw.uniform(0, 7) : draw.uniform(1, 128);
      g->n = decode_size(draw);
      g->k = decode_size(draw);
      break;
    case ShapeClass::kTall:
      // Past 65535 rows: a launcher with one row (or one row tile) per
      // gridDim.y block would need more blocks than y allows.
      g->m = draw.percent(30) ? draw.uniform(65536, 70000) : draw.log_uniform(1024, 65535);
      g->n = ragged_size(draw, 64);
      g->k = ragged_size(draw, 512);
      break;
    case ShapeClass::kLarge:
      for (int64_t* size : {&g->m, &g->n, &g->k}) {
        *size = draw.percent(50) ? 128 * draw.uniform(16, 32) : draw.uniform(2048, 4096);
      }
      break;
  }
}

/// True for the naive step, whose kernel is slow enough to need a cap of its own.
bool is_naive_step(const StepInfo& step) { return step.number == 1 || step.folder.find("naive") != std::string::npos; }

/// Whether a case of these sizes stays within the host-side caps (and, for the
/// naive step, the cap on its GPU time).
bool within_caps(const StepInfo& step, const GemmShape& g) {
  if ((g.m + g.n) * g.k > kMaxOperandElements) return false;
  if (g.m * g.n > kMaxOutputElements) return false;
  if (checked_row_count(g.m, g.n, g.k) * g.n * g.k > kMaxReferenceMultiplyAdds) return false;
  if (is_naive_step(step) && g.m * g.n * g.k > kMaxNaiveMultiplyAdds) return false;
  return true;
}

// An element of the set bits of `mask` (below 2^count), or any of the `count`
// values when none is set.
int pick_from_mask(Draw& draw, uint32_t mask, int count) {
  std::vector<int> values;
  for (int i = 0; i < count; ++i) {
    if ((mask >> i & 1u) != 0) values.push_back(i);
  }
  if (values.empty()) return static_cast<int>(draw.uniform(0, count - 1));
  return values[static_cast<size_t>(draw.uniform(0, static_cast<int64_t>(values.size()) - 1))];
}

// Whether the rows of A, B and D start on `align`-byte boundaries with this
// layout (pointers from cudaMalloc and GuardedOutput are 256-byte aligned).
bool rows_aligned(const Layout& l, OutputType d_type, int64_t align) {
  return l.lda % align == 0 && l.ldb % align == 0 && (l.ldd * output_bytes(d_type)) % align == 0;
}

Layout aligned_padding(Draw& draw, const GemmShape& g, int64_t align) {
  const int64_t d_unit = align / std::min<int64_t>(align, output_bytes(g.d_type));  // elements of D per `align` bytes
  return {round_up(g.k, align) + align * draw.uniform(0, 3), round_up(g.k, align) + align * draw.uniform(0, 3),
          round_up(g.n, d_unit) + d_unit * draw.uniform(0, 3)};
}

/// The run's cases: `count` cases for `steps`, a pure function of the
/// arguments. Case i of a longer list is case i of a shorter one.
std::vector<SweepCase> sweep_cases(const std::vector<StepInfo>& steps, uint64_t seed, int count) {
  std::vector<SweepCase> cases;
  if (steps.empty() || count <= 0) return cases;
  Draw draw(test_support::mix_seed(seed, 0x53574545505ull));  // "SWEEP"
  std::vector<size_t> round;
  for (int index = 0; index < count; ++index) {
    // Deal the steps in rounds, each a shuffled permutation.
    if (round.empty()) {
      for (size_t i = 0; i < steps.size(); ++i) round.push_back(i);
      for (size_t i = round.size() - 1; i > 0; --i) {
        std::swap(round[i], round[static_cast<size_t>(draw.uniform(0, static_cast<int64_t>(i)))]);
      }
    }
    const StepInfo& step = steps[round.back()];
    round.pop_back();
    const StepConstraints& rules = step.constraints;

    SweepCase c;
    c.index = index;
    c.step = step.folder;
    c.data_seed = test_support::mix_seed(seed, static_cast<uint64_t>(index));

    // Sizes: a class, then sizes of it, rounded up to the step's multiples
    // unless this case breaks them on purpose; drawn again until within the caps.
    const bool fit_multiples = draw.percent(85);
    bool found = false;
    for (int attempt = 0; attempt < 1000 && !found; ++attempt) {
      c.shape_class = draw_shape_class(draw);
      draw_sizes(draw, c.shape_class, &c.gemm);
      if (fit_multiples) {
        c.gemm.m = round_up(c.gemm.m, rules.m_multiple);
        c.gemm.n = round_up(c.gemm.n, rules.n_multiple);
        c.gemm.k = round_up(c.gemm.k, rules.k_multiple);
      }
      found = within_caps(step, c.gemm);
    }
    if (!found) {  // not met in practice: the smallest tiny case is within every cap
      c.shape_class = ShapeClass::kTiny;
      c.gemm.m = c.gemm.n = c.gemm.k = 1;
    }

    // Formats and output: nine in ten among those the step accepts.
    if (draw.percent(90)) {
      const int a = pick_from_mask(draw, rules.formats, kNumFp8Formats);
      const int b =
          (!rules.mixed_formats || draw.percent(35)) ? a : pick_from_mask(draw, rules.formats, kNumFp8Formats);
      c.gemm.a_format = static_cast<Fp8Format>(a);
      c.gemm.b_format = static_cast<Fp8Format>(b);
    } else {
      c.gemm.a_format = static_cast<Fp8Format>(draw.uniform(0, kNumFp8Formats - 1));
      c.gemm.b_format = static_cast<Fp8Format>(draw.uniform(0, kNumFp8Formats - 1));
    }
    c.gemm.d_type =
        static_cast<OutputType>(draw.percent(90) ? pick_from_mask(draw, rules.outputs, 2) : draw.uniform(0, 1));

    // Leading dimensions: tight, padded on the step's alignment (16 bytes at
    // least), or padded off it; a layout the step's alignment refuses is
    // replaced by an aligned one in six cases of seven.
    const int64_t align = std::max<int64_t>(16, rules.operand_alignment_bytes);
    const int64_t layout_roll = draw.uniform(0, 99);
    if (layout_roll < 45) {
      c.layout_kind = LayoutKind::kTight;
      c.layout = test_support::tight_layout(c.gemm);
    } else if (layout_roll < 80) {
      c.layout_kind = LayoutKind::kAlignedPadding;
      c.layout = aligned_padding(draw, c.gemm, align);
    } else {
      c.layout_kind = LayoutKind::kUnalignedPadding;
      c.layout = {c.gemm.k + draw.uniform(1, 40), c.gemm.k + draw.uniform(1, 40), c.gemm.n + draw.uniform(1, 24)};
    }
    if (rules.operand_alignment_bytes > 1 && !rows_aligned(c.layout, c.gemm.d_type, rules.operand_alignment_bytes) &&
        draw.uniform(0, 6) != 0) {
      c.layout_kind = LayoutKind::kAlignedPadding;
      c.layout = aligned_padding(draw, c.gemm, align);
    }

    c.fast_accumulation = uses_tensor_cores(step) && draw.percent(35);
    cases.push_back(std::move(c));
  }
  return cases;
}

/// Estimated seconds of one case on the H200 machine (16 host cores), from
/// the suite's [ PROBLEM ] lines there (bench/results/h200/ctest.log): about
/// 20 ns per operand element made (normals drawn, quantized), 8 ns per
/// element dequantized for the reference (the checked rows of A and all of B)
/// and 0.06 ns per multiply-add of the reference; about 10 ns per element of D
/// for its download and the host checks; the kernel (step 01: 0.27 s at
/// 4096^3, the others at least 30 TFLOP/s); 5 ms of allocations, copies and
/// synchronizations. Measured once on the H200 (alone, not beside other
/// tests): 320 cases of seed 352588420875452385 took 62.5 s, estimated 52.1 s.
double estimated_seconds(const StepInfo& step, const SweepCase& c) {
  const double m = static_cast<double>(c.gemm.m), n = static_cast<double>(c.gemm.n), k = static_cast<double>(c.gemm.k);
  const double rows = static_cast<double>(checked_row_count(c.gemm.m, c.gemm.n, c.gemm.k));
  const double inputs = 20e-9 * (m + n) * k;
  const double reference = 8e-9 * (rows + n) * k + 0.06e-9 * rows * n * k;
  const double output = 10e-9 * m * n;
  const double kernel = (is_naive_step(step) ? 0.27 / 68.7e9 : 1.0 / 15e12) * m * n * k;
  return inputs + reference + output + kernel + 5e-3;
}

/// Cases per run: FP8GEMM_SWEEP_CASES (1 .. 100000), else kDefaultCaseCount;
/// nullopt for a value that is not such a number.
std::optional<int> parse_case_count(const char* text) {
  if (text == nullptr || *text == '\0') return kDefaultCaseCount;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1 || value > 100000) return std::nullopt;
  return static_cast<int>(value);
}

/// FP8GEMM_SWEEP_ONLY: a comma-separated list of case indices; an empty set
/// (run every case) for no text; nullopt for text that is not such a list.
std::optional<std::set<int>> parse_case_filter(const char* text) {
  std::set<int> only;
  if (text == nullptr || *text == '\0') return only;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long value = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || end == item.c_str() || *end != '\0' || value < 0 || value > 1000000) return std::nullopt;
    only.insert(static_cast<int>(value));
  }
  return only;
}

// -----------------------------------------------------------------------------
// The tally
// -----------------------------------------------------------------------------

enum class Outcome : uint8_t { kPass, kRefused, kWrong, kCrashed, kSkippedArchitecture, kNotRun };

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPass: return "pass";
    case Outcome::kRefused: return "refused";
    case Outcome::kWrong: return "wrong";
    case Outcome::kCrashed: return "crashed";
    case Outcome::kSkippedArchitecture: return "skipped (architecture)";
    case Outcome::kNotRun: return "not run";
  }
  return "unknown";
}

struct Tally {
  int pass = 0, refused = 0, wrong = 0, crashed = 0, skipped_architecture = 0, not_run = 0;

  void add(Outcome o) {
    switch (o) {
      case Outcome::kPass: ++pass; break;
      case Outcome::kRefused: ++refused; break;
      case Outcome::kWrong: ++wrong; break;
      case Outcome::kCrashed: ++crashed; break;
      case Outcome::kSkippedArchitecture: ++skipped_architecture; break;
      case Outcome::kNotRun: ++not_run; break;
    }
  }
  int total() const { return pass + refused + wrong + crashed + skipped_architecture + not_run; }
};

/// A case that did not pass, as reported.
struct NonPass {
  int index = 0;
  std::string name;
  ShapeClass shape_class = ShapeClass::kTiny;
  LayoutKind layout_kind = LayoutKind::kTight;
  Outcome outcome = Outcome::kWrong;
  std::string detail;
};

/// What the sweep found.
struct SweepReport {
  uint64_t seed = 0;
  int cases = 0;  ///< Cases tallied (those of the run's list that FP8GEMM_SWEEP_ONLY kept).
  Tally total;
  std::map<std::string, Tally> per_step;
  std::map<std::string, Tally> per_class;
  std::vector<NonPass> non_pass;
  double seconds = 0.0;
  double estimated_seconds = 0.0;
  std::string device;
};

/// "sweep: seed 42, 320 cases: 300 pass, 20 refused, 0 wrong, 0 crashed".
std::string tally_line(uint64_t seed, int cases, const Tally& t) {
  return "sweep: seed " + std::to_string(seed) + ", " + std::to_string(cases) + " cases: " + std::to_string(t.pass) +
         " pass, " + std::to_string(t.refused) + " refused, " + std::to_string(t.wrong) + " wrong, " +
         std::to_string(t.crashed) + " crashed";
}

std::string tally_json(const Tally& t) {
  std::ostringstream out;
  out << "{\"pass\": " << t.pass << ", \"refused\": " << t.refused << ", \"wrong\": " << t.wrong
      << ", \"crashed\": " << t.crashed << ", \"skipped_architecture\": " << t.skipped_architecture
      << ", \"not_run\": " << t.not_run << "}";
  return out.str();
}

/// The report as JSON (FP8GEMM_SWEEP_OUT), for bench/run_h200.sh to collect.
std::string report_json(const SweepReport& r) {
  std::ostringstream out;
  out << "{\n  \"seed\": " << r.seed << ",\n  \"seed_text\": " << json_string(std::to_string(r.seed))
      << ",\n  \"cases\": " << r.cases << ",\n  \"device\": " << json_string(r.device)
      << ",\n  \"seconds\": " << r.seconds << ",\n  \"estimated_seconds\": " << r.estimated_seconds
      << ",\n  \"tally\": " << tally_json(r.total)
      << ",\n  \"line\": " << json_string(tally_line(r.seed, r.cases, r.total));
  for (const auto* group : {&r.per_step, &r.per_class}) {
    out << ",\n  \"" << (group == &r.per_step ? "per_step" : "per_class") << "\": {";
    const char* sep = "\n";
    for (const auto& [name, tally] : *group) {
      out << sep << "    " << json_string(name) << ": " << tally_json(tally);
      sep = ",\n";
    }
    out << "\n  }";
  }
  out << ",\n  \"non_pass\": [";
  const char* sep = "\n";
  for (const NonPass& np : r.non_pass) {
    out << sep << "    {\"index\": " << np.index << ", \"case\": " << json_string(np.name)
        << ", \"class\": " << json_string(shape_class_name(np.shape_class))
        << ", \"layout\": " << json_string(layout_kind_name(np.layout_kind))
        << ", \"outcome\": " << json_string(outcome_name(np.outcome)) << ", \"detail\": " << json_string(np.detail)
        << "}";
    sep = ",\n";
  }
  out << (r.non_pass.empty() ? "]" : "\n  ]") << "\n}\n";
  return out.str();
}

std::string padded(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string tally_text(const Tally& t) {
  std::string text = std::to_string(t.total()) + " cases: " + std::to_string(t.pass) + " pass, " +
                     std::to_string(t.refused) + " refused, " + std::to_string(t.wrong) + " wrong, " +
                     std::to_string(t.crashed) + " crashed";
  if (t.skipped_architecture > 0) text += ", " + std::to_string(t.skipped_architecture) + " skipped (architecture)";
  if (t.not_run > 0) text += ", " + std::to_string(t.not_run) + " not run";
  return text;
}

// -----------------------------------------------------------------------------
// Running one case (GPU)
// -----------------------------------------------------------------------------

/// Pointers that are not null and aligned like the device's (256 bytes), for
/// checks of arguments on the host.
GemmBuffers host_check_buffers(const SweepCase& c) {
  GemmBuffers buffers;
  buffers.a = reinterpret_cast<const uint8_t*>(uintptr_t{1} << 20);
  buffers.b = reinterpret_cast<const uint8_t*>(uintptr_t{2} << 20);
  buffers.d = reinterpret_cast<void*>(uintptr_t{3} << 20);
  buffers.lda = c.layout.lda;
  buffers.ldb = c.layout.ldb;
  buffers.ldd = c.layout.ldd;
  return buffers;
}

/// Whether the CUDA context still works after an error: a non-sticky error
/// is cleared, a sticky one (a kernel fault) leaves every call failing.
bool cuda_context_alive(std::string* why) {
  (void)cudaGetLastError();
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) {
    void* probe = nullptr;
    e = cudaMalloc(&probe, 256);
    if (e == cudaSuccess) e = cudaFree(probe);
  }
  if (e == cudaSuccess) return true;
  *why = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  return false;
}

struct CaseResult {
  Outcome outcome = Outcome::kPass;
  std::string detail;
};

/// Runs one case as tests/test_steps_gpu.cu runs its cases and says how it
/// went. gtest failures raised on the way are collected, not reported: they
/// make the case wrong, and the sweep reports them with the case.
CaseResult run_case(const StepInfo& step, const SweepCase& c) {
  CaseResult result;
  ::testing::TestPartResultArray failures;
  std::string mismatch;
  try {
    const ::testing::ScopedFakeTestPartResultReporter collect(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    test_support::ReferencedProblem problem;
    problem.shape = {c.gemm.m, c.gemm.n, c.gemm.k, c.gemm.a_format, c.gemm.b_format};
    problem.a = std::make_shared<const QuantizedMatrix>(
        test_support::random_fp8_matrix(c.gemm.m, c.gemm.k, c.gemm.a_format, test_support::mix_seed(c.data_seed, 'A')));
    problem.b = std::make_shared<const QuantizedMatrix>(
        test_support::random_fp8_matrix(c.gemm.n, c.gemm.k, c.gemm.b_format, test_support::mix_seed(c.data_seed, 'B')));
    std::optional<test_support::OutputSnapshot> out;
    {
      const DeviceBuffer<uint8_t> a = test_support::upload_operand(*problem.a, c.layout.lda);
      const DeviceBuffer<uint8_t> b = test_support::upload_operand(*problem.b, c.layout.ldb);
      const test_support::DeviceOperands operands{a.get(), c.layout.lda, problem.a->scales[0],
                                                  b.get(), c.layout.ldb, problem.b->scales[0]};
      // A must-run case must run with the tight layout (test_steps_gpu.cu's
      // MustRunTest); padded off the step's alignment it may be refused.
      const bool must_run = c.layout_kind == LayoutKind::kTight && test_support::is_must_run(step, c.gemm);
      const test_support::Refusal refusal =
          must_run ? test_support::Refusal::kFailure : test_support::Refusal::kAllowed;
      test_support::run_step_checked(step, c.gemm, operands, c.layout.ldd, c.fast_accumulation, refusal, &out);
    }
    if (out) {
      // The reference only for a computed D (after the launch, not for a refusal).
      const std::vector<int64_t> rows =
          rows_to_check(c.gemm.m, c.gemm.n, c.gemm.k, test_support::mix_seed(c.data_seed, 'R'));
      problem.reference = reference_of_rows(*problem.a, *problem.b, rows);
      const ::testing::AssertionResult matches =
          test_support::matches_reference(*out, problem, accumulation_of(step, c.fast_accumulation));
      if (!matches) mismatch = matches.message();
    }
    if (failures.size() == 0 && mismatch.empty()) {
      result.outcome = out ? Outcome::kPass : Outcome::kRefused;
      if (!out) {
        result.detail = check_step_constraints(step, make_gemm_args(c.gemm, host_check_buffers(c), nullptr)).message;
      }
      return result;
    }
  } catch (const CudaError& e) {
    result.outcome = Outcome::kCrashed;
    result.detail = std::string("CUDA error: ") + e.what();
    return result;
  } catch (const std::exception& e) {
    result.outcome = Outcome::kCrashed;
    result.detail = std::string("exception: ") + e.what();
    return result;
  }
  result.outcome = Outcome::kWrong;
  for (int i = 0; i < failures.size(); ++i) {
    if (!result.detail.empty()) result.detail += "\n";
    result.detail += failures.GetTestPartResult(i).message();
  }
  if (!mismatch.empty()) result.detail += (result.detail.empty() ? "" : "\n") + mismatch;
  return result;
}

// -----------------------------------------------------------------------------
// The sweep (GPU)
// -----------------------------------------------------------------------------

TEST(Sweep, EveryCasePassesOrIsRefusedByName) {
  if (!test_support::require_gpu_or_skip()) return;
  test_support::record_run_seed();
  const std::optional<int> count = parse_case_count(std::getenv("FP8GEMM_SWEEP_CASES"));
  ASSERT_TRUE(count.has_value()) << "FP8GEMM_SWEEP_CASES must be a number of cases from 1 to 100000, got \""
                                 << std::getenv("FP8GEMM_SWEEP_CASES") << "\"";
  const std::optional<std::set<int>> only = parse_case_filter(std::getenv("FP8GEMM_SWEEP_ONLY"));
  ASSERT_TRUE(only.has_value()) << "FP8GEMM_SWEEP_ONLY must list case indices separated by commas, got \""
                                << std::getenv("FP8GEMM_SWEEP_ONLY") << "\"";
  const char* verbose_text = std::getenv("FP8GEMM_SWEEP_VERBOSE");
  const bool verbose = verbose_text != nullptr && *verbose_text != '\0' && std::string(verbose_text) != "0";

  std::string why;
  const int capability = cuda_compute_capability(&why);
  if (capability < 0) {
    if (test_support::gpu_required()) GTEST_FAIL() << why << " (" << test_support::kRequireGpuVariable << "=1)";
    GTEST_SKIP() << why;
  }
  cudaDeviceProp properties{};
  std::string device = "compute capability " + std::to_string(capability / 10) + "." + std::to_string(capability % 10);
  int device_index = 0;
  if (cudaGetDevice(&device_index) == cudaSuccess &&
      cudaGetDeviceProperties(&properties, device_index) == cudaSuccess) {
    device = std::string(properties.name) + ", " + device;
  }

  SweepReport report;
  report.seed = test_support::run_seed();
  report.device = device;
  const std::vector<StepInfo>& steps = registered_steps();
  ASSERT_FALSE(steps.empty()) << "no registered step";
  const std::vector<SweepCase> cases = sweep_cases(steps, report.seed, *count);
  std::printf("sweep: seed %llu, %d cases over %zu steps on %s (FP8GEMM_TEST_SEED=%llu replays them%s)\n",
              static_cast<unsigned long long>(report.seed), *count, steps.size(), device.c_str(),
              static_cast<unsigned long long>(report.seed),
              only->empty() ? "" : "; FP8GEMM_SWEEP_ONLY runs some of them");
  if (*count < 300) std::printf("sweep: FP8GEMM_SWEEP_CASES=%d: fewer than the 300 cases of a full run\n", *count);
  std::fflush(stdout);

  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  std::vector<std::pair<double, std::string>> slowest;
  bool context_dead = false;
  std::string death;
  for (const SweepCase& c : cases) {
    if (!only->empty() && only->count(c.index) == 0) continue;
    const StepInfo* step = find_step(c.step);
    ASSERT_NE(step, nullptr) << c.step;
    const std::string name = case_name(c);
    const std::string where = std::string(shape_class_name(c.shape_class)) + ", " + layout_kind_name(c.layout_kind);
    CaseResult result;
    double seconds = 0.0;
    if (step->required_compute_capability != 0 && step->required_compute_capability != capability) {
      result.outcome = Outcome::kSkippedArchitecture;
      result.detail = step->folder + " runs on compute capability " +
                      std::to_string(step->required_compute_capability / 10) + "." +
                      std::to_string(step->required_compute_capability % 10) + " only, this GPU is " + device;
    } else if (context_dead) {
      result.outcome = Outcome::kNotRun;
      result.detail = "the CUDA context died earlier (" + death + ")";
    } else {
      report.estimated_seconds += estimated_seconds(*step, c);
      if (verbose) {
        std::printf("sweep: #%d %s (%s) ...\n", c.index, name.c_str(), where.c_str());
        std::fflush(stdout);
      }
      const Clock::time_point case_start = Clock::now();
      result = run_case(*step, c);
      seconds = std::chrono::duration<double>(Clock::now() - case_start).count();
      slowest.emplace_back(seconds, name);
      if (result.outcome != Outcome::kPass && result.outcome != Outcome::kRefused && !cuda_context_alive(&death)) {
        context_dead = true;
        result.outcome = Outcome::kCrashed;
        result.detail += "\nthe CUDA context is dead after this case (" + death + "): the sweep stops here";
      }
    }
    report.total.add(result.outcome);
    report.per_step[c.step].add(result.outcome);
    report.per_class[shape_class_name(c.shape_class)].add(result.outcome);
    if (result.outcome != Outcome::kPass) {
      report.non_pass.push_back({c.index, name, c.shape_class, c.layout_kind, result.outcome, result.detail});
      // One line per case that did not pass (a wrong case's messages follow it).
      const size_t newline = result.detail.find('\n');
      const bool one_line = result.outcome == Outcome::kRefused || result.outcome == Outcome::kSkippedArchitecture ||
                            result.outcome == Outcome::kNotRun;
      std::printf("sweep: #%d %s (%s): %s: %s\n", c.index, name.c_str(), where.c_str(), outcome_name(result.outcome),
                  one_line ? result.detail.substr(0, newline).c_str() : result.detail.c_str());
      std::fflush(stdout);
    }
  }
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();

  // The tally, the breakdowns, the slowest cases.
  report.cases = report.total.total();
  std::printf("%s\n", tally_line(report.seed, report.cases, report.total).c_str());
  std::printf("sweep: %d skipped (architecture), %d not run; %.1f s (estimated %.1f s)\n",
              report.total.skipped_architecture, report.total.not_run, report.seconds, report.estimated_seconds);
  std::printf("sweep: per step\n");
  for (const auto& [folder, tally] : report.per_step) {
    std::printf("  %s %s\n", padded(folder, 30).c_str(), tally_text(tally).c_str());
  }
  std::printf("sweep: per shape class\n");
  for (const auto& [name, tally] : report.per_class) {
    std::printf("  %s %s\n", padded(name, 30).c_str(), tally_text(tally).c_str());
  }
  std::sort(slowest.begin(), slowest.end(), std::greater<>());
  std::printf("sweep: slowest cases:");
  for (size_t i = 0; i < std::min<size_t>(5, slowest.size()); ++i) {
    std::printf(" %s %.2f s;", slowest[i].second.c_str(), slowest[i].first);
  }
  std::printf("\n");
  std::fflush(stdout);

  ::testing::Test::RecordProperty("sweep_pass", report.total.pass);
  ::testing::Test::RecordProperty("sweep_refused", report.total.refused);
  ::testing::Test::RecordProperty("sweep_wrong", report.total.wrong);
  ::testing::Test::RecordProperty("sweep_crashed", report.total.crashed);
  if (const char* path = std::getenv("FP8GEMM_SWEEP_OUT"); path != nullptr && *path != '\0') {
    std::ofstream file(path);
    file << report_json(report);
    file.close();
    EXPECT_TRUE(file.good()) << "could not write the sweep's JSON to FP8GEMM_SWEEP_OUT=" << path;
  }

  std::string wrong_cases;
  for (const NonPass& np : report.non_pass) {
    if (np.outcome == Outcome::kWrong || np.outcome == Outcome::kCrashed || np.outcome == Outcome::kNotRun) {
      wrong_cases += "\n  #" + std::to_string(np.index) + " " + np.name + ": " + outcome_name(np.outcome);
    }
  }
  EXPECT_EQ(report.total.wrong, 0) << "cases computed wrongly or refused against the rules (FP8GEMM_TEST_SEED="
                                   << report.seed << "):" << wrong_cases;
  EXPECT_EQ(report.total.crashed, 0) << "cases that crashed (FP8GEMM_TEST_SEED=" << report.seed << "):" << wrong_cases;
  EXPECT_EQ(report.total.not_run, 0) << "cases not run after the CUDA context died";
}

// -----------------------------------------------------------------------------
// The draw and the tally, on the host (no GPU needed)
// -----------------------------------------------------------------------------

constexpr uint64_t kSeeds[] = {1, 2, 3, 20240601, 0x9E3779B97F4A7C15ull, 0xFFFFFFFFFFFFFFFFull};

// A step that accepts little, to see the draw follow a step's constraints.
StepInfo strict_step() {
  StepConstraints rules;
  rules.m_multiple = 64;
  rules.n_multiple = 128;
  rules.k_multiple = 128;
  rules.operand_alignment_bytes = 128;
  rules.formats = 1u << static_cast<int>(Fp8Format::kE4M3);
  rules.mixed_formats = false;
  rules.outputs = 1u << static_cast<int>(OutputType::kBF16);
  return make_step_info(98, "98_strict", "accepts little", nullptr, rules, Accumulation::kTensorCorePromoted);
}

TEST(SweepCases, AreAPureFunctionOfTheSeed) {
  for (uint64_t seed : kSeeds) {
    const std::vector<SweepCase> first = sweep_cases(registered_steps(), seed, kDefaultCaseCount);
    ASSERT_EQ(first.size(), static_cast<size_t>(kDefaultCaseCount));
    EXPECT_TRUE(first == sweep_cases(registered_steps(), seed, kDefaultCaseCount)) << "seed " << seed;
    // A shorter run is a prefix of a longer one, so a case keeps its index.
    const std::vector<SweepCase> shorter = sweep_cases(registered_steps(), seed, 57);
    EXPECT_TRUE(std::equal(shorter.begin(), shorter.end(), first.begin())) << "seed " << seed;
    for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i].index, static_cast<int>(i));
  }
  // Another seed, other cases.
  const std::vector<SweepCase> one = sweep_cases(registered_steps(), 1, kDefaultCaseCount);
  const std::vector<SweepCase> two = sweep_cases(registered_steps(), 2, kDefaultCaseCount);
  int same = 0;
  for (size_t i = 0; i < one.size(); ++i) same += same_gemm_shape(one[i].gemm, two[i].gemm) ? 1 : 0;
  EXPECT_LT(same, 20);
}

TEST(SweepCases, CoverEveryStepShapeClassFormatPairOutputAndLayout) {
  const std::vector<StepInfo>& steps = registered_steps();
  ASSERT_FALSE(steps.empty());
  for (uint64_t seed : kSeeds) {
    const std::vector<SweepCase> cases = sweep_cases(steps, seed, kDefaultCaseCount);
    std::map<std::string, int> per_step;
    std::set<ShapeClass> classes;
    std::set<std::pair<int, int>> format_pairs;
    std::set<OutputType> outputs;
    std::set<LayoutKind> layouts;
    std::set<std::pair<std::string, bool>> fast;
    bool past_65535_rows = false;
    for (const SweepCase& c : cases) {
      ++per_step[c.step];
      classes.insert(c.shape_class);
      format_pairs.insert({static_cast<int>(c.gemm.a_format), static_cast<int>(c.gemm.b_format)});
      outputs.insert(c.gemm.d_type);
      layouts.insert(c.layout_kind);
      fast.insert({c.step, c.fast_accumulation});
      past_65535_rows = past_65535_rows || c.gemm.m > 65535;
    }
    // Dealt in rounds: every step count / steps cases, give or take one.
    const int share = kDefaultCaseCount / static_cast<int>(steps.size());
    for (const StepInfo& step : steps) {
      EXPECT_GE(per_step[step.folder], share) << step.folder << ", seed " << seed;
      EXPECT_LE(per_step[step.folder], share + 1) << step.folder << ", seed " << seed;
      if (uses_tensor_cores(step)) {
        EXPECT_TRUE(fast.count({step.folder, true}) && fast.count({step.folder, false}))
            << step.folder << " should run with and without fast accumulation, seed " << seed;
      } else {
        EXPECT_FALSE(fast.count({step.folder, true})) << step.folder << ", seed " << seed;
      }
    }
    EXPECT_EQ(per_step.size(), steps.size()) << "seed " << seed;
    EXPECT_EQ(classes.size(), static_cast<size_t>(kNumShapeClasses)) << "seed " << seed;
    EXPECT_EQ(format_pairs.size(), static_cast<size_t>(kNumFp8Formats * kNumFp8Formats)) << "seed " << seed;
    EXPECT_EQ(outputs.size(), 2u) << "seed " << seed;
    EXPECT_EQ(layouts.size(), static_cast<size_t>(kNumLayoutKinds)) << "seed " << seed;
    EXPECT_TRUE(past_65535_rows) << "no case with M > 65535, seed " << seed;
  }
}

TEST(SweepCases, StayWithinTheirClassAndTheCaps) {
  for (uint64_t seed : kSeeds) {
    for (const SweepCase& c : sweep_cases(registered_steps(), seed, 1000)) {
      const StepInfo* step = find_step(c.step);
      ASSERT_NE(step, nullptr) << c.step;
      const GemmShape& g = c.gemm;
      const std::string name =
          case_name(c) + " (" + shape_class_name(c.shape_class) + "), seed " + std::to_string(seed);
      EXPECT_TRUE(within_caps(*step, g)) << name;
      EXPECT_LE((g.m + g.n) * g.k, kMaxOperandElements) << name;
      EXPECT_LE(g.m * g.n, kMaxOutputElements) << name;
      // checked_row_count() is what the check will compare.
      const int64_t rows = static_cast<int64_t>(rows_to_check(g.m, g.n, g.k, c.data_seed).size());
      EXPECT_EQ(rows, checked_row_count(g.m, g.n, g.k)) << name;
      EXPECT_LE(rows * g.n * g.k, kMaxReferenceMultiplyAdds) << name;
      if (is_naive_step(*step)) EXPECT_LE(g.m * g.n * g.k, kMaxNaiveMultiplyAdds) << name;
      // The class's ranges (the registered steps round nothing up: multiples of 1).
      int64_t lo[3] = {1, 1, 1}, hi[3] = {0, 0, 0};
      switch (c.shape_class) {
        case ShapeClass::kTiny: std::fill(hi, hi + 3, 16); break;
        case ShapeClass::kRagged: std::fill(hi, hi + 3, 1100); break;
        case ShapeClass::kAligned:
          std::fill(lo, lo + 3, 16);
          std::fill(hi, hi + 3, 2048);
          break;
        case ShapeClass::kDecode:
          hi[0] = 128;
          hi[1] = hi[2] = 7168;
          break;
        case ShapeClass::kTall:
          lo[0] = 1024;
          hi[0] = 70000;
          hi[1] = 64;
          hi[2] = 512;
          break;
        case ShapeClass::kLarge:
          std::fill(lo, lo + 3, 2048);
          std::fill(hi, hi + 3, 4096);
          break;
      }
      const int64_t sizes[3] = {g.m, g.n, g.k};
      for (int i = 0; i < 3; ++i) {
        EXPECT_GE(sizes[i], lo[i]) << name;
        EXPECT_LE(sizes[i], hi[i]) << name;
      }
      if (c.shape_class == ShapeClass::kAligned) {
        for (int64_t s : sizes) EXPECT_EQ(s % 16, 0) << name;
      }
    }
  }
}

TEST(SweepCases, GiveValidArgumentsThatTheStepsMostlyAccept) {
  std::map<std::string, std::pair<int, int>> accepted;  // per step: accepted, all
  for (uint64_t seed : kSeeds) {
    for (const SweepCase& c : sweep_cases(registered_steps(), seed, kDefaultCaseCount)) {
      const StepInfo* step = find_step(c.step);
      ASSERT_NE(step, nullptr) << c.step;
      const GemmArgs args = make_gemm_args(c.gemm, host_check_buffers(c), nullptr, c.fast_accumulation);
      const Status valid = validate_gemm_args(args);
      EXPECT_TRUE(valid.ok()) << case_name(c) << ": " << valid.message;
      // The layout is what its kind says.
      if (c.layout_kind == LayoutKind::kTight) {
        EXPECT_TRUE(c.layout.lda == c.gemm.k && c.layout.ldb == c.gemm.k && c.layout.ldd == c.gemm.n) << case_name(c);
      } else if (c.layout_kind == LayoutKind::kAlignedPadding) {
        EXPECT_TRUE(rows_aligned(c.layout, c.gemm.d_type, 16)) << case_name(c);
      }
      auto& [yes, all] = accepted[c.step];
      yes += check_step_constraints(*step, args).ok() ? 1 : 0;
      ++all;
    }
  }
  for (const auto& [folder, counts] : accepted) {
    const StepInfo* step = find_step(folder);
    const double share = static_cast<double>(counts.first) / counts.second;
    std::printf("[  SHARE   ] %s: %d of %d cases accepted by its constraints\n", folder.c_str(), counts.first,
                counts.second);
    // Most cases run; a step with constraints also sees some refused.
    EXPECT_GE(share, 0.75) << folder;
    const StepConstraints all_accepted;
    const StepConstraints& c = step->constraints;
    const bool has_rules = c.m_multiple > 1 || c.n_multiple > 1 || c.k_multiple > 1 || c.operand_alignment_bytes > 1 ||
                           c.formats != all_accepted.formats || !c.mixed_formats || c.outputs != all_accepted.outputs;
    if (has_rules) EXPECT_LT(counts.first, counts.second) << folder << " has constraints but no case breaks them";
  }
}

TEST(SweepCases, FollowTheConstraintsOfAStrictStep) {
  const StepInfo strict = strict_step();
  const std::vector<StepInfo> steps = {strict};
  int yes = 0, all = 0;
  for (uint64_t seed : kSeeds) {
    for (const SweepCase& c : sweep_cases(steps, seed, kDefaultCaseCount)) {
      const GemmArgs args = make_gemm_args(c.gemm, host_check_buffers(c), nullptr, c.fast_accumulation);
      EXPECT_TRUE(validate_gemm_args(args).ok()) << case_name(c);
      EXPECT_TRUE(within_caps(strict, c.gemm)) << case_name(c);
      yes += check_step_constraints(strict, args).ok() ? 1 : 0;
      ++all;
    }
  }
  std::printf("[  SHARE   ] 98_strict: %d of %d cases accepted by its constraints\n", yes, all);
  // Multiples 85 %, formats and output 90 % each, alignment about 6 of 7 of
  // the rest: well over half run, and some are refused.
  EXPECT_GE(yes, all / 2);
  EXPECT_LT(yes, all);
}

TEST(SweepCases, StayWithinTheTimeBudgetOfAnH200Run) {
  // The estimate of estimated_seconds() for a whole run: a few minutes at
  // most, about a minute and a half on average.
  double sum = 0.0, worst = 0.0, worst_case = 0.0;
  constexpr int kRuns = 40;
  for (int run = 0; run < kRuns; ++run) {
    double total = 0.0;
    for (const SweepCase& c : sweep_cases(registered_steps(), 1000 + run, kDefaultCaseCount)) {
      const double seconds = estimated_seconds(*find_step(c.step), c);
      total += seconds;
      worst_case = std::max(worst_case, seconds);
    }
    sum += total;
    worst = std::max(worst, total);
  }
  std::printf(
      "[ ESTIMATE ] %d cases on an H200 machine: %.1f s on average, %.1f s at most over %d seeds; the "
      "slowest case %.2f s\n",
      kDefaultCaseCount, sum / kRuns, worst, kRuns, worst_case);
  EXPECT_LE(sum / kRuns, 120.0);
  EXPECT_LE(worst, 180.0);
  EXPECT_LE(worst_case, 2.5);
}

TEST(SweepCases, ParseTheEnvironment) {
  EXPECT_EQ(parse_case_count(nullptr), kDefaultCaseCount);
  EXPECT_EQ(parse_case_count(""), kDefaultCaseCount);
  EXPECT_EQ(parse_case_count("1000"), 1000);
  EXPECT_FALSE(parse_case_count("0").has_value());
  EXPECT_FALSE(parse_case_count("12x").has_value());
  EXPECT_FALSE(parse_case_count("-5").has_value());
  EXPECT_TRUE(parse_case_filter(nullptr)->empty());
  EXPECT_EQ(*parse_case_filter("3,17,3"), (std::set<int>{3, 17}));
  EXPECT_FALSE(parse_case_filter("3,,4").has_value());
  EXPECT_FALSE(parse_case_filter("x").has_value());
}

TEST(SweepCases, TallyLineAndJson) {
  Tally t;
  for (Outcome o : {Outcome::kPass, Outcome::kPass, Outcome::kRefused, Outcome::kWrong, Outcome::kCrashed,
                    Outcome::kSkippedArchitecture, Outcome::kNotRun}) {
    t.add(o);
  }
  EXPECT_EQ(t.total(), 7);
  EXPECT_EQ(tally_line(42, 320, t), "sweep: seed 42, 320 cases: 2 pass, 1 refused, 1 wrong, 1 crashed");
  SweepReport r;
  r.seed = 0xFFFFFFFFFFFFFFFFull;
  r.cases = 7;
  r.total = t;
  r.per_step["01_naive"] = t;
  r.per_class["tiny"] = t;
  r.non_pass.push_back({3, "01_naive_1x1x1", ShapeClass::kTiny, LayoutKind::kTight, Outcome::kWrong,
                        "a \"quoted\"\\ message\nsecond line\t"});
  const std::string json = report_json(r);
  EXPECT_NE(json.find("\"seed\": 18446744073709551615,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"tally\": {\"pass\": 2, \"refused\": 1, \"wrong\": 1, \"crashed\": 1, "
                      "\"skipped_architecture\": 1, \"not_run\": 1}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"per_step\": {\n    \"01_naive\": {\"pass\": 2"), std::string::npos) << json;
  EXPECT_NE(json.find("\"detail\": \"a \\\"quoted\\\"\\\\ message\\nsecond line\\u0009\"}"), std::string::npos) << json;
  EXPECT_NE(json.find("\"line\": \"sweep: seed 18446744073709551615, 7 cases: 2 pass"), std::string::npos) << json;
}

}  // namespace
}  // namespace fp8gemm
