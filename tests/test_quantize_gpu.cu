// quantize_on_gpu() must equal the host quantize() bit for bit: the same codes
// and the same scales, for every format, granularity and shape (ragged ones,
// ld > cols, more rows than a grid has blocks in y), tiny groups (scales below
// the smallest normal float) included; and it must reject a NaN or an
// infinity with the host's message, naming the same first element, without
// writing any code. Needs a CUDA device; skipped, with the reason, where there
// is none.
#include <gtest/gtest.h>

#include "support/cuda_stream.h"
#include "support/seed.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/fp8/fp8.h"
#include "common/fp8/quantize.h"

namespace fp8gemm {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Bytes (and floats) kept untouched on each side of the codes (and scales):
// a kernel that writes outside its output changes them.
constexpr size_t kGuard = 256;
constexpr uint8_t kGuardByte = 0xA5;

using test_support::run_seed;  // fresh per run, printed, FP8GEMM_TEST_SEED replays it

struct Shape {
  int64_t rows, cols, ld;
};

// Random values whose magnitudes span 2^-24 .. 2^0 within a row, times a row
// factor 2^-10 .. 2^10 (times `factor`), with about one element in 200
// replaced by +-0 or a float subnormal. The padding between cols and ld holds
// 1e30 and NaN, which must never be read (a NaN read would be an error).
std::vector<float> random_matrix(const Shape& s, std::mt19937_64& rng, float factor = 1.0f) {
  std::uniform_real_distribution<float> row_exponent(-10.0f, 10.0f);
  std::uniform_real_distribution<float> element_exponent(-24.0f, 0.0f);
  const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), -1e-40f};
  std::vector<float> x(static_cast<size_t>((s.rows - 1) * s.ld + s.cols));
  for (int64_t r = 0; r < s.rows; ++r) {
    const float row_factor = std::exp2(row_exponent(rng));
    for (int64_t c = 0; c < s.cols; ++c) {
      const uint64_t draw = rng();
      float v = std::exp2(element_exponent(rng)) * row_factor * factor;
      if (draw % 2 == 1) v = -v;
      if (draw % 200 == 0) v = specials[(draw >> 8) % 4];
      x[r * s.ld + c] = v;
    }
    for (int64_t c = s.cols; c < s.ld && r + 1 < s.rows; ++c) x[r * s.ld + c] = (c % 2) ? kNaN : 1e30f;
  }
  return x;
}

using Stream = test_support::CudaStream;

// Runs quantize_on_gpu on x twice, with the outputs poisoned first with 0x00
// and then with 0xFF codes (and NaN scales): an element the kernels skip
// cannot match the host both times. Checks both runs against the host and
// that the guard bands around the outputs stay untouched.
void expect_gpu_equals_host(const std::vector<float>& x, const Shape& s, Fp8Format f, ScaleGranularity g,
                            Fp8Overflow overflow) {
  const QuantizedMatrix host = quantize(x.data(), s.rows, s.cols, s.ld, f, g, overflow);
  const size_t code_count = host.codes.size();
  const size_t scale_count = host.scales.size();

  DeviceBuffer<float> device_x(x.size());
  DeviceBuffer<uint8_t> device_codes(kGuard + code_count + kGuard);
  DeviceBuffer<float> device_scales(kGuard + scale_count + kGuard);
  FP8GEMM_CUDA_CHECK(cudaMemcpy(device_x.get(), x.data(), device_x.bytes(), cudaMemcpyHostToDevice));
  FP8GEMM_CUDA_CHECK(cudaMemset(device_codes.get(), kGuardByte, device_codes.bytes()));
  FP8GEMM_CUDA_CHECK(cudaMemset(device_scales.get(), kGuardByte, device_scales.bytes()));
  uint8_t* codes = device_codes.get() + kGuard;
  float* scales = device_scales.get() + kGuard;
  const std::vector<float> nan_scales(scale_count, kNaN);
  Stream stream;

  for (uint8_t poison : {uint8_t{0x00}, uint8_t{0xFF}}) {
    SCOPED_TRACE("codes poisoned with " + std::to_string(poison));
    FP8GEMM_CUDA_CHECK(cudaMemset(codes, poison, code_count));
    FP8GEMM_CUDA_CHECK(cudaMemcpy(scales, nan_scales.data(), scale_count * sizeof(float), cudaMemcpyHostToDevice));

    const Status status =
        quantize_on_gpu(device_x.get(), s.rows, s.cols, s.ld, f, g, codes, scales, stream.get(), overflow);
    ASSERT_TRUE(status.ok()) << status_code_name(status.code) << ": " << status.message;
    FP8GEMM_CUDA_CHECK(cudaGetLastError());
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

    std::vector<uint8_t> gpu_codes(device_codes.size());
    std::vector<float> gpu_scales(device_scales.size());
    FP8GEMM_CUDA_CHECK(cudaMemcpy(gpu_codes.data(), device_codes.get(), device_codes.bytes(), cudaMemcpyDeviceToHost));
    FP8GEMM_CUDA_CHECK(
        cudaMemcpy(gpu_scales.data(), device_scales.get(), device_scales.bytes(), cudaMemcpyDeviceToHost));

    int64_t scale_mismatches = 0;
    for (size_t i = 0; i < scale_count; ++i) {
      const float gpu = gpu_scales[kGuard + i];
      if (float_bits(gpu) != float_bits(host.scales[i]) && ++scale_mismatches <= 10) {
        ADD_FAILURE() << "scale " << i << ": host " << host.scales[i] << ", GPU " << gpu;
      }
    }
    EXPECT_EQ(scale_mismatches, 0) << "scales that differ, of " << scale_count;

    int64_t code_mismatches = 0;
    for (size_t i = 0; i < code_count; ++i) {
      const uint8_t gpu = gpu_codes[kGuard + i];
      if (gpu != host.codes[i] && ++code_mismatches <= 10) {
        const int64_t r = static_cast<int64_t>(i) / s.cols, c = static_cast<int64_t>(i) % s.cols;
        ADD_FAILURE() << "code (" << r << ", " << c << ") of x = " << x[r * s.ld + c] << ": host " << int{host.codes[i]}
                      << ", GPU " << int{gpu};
      }
    }
    EXPECT_EQ(code_mismatches, 0) << "codes that differ, of " << code_count;

    for (size_t i = 0; i < kGuard; ++i) {
      ASSERT_EQ(gpu_codes[i], kGuardByte) << "byte " << kGuard - i << " before the codes was written";
      ASSERT_EQ(gpu_codes[kGuard + code_count + i], kGuardByte) << "byte " << i << " after the codes was written";
    }
    uint32_t guard_float_bits;
    std::memset(&guard_float_bits, kGuardByte, sizeof(guard_float_bits));
    for (size_t i = 0; i < kGuard; ++i) {
      ASSERT_EQ(float_bits(gpu_scales[i]), guard_float_bits)
          << "float " << kGuard - i << " before the scales was written";
      ASSERT_EQ(float_bits(gpu_scales[kGuard + scale_count + i]), guard_float_bits)
          << "float " << i << " after the scales was written";
    }
  }
}

// 1 x 1; ragged rows and columns; ld > cols; exact multiples of 128; and
// 70000 rows, more than the 65535 blocks a grid has in y. Every test runs all
// of them (one process per format and granularity, not per shape: each process
// pays for starting the CUDA runtime).
constexpr Shape kShapes[] = {{1, 1, 1},          {17, 255, 255},    {129, 300, 317}, {256, 384, 384},
                             {1000, 1008, 1024}, {300, 4097, 4097}, {70000, 3, 5}};

std::string shape_name(const Shape& s) {
  return std::to_string(s.rows) + "x" + std::to_string(s.cols) + " ld " + std::to_string(s.ld);
}

struct GpuCase {
  Fp8Format format;
  ScaleGranularity granularity;
};

void PrintTo(const GpuCase& c, std::ostream* os) {
  *os << fp8_name(c.format) << ", " << granularity_name(c.granularity);
}

std::string gpu_case_name(const ::testing::TestParamInfo<GpuCase>& info) {
  return std::string(fp8_name(info.param.format)) + "_" + granularity_name(info.param.granularity);
}

std::vector<GpuCase> all_gpu_cases() {
  std::vector<GpuCase> cases;
  for (Fp8Format f : {Fp8Format::kE4M3, Fp8Format::kE5M2, Fp8Format::kE4M3Fnuz, Fp8Format::kE5M2Fnuz}) {
    for (ScaleGranularity g : {ScaleGranularity::kPerTensor, ScaleGranularity::kPerRow, ScaleGranularity::kGroup1x128,
                               ScaleGranularity::kBlock128x128}) {
      cases.push_back({f, g});
    }
  }
  return cases;
}

class QuantizeOnGpu : public ::testing::TestWithParam<GpuCase> {
 protected:
  void SetUp() override {
    std::string reason;
    if (!test_support::require_gpu_or_skip(&reason)) return;  // or fail, with FP8GEMM_REQUIRE_GPU=1
  }
};

TEST_P(QuantizeOnGpu, CodesAndScalesEqualTheHostBitForBit) {
  const GpuCase c = GetParam();
  std::mt19937_64 rng(run_seed() + 1);
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(shape_name(shape));
    const std::vector<float> x = random_matrix(shape, rng);
    expect_gpu_equals_host(x, shape, c.format, c.granularity, Fp8Overflow::kSaturate);
  }
}

// Groups whose amax / max is below the smallest normal float get subnormal
// scales (dequant_scale_from_amax): the amax is computed from integers on
// both sides and the division x / s is IEEE's with subnormals on both, so the
// results must still be bit-identical. A factor of 2^-125 puts most groups in
// the tiny range and some near its boundary, 2^-135 puts every group there;
// many elements are float subnormals or round to 0.
TEST_P(QuantizeOnGpu, TinyGroupsGiveTheSameSubnormalScalesAndCodesAsTheHost) {
  const GpuCase c = GetParam();
  std::mt19937_64 rng(run_seed() + 2);
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(shape_name(shape));
    for (float factor : {0x1p-125f, 0x1p-135f}) {
      SCOPED_TRACE("factor " + std::to_string(std::log2(factor)));
      const std::vector<float> x = random_matrix(shape, rng, factor);
      for (Fp8Overflow overflow : {Fp8Overflow::kSaturate, Fp8Overflow::kNoSaturate}) {
        SCOPED_TRACE(overflow == Fp8Overflow::kSaturate ? "saturate" : "no saturate");
        expect_gpu_equals_host(x, shape, c.format, c.granularity, overflow);
      }
    }
  }
}

// A NaN or an infinity: kInvalidArgument with the host's message (same rule,
// same first element in row-major order, same value), and not a code written.
// Several non-finite elements, in different blocks of the amax grid, so that
// the first one has to be found among them.
TEST_P(QuantizeOnGpu, NonFiniteInputIsRejectedWithTheHostsMessage) {
  const GpuCase c = GetParam();
  std::mt19937_64 rng(run_seed() + 3);
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(shape_name(shape));
    std::vector<float> x = random_matrix(shape, rng);
    const int64_t first_row = shape.rows / 2, first_col = shape.cols / 2;
    auto at = [&](int64_t r, int64_t col) -> float& { return x[r * shape.ld + col]; };
    at(shape.rows - 1, shape.cols - 1) = kNaN;
    at(shape.rows - 1, 0) = -kInf;
    if (first_col + 1 < shape.cols) at(first_row, shape.cols - 1) = kNaN;
    if (first_row + 1 < shape.rows) at(first_row + 1, 0) = kInf;
    if (first_row + 1 < shape.rows) at(first_row + 1, first_col) = kNaN;  // same column, same amax tile
    at(first_row, first_col) = -kInf;

    QuantizedMatrix unused;
    const Status host = try_quantize(x.data(), shape.rows, shape.cols, shape.ld, c.format, c.granularity, &unused);
    ASSERT_EQ(host.code, StatusCode::kInvalidArgument);
    ASSERT_EQ(host.message, non_finite_input_error(first_row, first_col, -kInf).message);

    const size_t code_count = static_cast<size_t>(shape.rows * shape.cols);
    const size_t scale_total = static_cast<size_t>(scale_count(shape.rows, shape.cols, c.granularity));
    DeviceBuffer<float> device_x(x.size());
    DeviceBuffer<uint8_t> codes(code_count);
    DeviceBuffer<float> scales(scale_total);
    FP8GEMM_CUDA_CHECK(cudaMemcpy(device_x.get(), x.data(), device_x.bytes(), cudaMemcpyHostToDevice));
    FP8GEMM_CUDA_CHECK(cudaMemset(codes.get(), kGuardByte, codes.bytes()));
    Stream stream;
    const Status gpu = quantize_on_gpu(device_x.get(), shape.rows, shape.cols, shape.ld, c.format, c.granularity,
                                       codes.get(), scales.get(), stream.get());
    EXPECT_EQ(gpu.code, StatusCode::kInvalidArgument) << status_code_name(gpu.code) << ": " << gpu.message;
    EXPECT_EQ(gpu.message, "quantize_on_gpu: " + host.message);
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    std::vector<uint8_t> after(code_count);
    FP8GEMM_CUDA_CHECK(cudaMemcpy(after.data(), codes.get(), codes.bytes(), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < code_count; ++i) ASSERT_EQ(after[i], kGuardByte) << "code " << i << " was written";

    // The error leaves nothing behind that spoils the next call (the stream,
    // the memory pool): the same input made finite quantizes as on the host.
    at(shape.rows - 1, shape.cols - 1) = 1.0f;
    at(shape.rows - 1, 0) = 1.0f;
    if (first_col + 1 < shape.cols) at(first_row, shape.cols - 1) = 1.0f;
    if (first_row + 1 < shape.rows) at(first_row + 1, 0) = 1.0f;
    if (first_row + 1 < shape.rows) at(first_row + 1, first_col) = 1.0f;
    at(first_row, first_col) = 1.0f;
    expect_gpu_equals_host(x, shape, c.format, c.granularity, Fp8Overflow::kSaturate);
  }
}

INSTANTIATE_TEST_SUITE_P(AllCases, QuantizeOnGpu, ::testing::ValuesIn(all_gpu_cases()), gpu_case_name);

// Argument checks happen before anything touches the device: these run
// without a GPU. The pointers are never dereferenced.
TEST(QuantizeOnGpuArguments, InvalidShapesAndNullPointersAreRejected) {
  float x_placeholder = 0.0f;
  uint8_t codes_placeholder = 0;
  float scales_placeholder = 0.0f;
  const float* x = &x_placeholder;
  uint8_t* codes = &codes_placeholder;
  float* scales = &scales_placeholder;
  const Fp8Format f = Fp8Format::kE4M3;
  const ScaleGranularity g = ScaleGranularity::kPerRow;
  EXPECT_EQ(quantize_on_gpu(x, 0, 1, 1, f, g, codes, scales).code, StatusCode::kInvalidArgument);
  EXPECT_EQ(quantize_on_gpu(x, 1, 0, 1, f, g, codes, scales).code, StatusCode::kInvalidArgument);
  EXPECT_EQ(quantize_on_gpu(x, 2, 4, 3, f, g, codes, scales).code, StatusCode::kInvalidArgument);
  EXPECT_EQ(quantize_on_gpu(nullptr, 1, 1, 1, f, g, codes, scales).code, StatusCode::kInvalidArgument);
  EXPECT_EQ(quantize_on_gpu(x, 1, 1, 1, f, g, nullptr, scales).code, StatusCode::kInvalidArgument);
  EXPECT_EQ(quantize_on_gpu(x, 1, 1, 1, f, g, codes, nullptr).code, StatusCode::kInvalidArgument);
}

TEST(QuantizeOnGpuArguments, RejectionMessageNamesTheBrokenRule) {
  float x = 0.0f, scale = 0.0f;
  uint8_t code = 0;
  const Status status = quantize_on_gpu(&x, 2, 4, 3, Fp8Format::kE4M3, ScaleGranularity::kPerRow, &code, &scale);
  EXPECT_NE(status.message.find("ld >= cols"), std::string::npos) << status.message;
}

}  // namespace
}  // namespace fp8gemm
