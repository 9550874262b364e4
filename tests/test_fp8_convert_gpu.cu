// The fast device decoder (common/device/fp8_convert.h) against the codec
// (common/fp8/fp8.h): every one of the 256 codes of every format, in every byte
// position of the packed word, gives the same float on the GPU as
// fp8_to_float<F> on the host — bit for bit, except that a NaN only has to
// be a NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/device/dispatch.h"
#include "common/device/fp8_convert.h"
#include "common/fp8/fp8.h"
#include "support/require_gpu.h"

namespace fp8gemm {
namespace {

// Word w holds the codes w, w+1, w+2, w+3 (mod 256) in bytes 0..3, so that
// each code appears once in each byte position.
constexpr int kWords = 256;

uint32_t packed_word(int w) {
  uint32_t word = 0;
  for (int byte = 0; byte < 4; ++byte) word |= static_cast<uint32_t>((w + byte) & 0xFF) << (8 * byte);
  return word;
}

template <Fp8Format F>
__global__ void decode_kernel(const uint32_t* words, float* out, int* used_hardware) {
  const int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w == 0) *used_hardware = fp8_decodes_in_hardware<F>() ? 1 : 0;
  if (w >= kWords) return;
  const Float4 f = fp8x4_to_float4<F>(words[w]);
  for (int byte = 0; byte < 4; ++byte) out[4 * w + byte] = f.v[byte];
}

class Fp8ConvertGpuTest : public ::testing::TestWithParam<Fp8Format> {
 protected:
  void SetUp() override {
    if (!test_support::require_gpu_or_skip()) return;  // or fail, with FP8GEMM_REQUIRE_GPU=1
  }
};

TEST_P(Fp8ConvertGpuTest, EveryCodeInEveryBytePositionDecodesLikeTheCodec) {
  const Fp8Format format = GetParam();
  std::vector<uint32_t> words(kWords);
  for (int w = 0; w < kWords; ++w) words[w] = packed_word(w);

  DeviceBuffer<uint32_t> d_words(kWords);
  DeviceBuffer<float> d_out(4 * kWords);
  DeviceBuffer<int> d_used_hardware(1);
  FP8GEMM_CUDA_CHECK(cudaMemcpy(d_words.get(), words.data(), d_words.bytes(), cudaMemcpyHostToDevice));
  FP8GEMM_CUDA_CHECK(cudaMemset(d_out.get(), 0xFF, d_out.bytes()));  // NaN: an unwritten value fails
  dispatch_fp8_format(format, [&](auto tag) {
    decode_kernel<tag.value><<<kWords / 64, 64>>>(d_words.get(), d_out.get(), d_used_hardware.get());
  });
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<float> out(4 * kWords);
  int used_hardware = -1;
  FP8GEMM_CUDA_CHECK(cudaMemcpy(out.data(), d_out.get(), d_out.bytes(), cudaMemcpyDeviceToHost));
  FP8GEMM_CUDA_CHECK(cudaMemcpy(&used_hardware, d_used_hardware.get(), sizeof(int), cudaMemcpyDeviceToHost));
  RecordProperty("decoder", used_hardware == 1 ? "hardware" : "software");

  int mismatches = 0;
  for (int w = 0; w < kWords; ++w) {
    for (int byte = 0; byte < 4; ++byte) {
      const auto code = static_cast<uint8_t>((w + byte) & 0xFF);
      const float expected = fp8_to_float(code, format);
      const float got = out[4 * w + byte];
      const bool same = std::isnan(expected) ? std::isnan(got) : float_bits(got) == float_bits(expected);
      if (!same && ++mismatches <= 10) {
        ADD_FAILURE() << fp8_name(format) << " code 0x" << std::hex << int(code) << std::dec << " in byte " << byte
                      << ": device " << got << " (bits 0x" << std::hex << float_bits(got) << "), codec " << expected
                      << " (bits 0x" << float_bits(expected) << std::dec << ")";
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << "decoder: " << (used_hardware == 1 ? "hardware" : "software");
}

INSTANTIATE_TEST_SUITE_P(AllFormats, Fp8ConvertGpuTest,
                         ::testing::Values(Fp8Format::kE4M3, Fp8Format::kE5M2, Fp8Format::kE4M3Fnuz,
                                           Fp8Format::kE5M2Fnuz),
                         [](const ::testing::TestParamInfo<Fp8Format>& info) {
                           return std::string(fp8_name(info.param));
                         });

// The OCP formats must take the conversion instruction on sm_89 and newer:
// a silent fall back to the software codec would pass the test above and
// cost the GEMM steps a large part of their speed.
TEST(Fp8ConvertGpu, OcpFormatsUseTheConversionInstructionOnSm89AndNewer) {
  if (!test_support::require_gpu_or_skip()) return;  // or fail, with FP8GEMM_REQUIRE_GPU=1
  int device = 0, major = 0, minor = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major * 10 + minor < 89) {  // the GPU works but lacks the instruction: a skip, even with FP8GEMM_REQUIRE_GPU=1
    GTEST_SKIP() << "compute capability " << major << "." << minor << " has no FP8 conversion instruction";
  }

  DeviceBuffer<uint32_t> d_words(kWords);
  DeviceBuffer<float> d_out(4 * kWords);
  DeviceBuffer<int> d_used_hardware(1);
  FP8GEMM_CUDA_CHECK(cudaMemset(d_words.get(), 0, d_words.bytes()));
  for (Fp8Format format : {Fp8Format::kE4M3, Fp8Format::kE5M2}) {
    dispatch_fp8_format(format, [&](auto tag) {
      decode_kernel<tag.value><<<kWords / 64, 64>>>(d_words.get(), d_out.get(), d_used_hardware.get());
    });
    FP8GEMM_CUDA_CHECK(cudaGetLastError());
    int used_hardware = -1;
    FP8GEMM_CUDA_CHECK(cudaMemcpy(&used_hardware, d_used_hardware.get(), sizeof(int), cudaMemcpyDeviceToHost));
    EXPECT_EQ(used_hardware, 1) << fp8_name(format);
  }
}

}  // namespace
}  // namespace fp8gemm
