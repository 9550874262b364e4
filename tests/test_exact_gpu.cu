// Every registered step on problems whose exact product it must return bit for
// bit: no tolerance, every element of D compared, on top of the NaN poison and
// the guard band of every GPU test of a step (tests/support/step_test.h). Tests
// are named <step folder>_<M>x<N>x<K>[_<formats>][_fp32], as in
// tests/test_steps_gpu.cu.
//
// Why the product is exact (tests/support/exact_problem.h holds the code):
//
//   1. The values. Every operand value is v = c / 2 with c an integer of at
//      most three significant bits and |c| <= 16: 0, ±0.5, ±1, ..., ±3.5, ±4,
//      ±5, ±6, ±7, ±8. Three significant bits fit e5m2 (2 mantissa bits + the
//      implicit one) and e4m3, and 0.5 .. 8 lie between the smallest normal
//      and the largest value of all four formats (e4m3, e5m2, e4m3fnuz,
//      e5m2fnuz), so the codes hold the values exactly (checked below, on the
//      host, for every format). Drawn from the run's seed (support/seed.h).
//   2. The products. c_a/2 * c_b/2 = c_a c_b / 4: an integer number of
//      quarters, exact in any format with 8 significant bits (|c_a c_b| <= 256).
//   3. The sums. Whatever the order of summation (one after another, in a
//      tree, split over K), every partial sum is a sum of some of the K
//      products: an integer P of quarters with |P| <= S_mn = sum_k |c_a c_b|
//      <= ||c_a[m]||_1 * max|c_b|. An accumulator with p significant bits holds
//      every integer of magnitude <= 2^p exactly, so no addition rounds if
//      S_mn <= 2^p. The narrowest accumulator of each step (Accumulation):
//        - kFp32 (steps 01-04): FP32, p = 24. Operands: A and B dense with
//          |c| <= 16, so S_mn <= 256 K <= 2^24 for K <= 65536 (the cases go
//          up to K = 16384).
//        - kTensorCorePromoted (steps 05-06 by default): Hopper's FP8 wgmma
//          sums each block of 128 of K inside the tensor core with about 14
//          significant bits (DeepSeek-V3's report; docs/tolerances.md models
//          it as u_tc = 2^-13), then adds the block into FP32. Required here:
//          any 128 products sum to at most 2^12 (exact with 12 significant
//          bits: two bits of margin below the model, whatever the tensor
//          core's alignment and truncation), bounded as
//          min(K, 128) * max|c_a| * max|c_b| <= 128 * 8 * 4 = 2^12 with
//          |c_a| <= 8 and |c_b| <= 4 (|v_a| <= 4, |v_b| <= 2), for any 128 of
//          the products in any order; and S_mn <= 32 K <= 2^24 for the FP32
//          sum of the blocks.
//        - kTensorCoreFast (fast_accumulation): the tensor core sums all of K,
//          so S_mn <= 2^12 for the whole row: B as above (|c_b| <= 4), and
//          each row of A holds about 128 nonzero values |c_a| <= 8 spread over
//          K, its sum of |c_a| capped at 2^12 / 4 = 1024.
//      Measured on an H200 (steps 05 and 06, 64 x 2112 x 7168, FP32 out, by
//      a probe outside the suite): with fast accumulation, every element
//      whose exact sum exceeds 2^13 quarters came out wrong and every other
//      one exact, so 2^12 keeps a factor of 2; with promotion, every element
//      was exact, the FP32 steps' operands included.
//      The bound is recomputed from the operands of every case and asserted
//      before the launch (exactness_bound_holds). Half the rows of each
//      operand hold no negative value: where two meet, the sum grows with K
//      instead of cancelling (2^16 to 2^19 at K = 7168), so the tests also
//      catch an accumulator narrower than the step's: an FP32 step summing in
//      BF16 or FP16, a tensor-core step that skips the promotion (simulated
//      below, on the host).
//   4. The scales are 2^e_a and 2^e_b, e_a, e_b in [-3, 3]: exact to
//      multiply. So y = P * 2^(e_a + e_b - 2) exactly in FP32 (|P| < 2^24, far
//      from FP32's range limits), and D must equal it bit for bit for FP32
//      output, and equal it rounded to BF16 (8 significant bits, to nearest,
//      ties to even; computed on the host in integer arithmetic, independently
//      of the project's converters) for BF16 output. A zero of either sign
//      matches an exact zero. The sums reach thousands of quarters, so the
//      BF16 rounding drops bits, ties included.
//
// A step whose constraints refuse a case must refuse it with kNotSupported and
// the message of check_step_constraints (and, for one of its must-run cases,
// that refusal is a failure). The host computes the exact product of every
// element in integers, so the shapes stop short of 4097^3.
//
// Without a usable GPU every test of a step skips, saying why; with
// FP8GEMM_REQUIRE_GPU=1 it fails instead. A step whose required compute
// capability this GPU lacks is skipped in both modes. The tests of the
// ExactProblemOnTheHost suite need no GPU: they check the claims above.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/api/gemm.h"
#include "common/api/registry.h"
#include "common/device/output.h"
#include "common/fp8/fp8.h"
#include "support/device_matrices.h"
#include "support/exact_problem.h"
#include "support/random_problem.h"
#include "support/step_test.h"

namespace fp8gemm {
namespace {

using test_support::every_step_with;
using test_support::ExactProblem;
using test_support::IntegerOperand;
using test_support::Layout;
using test_support::OutputSnapshot;
using test_support::ProblemShape;
using test_support::Refusal;
using test_support::step_case_name;
using test_support::StepCase;
using test_support::StepTest;

constexpr Fp8Format kE4M3 = Fp8Format::kE4M3;
constexpr Fp8Format kE5M2 = Fp8Format::kE5M2;
constexpr Fp8Format kE4M3Fnuz = Fp8Format::kE4M3Fnuz;
constexpr Fp8Format kE5M2Fnuz = Fp8Format::kE5M2Fnuz;
constexpr OutputType kBF16 = OutputType::kBF16;
constexpr OutputType kFP32 = OutputType::kFP32;
constexpr Accumulation kAccumulations[] = {Accumulation::kFp32, Accumulation::kTensorCorePromoted,
                                           Accumulation::kTensorCoreFast};

// -----------------------------------------------------------------------------
// The cases
// -----------------------------------------------------------------------------

GemmShape gemm(int64_t m, int64_t n, int64_t k, OutputType d = kBF16, Fp8Format a = kE4M3, Fp8Format b = kE4M3) {
  return GemmShape{m, n, k, a, b, d};
}

// Squares, ragged shapes, decode shapes, other formats; tight leading dimensions.
std::vector<GemmShape> exact_cases() {
  std::vector<GemmShape> cases;
  for (int64_t s : {128, 256, 1024}) {
    cases.push_back(gemm(s, s, s, kBF16));
    cases.push_back(gemm(s, s, s, kFP32));
  }
  // Each of 1, 17, 255, 1000, 1008, 4097 in the M, N and K place (cycled
  // forwards and backwards) and as cubes but 4097^3 (69 G multiply-adds for
  // the host's exact product), with both output types.
  const int64_t kRagged[][3] = {
      {1, 1, 1},       {17, 17, 17},      {255, 255, 255},    {1000, 1000, 1000}, {1008, 1008, 1008}, {1, 17, 255},
      {17, 255, 1000}, {255, 1000, 1008}, {1000, 1008, 4097}, {1008, 4097, 1},    {4097, 1, 17},      {17, 1, 4097},
      {255, 17, 1},    {1000, 255, 17},   {1008, 1000, 255},  {4097, 1008, 1000}, {1, 4097, 1008},
  };
  for (const auto& s : kRagged) {
    cases.push_back(gemm(s[0], s[1], s[2], kBF16));
    cases.push_back(gemm(s[0], s[1], s[2], kFP32));
  }
  // 35 rows of tiles by 3 columns (128 x 128): on a GPU of 132 SMs (66
  // clusters of two) step 12 runs them with each cluster's tiles one above
  // the other, sharing B (54 cluster tiles, one round, where side by side
  // takes 70, two rounds), and the last cluster's second tile lies past M.
  // N = 300: D's rows off 16-byte boundaries (BF16); 304: through the TMA,
  // where step 12 takes its 128 x 112 tile instead (3 columns of it, also
  // one round: 112 columns a round for 128), its last tile 80 columns wide.
  cases.push_back(gemm(4400, 300, 256, kBF16));
  cases.push_back(gemm(4400, 304, 256, kBF16));
  cases.push_back(gemm(4400, 300, 256, kFP32));
  // Two rows of tiles by 67 columns of 128 (66 clusters: two rounds either
  // way), or one cluster tile of 256 rows by 34 columns of 256: one round,
  // so step 12 takes its 128 x 256 tile (the 128 x 112 tile, for which the
  // case was added, would take two), whose last column of tiles holds 56
  // columns of D, its second half wholly past N.
  cases.push_back(gemm(255, 8504, 300, kBF16));
  // Decode: few rows against a large weight, K = 7168.
  for (int64_t m : {1, 2, 4, 8, 16, 32, 64, 128}) cases.push_back(gemm(m, 2112, 7168, kBF16));
  cases.push_back(gemm(1, 2112, 7168, kFP32));
  cases.push_back(gemm(64, 2112, 7168, kFP32));
  // e5m2 and mixed formats, then the FNUZ formats (which the Hopper steps refuse).
  const Fp8Format kOtherFormats[][2] = {{kE5M2, kE5M2}, {kE4M3, kE5M2}, {kE5M2, kE4M3}};
  for (const auto& ab : kOtherFormats) {
    cases.push_back(gemm(256, 512, 1024, kBF16, ab[0], ab[1]));
    cases.push_back(gemm(255, 1000, 1008, kFP32, ab[0], ab[1]));
  }
  cases.push_back(gemm(255, 1000, 1008, kFP32, kE4M3Fnuz, kE4M3Fnuz));
  cases.push_back(gemm(255, 1000, 1008, kFP32, kE5M2Fnuz, kE5M2Fnuz));
  cases.push_back(gemm(255, 1000, 1008, kBF16, kE4M3Fnuz, kE5M2Fnuz));
  cases.push_back(gemm(255, 1000, 1008, kFP32, kE4M3, kE4M3Fnuz));
  return cases;
}

// Cases run with leading dimensions larger than the matrices (padding holds NaN codes).
std::vector<GemmShape> exact_padded_cases() {
  return {gemm(17, 255, 1000, kBF16), gemm(17, 255, 1000, kFP32), gemm(256, 512, 1024, kBF16),
          gemm(255, 1000, 1008, kFP32, kE5M2, kE4M3)};
}

// Cases run with GemmArgs::fast_accumulation (sparse A: the whole K is summed in the tensor core).
// 1793 x 1056 x 1000 takes step 12's 128 x 256 tile of fast accumulation (1 round of 40 clusters
// against 2 of 128 x 128): its last row of tiles is one row deep and that tile's cluster partner
// (its clusters stand along M) lies past M; its last column of tiles is 32 columns wide, three of
// its four BF16 boxes wholly past N. 4400 x 300 x 256 takes the 128 x 128 tile with its clusters
// along M (see exact_cases); 255 x 8504 x 300 its 128 x 112 tile.
std::vector<GemmShape> exact_fast_cases() {
  return {gemm(64, 2112, 7168, kFP32),  gemm(64, 2112, 7168, kBF16),   gemm(255, 1000, 1008, kFP32),
          gemm(128, 256, 16384, kFP32), gemm(1793, 1056, 1000, kBF16), gemm(4400, 300, 256, kBF16),
          gemm(255, 8504, 300, kBF16)};
}

// -----------------------------------------------------------------------------
// Running one case
// -----------------------------------------------------------------------------

void run_exact(const StepInfo& step, const GemmShape& c, const Layout& layout, bool fast_accumulation) {
  const Accumulation accumulation = accumulation_of(step, fast_accumulation);
  const auto problem = test_support::exact_problem(ProblemShape{c.m, c.n, c.k, c.a_format, c.b_format}, accumulation);
  ASSERT_TRUE(test_support::exactness_bound_holds(*problem->a_values, *problem->b_values, accumulation));
  const DeviceBuffer<uint8_t> a = test_support::upload_operand(problem->a, layout.lda);
  const DeviceBuffer<uint8_t> b = test_support::upload_operand(problem->b, layout.ldb);
  const test_support::DeviceOperands operands{a.get(), layout.lda, problem->a.scales[0],
                                              b.get(), layout.ldb, problem->b.scales[0]};
  const Refusal refusal = test_support::is_must_run(step, c) ? Refusal::kFailure : Refusal::kAllowed;
  std::optional<OutputSnapshot> out;
  test_support::run_step_checked(step, c, operands, layout.ldd, fast_accumulation, refusal, &out);
  if (!out) return;  // refused as allowed, or failed (reported)
  EXPECT_TRUE(test_support::equals_exact_product(*out, *problem));
}

// -----------------------------------------------------------------------------
// The tests of the steps
// -----------------------------------------------------------------------------

class ExactTest : public StepTest {};

TEST_P(ExactTest, EqualsTheExactProductBitForBit) {
  const StepCase& c = GetParam();
  run_exact(c.step, c.gemm, test_support::tight_layout(c.gemm), /*fast_accumulation=*/false);
}

INSTANTIATE_TEST_SUITE_P(EveryStep, ExactTest, ::testing::ValuesIn(every_step_with(exact_cases())), step_case_name);

class ExactPaddedLayoutTest : public StepTest {};

TEST_P(ExactPaddedLayoutTest, EqualsTheExactProductBitForBit) {
  const StepCase& c = GetParam();
  run_exact(c.step, c.gemm, test_support::padded_layout(c.gemm), /*fast_accumulation=*/false);
}

INSTANTIATE_TEST_SUITE_P(EveryStep, ExactPaddedLayoutTest, ::testing::ValuesIn(every_step_with(exact_padded_cases())),
                         [](const ::testing::TestParamInfo<StepCase>& info) {
                           return step_case_name(info) +
                                  test_support::layout_suffix(test_support::padded_layout(info.param.gemm));
                         });

// A and B at pointers off every alignment: each operand starts `offset` bytes
// into an allocation that ends with its last row's last byte, the bytes
// before it NaN codes. A step that takes rows anywhere must run (its copy to
// aligned rows reads around each row's bytes, and must neither keep a
// neighbour's byte nor read outside the operand: compute-sanitizer memcheck
// sees a read past the allocation's end); a step that needs aligned rows
// must refuse.
class ExactOffsetOperandsTest : public StepTest {};

TEST_P(ExactOffsetOperandsTest, EqualsTheExactProductBitForBit) {
  const StepCase& c = GetParam();
  const Layout layout = test_support::tight_layout(c.gemm);
  const Accumulation accumulation = accumulation_of(c.step, /*fast_accumulation=*/false);
  const auto problem =
      test_support::exact_problem(ProblemShape{c.gemm.m, c.gemm.n, c.gemm.k, c.gemm.a_format, c.gemm.b_format},
                                  accumulation);
  constexpr int64_t kOffsetA = 3, kOffsetB = 13;  // odd, and different: every row's shift differs
  const DeviceBuffer<uint8_t> a = test_support::upload_operand_at(problem->a, layout.lda, kOffsetA);
  const DeviceBuffer<uint8_t> b = test_support::upload_operand_at(problem->b, layout.ldb, kOffsetB);
  const test_support::DeviceOperands operands{a.get() + kOffsetA, layout.lda, problem->a.scales[0],
                                              b.get() + kOffsetB, layout.ldb, problem->b.scales[0]};
  const bool rows_anywhere = c.step.constraints.operand_alignment_bytes <= 1;
  std::optional<OutputSnapshot> out;
  test_support::run_step_checked(c.step, c.gemm, operands, layout.ldd, /*fast_accumulation=*/false,
                                 rows_anywhere ? Refusal::kFailure : Refusal::kAllowed, &out);
  if (!out) return;  // refused as allowed, or failed (reported)
  EXPECT_TRUE(test_support::equals_exact_product(*out, *problem));
}

// K = 1000, 1008 and 4097: each row starts 8, 0 and 1 bytes further past a
// 16-byte boundary than the row before (modulo 16), so the rows' shifts take
// two values, one, and all sixteen; K = 1000 and 4097 end in a partial chunk.
std::vector<GemmShape> exact_offset_cases() {
  return {gemm(17, 255, 1000, kBF16), gemm(255, 1000, 1008, kFP32), gemm(33, 129, 4097, kBF16)};
}

INSTANTIATE_TEST_SUITE_P(EveryStep, ExactOffsetOperandsTest, ::testing::ValuesIn(every_step_with(exact_offset_cases())),
                         step_case_name);

class ExactFastAccumulationTest : public StepTest {};

TEST_P(ExactFastAccumulationTest, EqualsTheExactProductBitForBit) {
  const StepCase& c = GetParam();
  run_exact(c.step, c.gemm, test_support::tight_layout(c.gemm), /*fast_accumulation=*/true);
}

INSTANTIATE_TEST_SUITE_P(EveryStep, ExactFastAccumulationTest, ::testing::ValuesIn(every_step_with(exact_fast_cases())),
                         step_case_name);

// -----------------------------------------------------------------------------
// The claims of the derivation, on the host (no GPU)
// -----------------------------------------------------------------------------

// Every value an exact operand may hold (c = -16..16 of at most three significant bits) survives the
// codes of every format, and encode_exact_operand gives those codes and a power-of-two scale.
TEST(ExactProblemOnTheHost, EveryFormatHoldsEveryValueExactly) {
  IntegerOperand op;
  for (int c = -16; c <= 16; ++c) {
    int magnitude = std::abs(c);
    while (magnitude > 0 && magnitude % 2 == 0) magnitude /= 2;
    if (magnitude <= 7) op.values.push_back(static_cast<int16_t>(c));  // odd part < 8: <= 3 significant bits
  }
  op.rows = 1;
  op.cols = static_cast<int64_t>(op.values.size());
  op.scale_exponent = -3;
  for (int f = 0; f < kNumFp8Formats; ++f) {
    const QuantizedMatrix q = test_support::encode_exact_operand(op, Fp8Format(f));
    ASSERT_EQ(q.scales.size(), 1u);
    EXPECT_EQ(q.scales[0], 0.125f);
    for (size_t i = 0; i < op.values.size(); ++i) {
      EXPECT_EQ(fp8_to_float(q.codes[i], Fp8Format(f)), 0.5f * op.values[i])
          << fp8_name(Fp8Format(f)) << ", c = " << op.values[i];
    }
  }
}

// Every case of this file, with the operands of each accumulation: the bound holds.
TEST(ExactProblemOnTheHost, EveryCaseKeepsEveryPartialSumExact) {
  std::vector<GemmShape> all = exact_cases();
  for (const auto& more : {exact_padded_cases(), exact_fast_cases()}) all.insert(all.end(), more.begin(), more.end());
  for (const GemmShape& c : all) {
    for (Accumulation accumulation : kAccumulations) {
      const auto a = test_support::exact_operand('A', c.m, c.k, accumulation);
      const auto b = test_support::exact_operand('B', c.n, c.k, accumulation);
      EXPECT_TRUE(test_support::exactness_bound_holds(*a, *b, accumulation));
      EXPECT_GE(a->scale_exponent, -3);
      EXPECT_LE(a->scale_exponent, 3);
    }
  }
}

// The bound check refuses operands that would round: the wide operands of FP32
// steps in a tensor core, and a K too long for FP32.
TEST(ExactProblemOnTheHost, TheBoundRefusesOperandsThatWouldRound) {
  const auto a = test_support::exact_operand('A', 17, 1000, Accumulation::kFp32);
  const auto b = test_support::exact_operand('B', 255, 1000, Accumulation::kFp32);
  EXPECT_TRUE(test_support::exactness_bound_holds(*a, *b, Accumulation::kFp32));
  EXPECT_FALSE(test_support::exactness_bound_holds(*a, *b, Accumulation::kTensorCorePromoted));
  EXPECT_FALSE(test_support::exactness_bound_holds(*a, *b, Accumulation::kTensorCoreFast));
  IntegerOperand long_a = *a, long_b = *b;
  long_a.cols = long_b.cols = 70000;
  long_a.max_row_l1 = 70000 * 16;  // what a dense row of |c| = 16 would reach
  EXPECT_FALSE(test_support::exactness_bound_holds(long_a, long_b, Accumulation::kFp32));
}

// Round to nearest even on 8 significant bits: the ties go to the even neighbour.
TEST(ExactProblemOnTheHost, RoundsToBf16NearestEven) {
  const int64_t kCases[][2] = {{0, 0},       {255, 255},   {256, 256},     {257, 256},        {258, 258},
                               {259, 260},   {513, 512},   {514, 512},     {515, 516},        {518, 520},
                               {-259, -260}, {-257, -256}, {65535, 65536}, {1 << 20, 1 << 20}};
  for (const auto& c : kCases) EXPECT_EQ(test_support::round_to_bf16_significand(c[0]), c[1]) << c[0];
}

// The integer rounding agrees with the project's FP32 -> BF16 conversion on every
// integer of magnitude below 2^21 (an independent check of both).
TEST(ExactProblemOnTheHost, Bf16RoundingAgreesWithTheOutputConversion) {
  int64_t mismatches = 0;
  for (int64_t x = -(int64_t{1} << 21); x < (int64_t{1} << 21); ++x) {
    const float converted = bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(x)));
    if (static_cast<double>(converted) != static_cast<double>(test_support::round_to_bf16_significand(x))) {
      ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// The exact product is the FP64 product of the dequantized codes, and
// exact_output is it for FP32 output.
TEST(ExactProblemOnTheHost, ExactProductIsTheProductOfTheDequantizedCodes) {
  for (Accumulation accumulation : kAccumulations) {
    const auto p = test_support::exact_problem(ProblemShape{17, 255, 1000, kE5M2, kE4M3Fnuz}, accumulation);
    int64_t mismatches = 0;
    for (int64_t i = 0; i < 17; ++i) {
      for (int64_t j = 0; j < 255; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < 1000; ++k) {
          sum += static_cast<double>(fp8_to_float(p->a.codes[static_cast<size_t>(i * 1000 + k)], kE5M2)) *
                 fp8_to_float(p->b.codes[static_cast<size_t>(j * 1000 + k)], kE4M3Fnuz);
        }
        sum *= static_cast<double>(p->a.scales[0]) * p->b.scales[0];
        if (sum != static_cast<double>(test_support::exact_output(*p, i, j, kFP32))) ++mismatches;
      }
    }
    EXPECT_EQ(mismatches, 0) << accumulation_name(accumulation);
  }
}

// x rounded to `bits` significant bits: to nearest even, or towards zero.
double round_to_bits(double x, int bits, bool truncate) {
  if (x == 0) return 0;
  int exponent = 0;
  std::frexp(x, &exponent);
  const double unit = std::ldexp(1.0, exponent - bits);
  const double q = x / unit;
  return (truncate ? std::trunc(q) : std::nearbyint(q)) * unit;
}

// Sums row i of A times row j of B as a kernel would: products in blocks of
// `block` (0: all of K), each block summed with partial sums rounded to
// `block_bits` significant bits (truncated, as a tensor core may), the blocks
// added with partial sums rounded to `total_bits` bits (to nearest even).
double simulated_sum(const IntegerOperand& a, const IntegerOperand& b, int64_t i, int64_t j, int64_t block,
                     int block_bits, int total_bits) {
  const int64_t k = a.cols;
  const int64_t step = block == 0 ? k : block;
  double total = 0;
  for (int64_t start = 0; start < k; start += step) {
    double partial = 0;
    for (int64_t kk = start; kk < std::min(k, start + step); ++kk) {
      const double product =
          double(a.values[static_cast<size_t>(i * k + kk)]) * b.values[static_cast<size_t>(j * k + kk)];
      partial = round_to_bits(partial + product, block_bits, /*truncate=*/true);
    }
    total = round_to_bits(total + partial, total_bits, /*truncate=*/false);
  }
  return total;
}

// Counts the elements of a 16 x 64 corner of A B^T (K = 7168) that the
// simulated accumulator gets wrong, on the operands made for `operands_for`.
int64_t simulated_mismatches(Accumulation operands_for, int64_t block, int block_bits, int total_bits) {
  const int64_t m = 16, n = 64, k = 7168;
  const auto a = test_support::exact_operand('A', m, k, operands_for);
  const auto b = test_support::exact_operand('B', n, k, operands_for);
  int64_t wrong = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double exact = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        exact += double(a->values[static_cast<size_t>(i * k + kk)]) * b->values[static_cast<size_t>(j * k + kk)];
      }
      if (simulated_sum(*a, *b, i, j, block, block_bits, total_bits) != exact) ++wrong;
    }
  }
  return wrong;
}

// The operands of each accumulation are exact in a simulation of it (the
// tensor core with 12 significant bits, truncating: two fewer than the
// model's 14), and not in a narrower one: a step that summed in BF16 or FP16
// instead of FP32, or a tensor-core step that skipped the promotion (14 bits
// over all of K), would fail the tests.
TEST(ExactProblemOnTheHost, EachAccumulatorIsExactOnItsOperandsAndNarrowerOnesAreNot) {
  EXPECT_EQ(simulated_mismatches(Accumulation::kFp32, 0, 24, 24), 0);
  EXPECT_EQ(simulated_mismatches(Accumulation::kTensorCorePromoted, 128, 12, 24), 0);
  EXPECT_EQ(simulated_mismatches(Accumulation::kTensorCoreFast, 0, 12, 24), 0);
  EXPECT_GT(simulated_mismatches(Accumulation::kFp32, 0, 8, 8), 0);                  // BF16 accumulator
  EXPECT_GT(simulated_mismatches(Accumulation::kFp32, 0, 11, 11), 0);                // FP16 accumulator
  EXPECT_GT(simulated_mismatches(Accumulation::kTensorCorePromoted, 0, 14, 24), 0);  // no promotion
}

}  // namespace
}  // namespace fp8gemm
