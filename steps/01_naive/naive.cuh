// Step 01 — naive FP8 GEMM: one thread per output element.
//
// D[m,n] = a_scale * b_scale * sum_k A[m,k] * B[n,k]
//
// Each thread walks one row of A and one row of B (both K-major), decodes
// each FP8 byte to FP32 with the codec of common/fp8/fp8.h, and accumulates in
// FP32. Nothing is shared between threads: every byte of A is read N times and
// every byte of B M times. The chapter (README.md) counts what that costs.
//
// Everything below is in an unnamed namespace: a copy of this folder (a fork)
// compiles the same names into its own unit, and both link into one program.
#pragma once

#include "common/device/kernel.h"

namespace fp8gemm {
namespace {

// A block is a 32 x 8 patch of D: threadIdx.x walks along N, so the 32 threads
// of a warp write 32 consecutive elements of a row of D (one coalesced store).
constexpr int kBlockN = 32;
constexpr int kBlockM = 8;

template <Fp8Format kFormatA, Fp8Format kFormatB>
__global__ void naive_fp8_gemm_kernel(GemmArgs args) {
  const int64_t n = static_cast<int64_t>(blockIdx.x) * kBlockN + threadIdx.x;
  if (n >= args.n) return;
  const float scale = args.a_scale * args.b_scale;
  // gridDim.y is capped at 65535 blocks, so rows are visited grid-stride.
  for (int64_t m = static_cast<int64_t>(blockIdx.y) * kBlockM + threadIdx.y; m < args.m;
       m += static_cast<int64_t>(gridDim.y) * kBlockM) {
    const uint8_t* a_row = args.a + m * args.lda;  // same for the whole warp: a broadcast
    const uint8_t* b_row = args.b + n * args.ldb;  // ldb bytes apart between lanes: uncoalesced
    float acc = 0.0f;
    for (int64_t k = 0; k < args.k; ++k) {
      acc += fp8_to_float<kFormatA>(a_row[k]) * fp8_to_float<kFormatB>(b_row[k]);
    }
    store_output(args.d, m * args.ldd + n, args.d_type, acc * scale);
  }
}

Status launch_naive(const GemmArgs& args) {
  const int64_t blocks_n = (args.n + kBlockN - 1) / kBlockN;
  const int64_t blocks_m = (args.m + kBlockM - 1) / kBlockM;
  const dim3 grid(static_cast<unsigned>(blocks_n), static_cast<unsigned>(blocks_m < 65535 ? blocks_m : 65535));
  const dim3 block(kBlockN, kBlockM);
  if (blocks_n > 0x7FFFFFFF) {
    return Status::error(StatusCode::kNotSupported, "N <= 2^31 * 32 required");
  }
  dispatch_fp8_formats(args.a_format, args.b_format, [&](auto format_a, auto format_b) {
    naive_fp8_gemm_kernel<format_a.value, format_b.value><<<grid, block, 0, args.stream>>>(args);
  });
  return status_from_launch();
}

}  // namespace
}  // namespace fp8gemm
