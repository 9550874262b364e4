// Step 02 — shared-memory (LDS) tiling with a register tile per thread.
//
// D[m,n] = a_scale * b_scale * sum_k A[m,k] * B[n,k]
//
// A block computes a BM x BN tile of D. It walks K in slices BK deep: the
// block copies the BM x BK slice of A and the BN x BK slice of B into shared
// memory (16-byte loads, FP8 bytes as they are in memory), waits, and then
// each thread computes a TM x TN patch of the tile from shared memory. A value
// read from shared memory is decoded to FP32 once and used TN (A) or TM (B)
// times from registers; a byte of A now comes from global memory N / BN times
// instead of N times as in step 01. The chapter (README.md) counts the bytes,
// the conversions and the FFMAs.
//
// Everything below is in an unnamed namespace: a copy of this folder (a fork)
// compiles the same names into its own unit, and both link into one program.
#pragma once

#include "common/device/kernel.h"

namespace fp8gemm {
namespace {

constexpr int BM = 128;  // rows of A (and of D) per block
constexpr int BN = 128;  // rows of B (columns of D) per block
constexpr int BK = 64;   // K per slice: one FP8 tile row is BK bytes
constexpr int TM = 8;    // rows of D per thread
constexpr int TN = 8;    // columns of D per thread

constexpr int kThreadsN = BN / TN;               // 16 threads along N...
constexpr int kThreadsM = BM / TM;               // ...times 16 along M
constexpr int kThreads = kThreadsM * kThreadsN;  // 256
constexpr int kVectorBytes = 16;                 // one 16-byte load: 16 FP8 values
constexpr int kVectorsPerRow = BK / kVectorBytes;

static_assert(BK % kVectorBytes == 0, "a tile row is a whole number of 16-byte vectors");
static_assert(kThreads % kWarpSize == 0, "whole warps (NVIDIA) and wavefronts (AMD)");

/// 16 FP8 codes: what one 16-byte load brings.
struct alignas(16) Fp8x16 {
  uint32_t word[4];
};

/// Loads the 16 bytes at `src`, of which the first `valid` (may be <= 0) lie
/// inside the matrix row; the rest read as zeros. kVectorRows: rows start on
/// 16-byte boundaries, so a full vector is one 16-byte load.
template <bool kVectorRows>
__device__ inline Fp8x16 load_vector(const uint8_t* src, int64_t valid) {
  if (kVectorRows && valid >= kVectorBytes) return *reinterpret_cast<const Fp8x16*>(src);
  Fp8x16 v{};
  for (int b = 0; b < kVectorBytes; ++b) {
    if (b < valid) v.word[b / 4] |= static_cast<uint32_t>(src[b]) << (8 * (b % 4));
  }
  return v;
}

/// Copies rows [row0, row0 + kRows) x columns [k0, k0 + BK) of a K-major FP8
/// matrix (rows x k, leading dimension ld) into tile, one 16-byte vector per
/// thread per pass. Consecutive threads take consecutive vectors of a row, so
/// a warp reads whole rows of the slice: coalesced. Outside the matrix the
/// tile holds zeros, which add nothing to the sums.
template <int kRows, bool kVectorRows>
__device__ inline void load_tile_to_shared(uint8_t (*tile)[BK], const uint8_t* matrix, int64_t ld, int64_t rows,
                                           int64_t k, int64_t row0, int64_t k0) {
  for (int v = threadIdx.x; v < kRows * kVectorsPerRow; v += kThreads) {
    const int r = v / kVectorsPerRow;
    const int c = (v % kVectorsPerRow) * kVectorBytes;
    const int64_t row = row0 + r;
    const int64_t col = k0 + c;
    const Fp8x16 x = row < rows ? load_vector<kVectorRows>(matrix + row * ld + col, k - col) : Fp8x16{};
    *reinterpret_cast<Fp8x16*>(&tile[r][c]) = x;
  }
}

template <Fp8Format kFormatA, Fp8Format kFormatB, bool kVectorRows>
__global__ void FP8GEMM_LAUNCH_BOUNDS(kThreads) lds_tiling_kernel(GemmArgs args) {
  // One slice of A and of B, in the layout of global memory: K contiguous.
  alignas(16) __shared__ uint8_t a_tile[BM][BK];
  alignas(16) __shared__ uint8_t b_tile[BN][BK];

  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * BM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * BN;
  // The thread's patch: rows ty + i * kThreadsM and columns tx + j * kThreadsN
  // of the block tile, so that neighbouring threads own neighbouring columns
  // and a warp's stores of D are contiguous.
  const int ty = threadIdx.x / kThreadsN;
  const int tx = threadIdx.x % kThreadsN;

  float acc[TM][TN] = {};
  for (int64_t k0 = 0; k0 < args.k; k0 += BK) {
    load_tile_to_shared<BM, kVectorRows>(a_tile, args.a, args.lda, args.m, args.k, m0, k0);
    load_tile_to_shared<BN, kVectorRows>(b_tile, args.b, args.ldb, args.n, args.k, n0, k0);
    __syncthreads();  // the slice is in shared memory

    // Four k at a time: one 32-bit shared load brings 4 FP8 values of a row,
    // decoded once into registers and used TN (A) or TM (B) times.
    for (int w = 0; w < BK / 4; ++w) {
      Float4 a[TM], b[TN];
      for (int i = 0; i < TM; ++i) {
        a[i] = fp8x4_to_float4<kFormatA>(*reinterpret_cast<const uint32_t*>(&a_tile[ty + i * kThreadsM][4 * w]));
      }
      for (int j = 0; j < TN; ++j) {
        b[j] = fp8x4_to_float4<kFormatB>(*reinterpret_cast<const uint32_t*>(&b_tile[tx + j * kThreadsN][4 * w]));
      }
      for (int kk = 0; kk < 4; ++kk) {
        for (int i = 0; i < TM; ++i) {
          for (int j = 0; j < TN; ++j) acc[i][j] += a[i].v[kk] * b[j].v[kk];
        }
      }
    }
    __syncthreads();  // everyone is done with the slice before it is overwritten
  }

  const float scale = args.a_scale * args.b_scale;
  for (int i = 0; i < TM; ++i) {
    const int64_t m = m0 + ty + i * kThreadsM;
    if (m >= args.m) break;
    for (int j = 0; j < TN; ++j) {
      const int64_t n = n0 + tx + j * kThreadsN;
      if (n < args.n) store_output(args.d, m * args.ldd + n, args.d_type, acc[i][j] * scale);
    }
  }
}

// One launch over at most kMaxGridY row tiles (gridDim.y's limit).
Status launch_lds_tiling_band(const GemmArgs& args) {
  const int64_t blocks_n = (args.n + BN - 1) / BN;
  const int64_t blocks_m = (args.m + BM - 1) / BM;
  if (blocks_n > 0x7FFFFFFF) {
    return Status::error(StatusCode::kNotSupported, "N <= 2^31 * 128 required");
  }
  const dim3 grid(static_cast<unsigned>(blocks_n), static_cast<unsigned>(blocks_m));
  const bool vector_rows = operand_rows_aligned(args, kVectorBytes);
  dispatch_fp8_formats(args.a_format, args.b_format, [&](auto format_a, auto format_b) {
    if (vector_rows) {
      lds_tiling_kernel<format_a.value, format_b.value, true><<<grid, kThreads, 0, args.stream>>>(args);
    } else {
      lds_tiling_kernel<format_a.value, format_b.value, false><<<grid, kThreads, 0, args.stream>>>(args);
    }
  });
  return status_from_launch();
}

// Every M: taller problems run as several launches, one per band of rows.
Status launch_lds_tiling(const GemmArgs& args) {
  return for_each_row_band(args, kMaxGridY * BM, launch_lds_tiling_band);
}

}  // namespace
}  // namespace fp8gemm
