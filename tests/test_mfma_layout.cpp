// Specification of common/cdna/mfma_layout.h: the lane layouts of the two FP8 MFMA
// instructions that the AMD kernel of step 05 uses, checked on the CPU.
//
// No AMD GPU is needed. A 64-lane wavefront is simulated: each lane's
// registers are filled the way the kernel fills them (through the layout
// functions), and a model of each instruction, transcribed from AMD's ISA
// guides in the other direction (from a matrix element to the lane, VGPR and
// byte that hold it), computes D. D is read back through the layout functions
// and compared with a reference product in double precision.
#include <gtest/gtest.h>

#include "support/seed.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "common/cdna/mfma_layout.h"
#include "common/fp8/fp8.h"

namespace fp8gemm {
namespace mfma {
// Lets EXPECT_EQ print a position as (row, col).
std::ostream& operator<<(std::ostream& os, MatrixIndex e) { return os << "(" << e.row << ", " << e.col << ")"; }
}  // namespace mfma

namespace {

using mfma::kWaveLanes;
using mfma::MatrixIndex;
using Cdna3 = mfma::Mfma16x16x32Fp8;
using Cdna4 = mfma::Mfma16x16x128F8f6f4;

// ---------------------------------------------------------------------------
// The wavefront's registers
// ---------------------------------------------------------------------------

// One operand (A or B) as the hardware holds it: up to 8 VGPRs of 32 bits per
// lane; byte b of a lane's operand is bits 8 * (b % 4) ... of VGPR b / 4.
struct WaveOperand {
  uint32_t vgpr[kWaveLanes][8] = {};

  uint8_t byte(int lane, int vgpr_index, int byte_in_vgpr) const {
    return static_cast<uint8_t>(vgpr[lane][vgpr_index] >> (8 * byte_in_vgpr));
  }
  void set_operand_byte(int lane, int byte, uint8_t value) {
    uint32_t& word = vgpr[lane][byte / 4];
    word = (word & ~(0xFFu << (8 * (byte % 4)))) | (uint32_t{value} << (8 * (byte % 4)));
  }
};

// The accumulators: 4 VGPRs of FP32 per lane (C on the way in, D on the way out).
struct WaveAccumulator {
  float vgpr[kWaveLanes][4] = {};
};

// A 16 x K operand tile in plain row-major FP8 codes, for A (M x K) and for B
// stored as the GEMM stores it (N x K, K contiguous).
struct Tile {
  int rows = 0, cols = 0;
  std::vector<uint8_t> codes;
  uint8_t at(int r, int c) const { return codes[static_cast<size_t>(r) * cols + c]; }
};

// ---------------------------------------------------------------------------
// The instructions, from the ISA guides (element -> lane, VGPR, byte)
// ---------------------------------------------------------------------------

// v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8}, CDNA3 ISA guide chapter 7 (as printed
// by AMD's Matrix Instruction Calculator for CDNA3):
//   A[i][k] in lane 16 * (k / 8) + i, VGPR (k / 4) % 2, byte k % 4;
//   B[k][j] in lane 16 * (k / 8) + j, same VGPR and byte;
//   C/D[i][j] in lane 16 * (i / 4) + j, VGPR i % 4.
// D = C + A * B, products exact, the sum rounded once to FP32 (the model the
// test needs: with integer data every order of summation is exact).
void execute_mfma_16x16x32_fp8(const WaveOperand& a, Fp8Format format_a, const WaveOperand& b, Fp8Format format_b,
                               WaveAccumulator& cd) {
  WaveAccumulator d;
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) {
      double sum = cd.vgpr[16 * (i / 4) + j][i % 4];
      for (int k = 0; k < 32; ++k) {
        const uint8_t a_code = a.byte(16 * (k / 8) + i, (k / 4) % 2, k % 4);
        const uint8_t b_code = b.byte(16 * (k / 8) + j, (k / 4) % 2, k % 4);
        sum += double(fp8_to_float(a_code, format_a)) * double(fp8_to_float(b_code, format_b));
      }
      d.vgpr[16 * (i / 4) + j][i % 4] = static_cast<float>(sum);
    }
  }
  cd = d;
}

// The CBSZ/BLGP format codes of the CDNA4 ISA guide (section 7.1): 0 = FP8
// E4M3, 1 = BF8 E5M2 (both OCP); 2-4 are the FP6/FP4 formats, not modelled.
Fp8Format f8f6f4_format(int code) {
  EXPECT_TRUE(code == 0 || code == 1) << "format code " << code << " is not an FP8 format";
  return code == 0 ? Fp8Format::kE4M3 : Fp8Format::kE5M2;
}

// v_mfma_f32_16x16x128_f8f6f4 with FP8 operands (CDNA4; sources in
// common/cdna/mfma_layout.h): two 16x16x64 halves, VGPRs 0-3 then 4-7;
//   A[i][k] in lane i + 16 * ((k % 64) / 16), VGPR 4 * (k / 64) + (k % 16) / 4,
//   byte k % 4; B[k][j] likewise with j; C/D as for every 16x16 MFMA.
void execute_mfma_16x16x128_f8f6f4(const WaveOperand& a, int cbsz, const WaveOperand& b, int blgp,
                                   WaveAccumulator& cd) {
  const Fp8Format format_a = f8f6f4_format(cbsz);
  const Fp8Format format_b = f8f6f4_format(blgp);
  WaveAccumulator d;
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) {
      double sum = cd.vgpr[16 * (i / 4) + j][i % 4];
      for (int k = 0; k < 128; ++k) {
        const int vgpr = 4 * (k / 64) + (k % 16) / 4;
        const uint8_t a_code = a.byte(i + 16 * ((k % 64) / 16), vgpr, k % 4);
        const uint8_t b_code = b.byte(j + 16 * ((k % 64) / 16), vgpr, k % 4);
        sum += double(fp8_to_float(a_code, format_a)) * double(fp8_to_float(b_code, format_b));
      }
      d.vgpr[16 * (i / 4) + j][i % 4] = static_cast<float>(sum);
    }
  }
  cd = d;
}

// ---------------------------------------------------------------------------
// Filling and reading registers the way the kernel does
// ---------------------------------------------------------------------------

// A's 16 rows x Layout::kK columns starting at (row0, k0) of `a`, into the lanes.
template <typename Layout>
WaveOperand load_a(const Tile& a, int row0, int k0) {
  WaveOperand op;
  for (int lane = 0; lane < kWaveLanes; ++lane) {
    for (int byte = 0; byte < Layout::kOperandBytes; ++byte) {
      const MatrixIndex e = Layout::a_element_of(lane, byte);  // (i, k)
      op.set_operand_byte(lane, byte, a.at(row0 + e.row, k0 + e.col));
    }
  }
  return op;
}

// The instruction's B (K x 16) from the GEMM's N x K operand: B[k][j] = b(col0 + j, k0 + k).
template <typename Layout>
WaveOperand load_b(const Tile& b, int col0, int k0) {
  WaveOperand op;
  for (int lane = 0; lane < kWaveLanes; ++lane) {
    for (int byte = 0; byte < Layout::kOperandBytes; ++byte) {
      const MatrixIndex e = Layout::b_element_of(lane, byte);  // (k, j)
      op.set_operand_byte(lane, byte, b.at(col0 + e.col, k0 + e.row));
    }
  }
  return op;
}

// Reference: D[i][j] = sum_k A[i][k] * B[j][k] (B stored N x K), in double.
std::vector<double> reference_product(const Tile& a, Fp8Format format_a, const Tile& b, Fp8Format format_b) {
  std::vector<double> d(static_cast<size_t>(a.rows) * b.rows, 0.0);
  for (int i = 0; i < a.rows; ++i) {
    for (int j = 0; j < b.rows; ++j) {
      double sum = 0.0;
      for (int k = 0; k < a.cols; ++k) {
        sum += double(fp8_to_float(a.at(i, k), format_a)) * double(fp8_to_float(b.at(j, k), format_b));
      }
      d[static_cast<size_t>(i) * b.rows + j] = sum;
    }
  }
  return d;
}

// Random tiles. Integer values in [-8, 8] are exact in every FP8 format and
// keep every partial sum exact in FP32, so results compare with ==.
Tile random_integer_tile(int rows, int cols, Fp8Format format, std::mt19937& rng) {
  std::uniform_int_distribution<int> value(-8, 8);
  Tile t{rows, cols, std::vector<uint8_t>(static_cast<size_t>(rows) * cols)};
  for (auto& code : t.codes) code = float_to_fp8(static_cast<float>(value(rng)), format);
  return t;
}

// Any finite FP8 code of the format (NaN and infinity excluded).
Tile random_finite_tile(int rows, int cols, Fp8Format format, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  Tile t{rows, cols, std::vector<uint8_t>(static_cast<size_t>(rows) * cols)};
  for (auto& code : t.codes) {
    do code = static_cast<uint8_t>(byte(rng));
    while (!std::isfinite(fp8_to_float(code, format)));
  }
  return t;
}

// The run's seed (fresh, printed, FP8GEMM_TEST_SEED replays it), salted per test.
uint32_t announce_seed(const char* test) {
  uint64_t salt = 0;
  for (const char* c = test; *c != '\0'; ++c) salt = salt * 131 + static_cast<uint8_t>(*c);
  return static_cast<uint32_t>(test_support::mix_seed(test_support::run_seed(), salt));
}

// ---------------------------------------------------------------------------
// Layout properties the kernel relies on
// ---------------------------------------------------------------------------

// Each (lane, byte) names a different element and together they cover the
// 16 x K tile: no element is missed or loaded twice.
template <typename Layout>
void expect_operand_layouts_are_bijections() {
  std::set<std::pair<int, int>> a_seen, b_seen;
  for (int lane = 0; lane < kWaveLanes; ++lane) {
    for (int byte = 0; byte < Layout::kOperandBytes; ++byte) {
      const MatrixIndex a = Layout::a_element_of(lane, byte);
      const MatrixIndex b = Layout::b_element_of(lane, byte);
      ASSERT_TRUE(a.row >= 0 && a.row < Layout::kM && a.col >= 0 && a.col < Layout::kK);
      ASSERT_TRUE(b.row >= 0 && b.row < Layout::kK && b.col >= 0 && b.col < Layout::kN);
      EXPECT_TRUE(a_seen.insert({a.row, a.col}).second) << "A element loaded twice, lane " << lane;
      EXPECT_TRUE(b_seen.insert({b.row, b.col}).second) << "B element loaded twice, lane " << lane;
    }
  }
  EXPECT_EQ(a_seen.size(), size_t{Layout::kM} * Layout::kK);
  EXPECT_EQ(b_seen.size(), size_t{Layout::kK} * Layout::kN);
}

template <typename Layout>
void expect_accumulator_layout_is_a_bijection() {
  std::set<std::pair<int, int>> seen;
  for (int lane = 0; lane < kWaveLanes; ++lane) {
    for (int reg = 0; reg < Layout::kAccumulators; ++reg) {
      const MatrixIndex d = Layout::d_element_of(lane, reg);
      ASSERT_TRUE(d.row >= 0 && d.row < Layout::kM && d.col >= 0 && d.col < Layout::kN);
      EXPECT_TRUE(seen.insert({d.row, d.col}).second) << "D element held twice, lane " << lane;
    }
  }
  EXPECT_EQ(seen.size(), size_t{Layout::kM} * Layout::kN);
}

// The kernel reads each run with one aligned LDS load: within a run the row
// (A) or column (B) is fixed and k goes up by one, from a multiple of the run.
template <typename Layout>
void expect_runs_are_consecutive_k() {
  for (int lane = 0; lane < kWaveLanes; ++lane) {
    for (int run = 0; run < Layout::kRuns; ++run) {
      const MatrixIndex a0 = Layout::a_element_of(lane, run * Layout::kRunBytes);
      const MatrixIndex b0 = Layout::b_element_of(lane, run * Layout::kRunBytes);
      EXPECT_EQ(a0.col % Layout::kRunBytes, 0) << "lane " << lane << " run " << run;
      EXPECT_EQ(b0.row % Layout::kRunBytes, 0) << "lane " << lane << " run " << run;
      for (int byte = 1; byte < Layout::kRunBytes; ++byte) {
        const MatrixIndex a = Layout::a_element_of(lane, run * Layout::kRunBytes + byte);
        const MatrixIndex b = Layout::b_element_of(lane, run * Layout::kRunBytes + byte);
        EXPECT_EQ(a, (MatrixIndex{a0.row, a0.col + byte})) << "lane " << lane << " byte " << byte;
        EXPECT_EQ(b, (MatrixIndex{b0.row + byte, b0.col})) << "lane " << lane << " byte " << byte;
      }
    }
  }
}

TEST(MfmaLayoutCdna3, OperandLayoutsAreBijections) { expect_operand_layouts_are_bijections<Cdna3>(); }
TEST(MfmaLayoutCdna4, OperandLayoutsAreBijections) { expect_operand_layouts_are_bijections<Cdna4>(); }
TEST(MfmaLayoutCdna3, AccumulatorLayoutIsABijection) { expect_accumulator_layout_is_a_bijection<Cdna3>(); }
TEST(MfmaLayoutCdna4, AccumulatorLayoutIsABijection) { expect_accumulator_layout_is_a_bijection<Cdna4>(); }
TEST(MfmaLayoutCdna3, RunsAreConsecutiveK) { expect_runs_are_consecutive_k<Cdna3>(); }
TEST(MfmaLayoutCdna4, RunsAreConsecutiveK) { expect_runs_are_consecutive_k<Cdna4>(); }

// The documented positions of a few elements, written out by hand from the
// ISA tables, so that a change to a formula shows up as a named element.
TEST(MfmaLayoutCdna3, KnownElementsSitWhereTheIsaGuideSays) {
  // Lane 17 holds row 1, k = 8..15; lane 63 row 15, k = 24..31.
  EXPECT_EQ(Cdna3::a_element_of(17, 0), (MatrixIndex{1, 8}));
  EXPECT_EQ(Cdna3::a_element_of(63, 7), (MatrixIndex{15, 31}));
  EXPECT_EQ(Cdna3::b_element_of(33, 5), (MatrixIndex{21, 1}));
  // D[i][j] in lane 16 * (i / 4) + j, VGPR i % 4: D[6][3] is lane 19, VGPR 2.
  EXPECT_EQ(Cdna3::d_element_of(19, 2), (MatrixIndex{6, 3}));
}

TEST(MfmaLayoutCdna4, KnownElementsSitWhereTheIsaGuideSays) {
  // Lane 17: row 1, k = 16..31 in VGPRs 0-3 and k = 80..95 in VGPRs 4-7.
  EXPECT_EQ(Cdna4::a_element_of(17, 0), (MatrixIndex{1, 16}));
  EXPECT_EQ(Cdna4::a_element_of(17, 16), (MatrixIndex{1, 80}));
  EXPECT_EQ(Cdna4::a_element_of(63, 31), (MatrixIndex{15, 127}));
  EXPECT_EQ(Cdna4::b_element_of(32, 20), (MatrixIndex{100, 0}));
  EXPECT_EQ(Cdna4::d_element_of(19, 2), (MatrixIndex{6, 3}));
}

TEST(MfmaLayoutCdna4, FormatCodesAreTheCbszBlgpValuesOfTheIsaGuide) {
  EXPECT_EQ(mfma::f8f6f4_format_code(Fp8Format::kE4M3), 0);
  EXPECT_EQ(mfma::f8f6f4_format_code(Fp8Format::kE5M2), 1);
  EXPECT_EQ(mfma::f8f6f4_format_code(Fp8Format::kE4M3Fnuz), -1);
  EXPECT_EQ(mfma::f8f6f4_format_code(Fp8Format::kE5M2Fnuz), -1);
}

// The layout functions are usable in constant expressions (the kernel's
// compile-time constants come from them).
static_assert(Cdna3::a_element_of(16, 3) == MatrixIndex{0, 11}, "constexpr layout");
static_assert(Cdna4::d_element_of(63, 3) == MatrixIndex{15, 15}, "constexpr layout");

// ---------------------------------------------------------------------------
// One instruction on a 16 x 16 tile
// ---------------------------------------------------------------------------

// D = C + A * B on one tile, every element compared exactly with the reference.
template <typename Layout, typename Execute>
void expect_one_instruction_computes_the_product(Fp8Format format_a, Fp8Format format_b, Execute execute,
                                                 uint32_t seed) {
  std::mt19937 rng(seed);
  const Tile a = random_integer_tile(16, Layout::kK, format_a, rng);
  const Tile b = random_integer_tile(16, Layout::kK, format_b, rng);
  std::vector<double> expected = reference_product(a, format_a, b, format_b);
  // C: integers too, placed through the accumulator layout.
  WaveAccumulator cd;
  std::uniform_int_distribution<int> c_value(-100, 100);
  for (int lane = 0; lane < kWaveLanes; ++lane) {
    for (int reg = 0; reg < 4; ++reg) {
      const MatrixIndex e = Layout::d_element_of(lane, reg);
      cd.vgpr[lane][reg] = static_cast<float>(c_value(rng));
      expected[static_cast<size_t>(e.row) * 16 + e.col] += cd.vgpr[lane][reg];
    }
  }
  execute(load_a<Layout>(a, 0, 0), load_b<Layout>(b, 0, 0), cd);
  for (int lane = 0; lane < kWaveLanes; ++lane) {
    for (int reg = 0; reg < 4; ++reg) {
      const MatrixIndex e = Layout::d_element_of(lane, reg);
      EXPECT_EQ(cd.vgpr[lane][reg], expected[static_cast<size_t>(e.row) * 16 + e.col])
          << "D[" << e.row << "][" << e.col << "] in lane " << lane << ", VGPR " << reg << " (" << fp8_name(format_a)
          << " x " << fp8_name(format_b) << ", seed " << seed << ")";
    }
  }
}

TEST(MfmaLayoutCdna3, OneInstructionComputesCPlusAB) {
  const uint32_t seed = announce_seed("MfmaLayoutCdna3.OneInstructionComputesCPlusAB");
  for (Fp8Format fa : {Fp8Format::kE4M3Fnuz, Fp8Format::kE5M2Fnuz}) {
    for (Fp8Format fb : {Fp8Format::kE4M3Fnuz, Fp8Format::kE5M2Fnuz}) {
      expect_one_instruction_computes_the_product<Cdna3>(
          fa, fb,
          [&](const WaveOperand& a, const WaveOperand& b, WaveAccumulator& cd) {
            execute_mfma_16x16x32_fp8(a, fa, b, fb, cd);
          },
          seed);
    }
  }
}

TEST(MfmaLayoutCdna4, OneInstructionComputesCPlusAB) {
  const uint32_t seed = announce_seed("MfmaLayoutCdna4.OneInstructionComputesCPlusAB");
  for (Fp8Format fa : {Fp8Format::kE4M3, Fp8Format::kE5M2}) {
    for (Fp8Format fb : {Fp8Format::kE4M3, Fp8Format::kE5M2}) {
      expect_one_instruction_computes_the_product<Cdna4>(
          fa, fb,
          [&](const WaveOperand& a, const WaveOperand& b, WaveAccumulator& cd) {
            execute_mfma_16x16x128_f8f6f4(a, mfma::f8f6f4_format_code(fa), b, mfma::f8f6f4_format_code(fb), cd);
          },
          seed);
    }
  }
}

// ---------------------------------------------------------------------------
// A wavefront's 64 x 64 sub-tile over a K loop, as the kernel computes it
// ---------------------------------------------------------------------------

// The kernel's loop: 4 x 4 MFMA tiles, accumulators carried across K steps,
// fragments read as runs from K-major rows. Returns D (64 x 64, row-major).
template <typename Layout, typename Execute>
std::vector<double> wavefront_tile(const Tile& a, const Tile& b, Execute execute) {
  WaveAccumulator acc[4][4];
  for (int k0 = 0; k0 < a.cols; k0 += Layout::kK) {
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) execute(load_a<Layout>(a, 16 * i, k0), load_b<Layout>(b, 16 * j, k0), acc[i][j]);
    }
  }
  std::vector<double> d(64 * 64);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      for (int lane = 0; lane < kWaveLanes; ++lane) {
        for (int reg = 0; reg < 4; ++reg) {
          const MatrixIndex e = Layout::d_element_of(lane, reg);
          d[static_cast<size_t>(16 * i + e.row) * 64 + 16 * j + e.col] = acc[i][j].vgpr[lane][reg];
        }
      }
    }
  }
  return d;
}

TEST(MfmaLayoutCdna3, WavefrontTileOver384KMatchesReferenceExactly) {
  const uint32_t seed = announce_seed("MfmaLayoutCdna3.WavefrontTileOver384KMatchesReferenceExactly");
  std::mt19937 rng(seed);
  const Fp8Format fa = Fp8Format::kE4M3Fnuz, fb = Fp8Format::kE5M2Fnuz;
  const Tile a = random_integer_tile(64, 384, fa, rng), b = random_integer_tile(64, 384, fb, rng);
  const std::vector<double> d =
      wavefront_tile<Cdna3>(a, b, [&](const WaveOperand& x, const WaveOperand& y, WaveAccumulator& cd) {
        execute_mfma_16x16x32_fp8(x, fa, y, fb, cd);
      });
  const std::vector<double> expected = reference_product(a, fa, b, fb);
  for (size_t e = 0; e < d.size(); ++e) ASSERT_EQ(d[e], expected[e]) << "element " << e << ", seed " << seed;
}

TEST(MfmaLayoutCdna4, WavefrontTileOver384KMatchesReferenceExactly) {
  const uint32_t seed = announce_seed("MfmaLayoutCdna4.WavefrontTileOver384KMatchesReferenceExactly");
  std::mt19937 rng(seed);
  const Fp8Format fa = Fp8Format::kE5M2, fb = Fp8Format::kE4M3;
  const Tile a = random_integer_tile(64, 384, fa, rng), b = random_integer_tile(64, 384, fb, rng);
  const std::vector<double> d =
      wavefront_tile<Cdna4>(a, b, [&](const WaveOperand& x, const WaveOperand& y, WaveAccumulator& cd) {
        execute_mfma_16x16x128_f8f6f4(x, mfma::f8f6f4_format_code(fa), y, mfma::f8f6f4_format_code(fb), cd);
      });
  const std::vector<double> expected = reference_product(a, fa, b, fb);
  for (size_t e = 0; e < d.size(); ++e) ASSERT_EQ(d[e], expected[e]) << "element " << e << ", seed " << seed;
}

// Any finite codes (subnormals, the largest values): FP32 accumulation keeps
// the result within a few FP32 roundings of the exact sum.
TEST(MfmaLayoutCdna4, WavefrontTileOfAnyFiniteCodesIsWithinFp32Rounding) {
  const uint32_t seed = announce_seed("MfmaLayoutCdna4.WavefrontTileOfAnyFiniteCodesIsWithinFp32Rounding");
  std::mt19937 rng(seed);
  const Fp8Format f = Fp8Format::kE4M3;
  const Tile a = random_finite_tile(64, 256, f, rng), b = random_finite_tile(64, 256, f, rng);
  const std::vector<double> d =
      wavefront_tile<Cdna4>(a, b, [&](const WaveOperand& x, const WaveOperand& y, WaveAccumulator& cd) {
        execute_mfma_16x16x128_f8f6f4(x, 0, y, 0, cd);
      });
  const std::vector<double> expected = reference_product(a, f, b, f);
  for (int i = 0; i < 64; ++i) {
    for (int j = 0; j < 64; ++j) {
      // Bound: |error| <= steps * 2^-24 * sum_k |a_ik b_jk| (one rounding per K step).
      double magnitude = 0.0;
      for (int k = 0; k < a.cols; ++k) {
        magnitude += std::fabs(double(fp8_to_float(a.at(i, k), f)) * double(fp8_to_float(b.at(j, k), f)));
      }
      const double bound = (a.cols / Cdna4::kK) * 0x1p-24 * magnitude;
      ASSERT_LE(std::fabs(d[i * 64 + j] - expected[i * 64 + j]), bound) << "D[" << i << "][" << j << "], seed " << seed;
    }
  }
}

// ---------------------------------------------------------------------------
// Why the numbering of k inside one instruction cannot make the kernel wrong
// ---------------------------------------------------------------------------

// The hardware pairs byte b of lane l of A with byte b of every lane l' of B
// with l' / 16 == l / 16. So if the true numbering of k inside the instruction
// differed from the header's (for example 32 consecutive k per lane instead
// of two runs of 16 on CDNA4), a kernel that loads A and B with the same
// function would still compute A * B: the k would be permuted, identically on
// both sides, and a sum does not depend on its order. This test loads with
// such an alternative numbering and runs the header's model of the hardware.
TEST(MfmaLayoutCdna4, AnyKNumberingSharedByAAndBGivesTheSameProduct) {
  const uint32_t seed = announce_seed("MfmaLayoutCdna4.AnyKNumberingSharedByAAndBGivesTheSameProduct");
  std::mt19937 rng(seed);
  const Fp8Format f = Fp8Format::kE4M3;
  const Tile a = random_integer_tile(16, 128, f, rng), b = random_integer_tile(16, 128, f, rng);
  auto contiguous_k = [](int lane, int byte) { return 32 * (lane / 16) + byte; };  // the alternative reading
  WaveOperand x, y;
  for (int lane = 0; lane < kWaveLanes; ++lane) {
    for (int byte = 0; byte < 32; ++byte) {
      x.set_operand_byte(lane, byte, a.at(lane % 16, contiguous_k(lane, byte)));
      y.set_operand_byte(lane, byte, b.at(lane % 16, contiguous_k(lane, byte)));
    }
  }
  WaveAccumulator cd;
  execute_mfma_16x16x128_f8f6f4(x, 0, y, 0, cd);
  const std::vector<double> expected = reference_product(a, f, b, f);
  for (int lane = 0; lane < kWaveLanes; ++lane) {
    for (int reg = 0; reg < 4; ++reg) {
      const MatrixIndex e = Cdna4::d_element_of(lane, reg);
      EXPECT_EQ(cd.vgpr[lane][reg], expected[static_cast<size_t>(e.row) * 16 + e.col]) << "seed " << seed;
    }
  }
}

}  // namespace
}  // namespace fp8gemm
