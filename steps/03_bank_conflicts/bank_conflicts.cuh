// Step 03 — step 02 without shared-memory bank conflicts.
//
// D[m,n] = a_scale * b_scale * sum_k A[m,k] * B[n,k]
//
// The algorithm is step 02's: BM x BN block tile, BK-deep FP8 slices of A and
// B in shared memory, TM x TN outputs per thread. Two things change, both
// about which shared-memory bank a load hits:
//  1. the lanes of a warp form a 4 x 8 patch of threads instead of 2 x 16, so
//     a load of B is served from 8 rows of the tile instead of 16;
//  2. the 16-byte vectors of each tile row are stored in a swizzled order
//     (XOR with the row's position in the bank line), so that those 8 rows —
//     which in step 02's layout share 2 of the 32 banks — land on 8 banks.
// Step 02's B loads are 8-way bank conflicts; here every load and store is
// conflict-free. The chapter (README.md) derives both numbers.
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

// Shared memory has 32 banks of 4 bytes: addresses 128 bytes apart share a
// bank. A 64-byte FP8 tile row covers 16 banks, so 2 rows fill one bank line.
constexpr int kBankLineBytes = 32 * 4;
constexpr int kRowsPerBankLine = kBankLineBytes / BK;

// The 32 lanes of a warp (half a wavefront on AMD) own a 4 x 8 patch of
// threads: a load then touches 4 rows of the A tile and 8 rows of the B tile.
constexpr int kLaneRows = 4;
constexpr int kLaneCols = 8;
constexpr int kLaneGroup = kLaneRows * kLaneCols;  // 32
constexpr int kGroupsN = kThreadsN / kLaneCols;    // lane groups side by side along N

static_assert(BK % kVectorBytes == 0, "a tile row is a whole number of 16-byte vectors");
static_assert(kThreads % kWarpSize == 0, "whole warps (NVIDIA) and wavefronts (AMD)");
static_assert(kThreadsN % kLaneCols == 0 && kThreadsM % kLaneRows == 0, "lane groups tile the threads");
static_assert(BK <= kBankLineBytes && kLaneCols <= kBankLineBytes / kVectorBytes,
              "the swizzle gives any 8 rows that start at a multiple of 8 distinct banks");

/// Column (byte) where logical column `col` of tile row `row` is stored: the
/// row's 16-byte vectors are permuted by XOR with the index of the bank line
/// the row is in (mod vectors per row). A vector stays whole, so 16-byte loads
/// and stores still work; rows in different bank lines see their vectors, and
/// with them the banks of any given column, rotated.
__device__ inline int swizzled_column(int row, int col) {
  const int vector = (col / kVectorBytes) ^ ((row / kRowsPerBankLine) % kVectorsPerRow);
  return vector * kVectorBytes + col % kVectorBytes;
}

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
/// thread per pass, each vector at its swizzled place. Consecutive threads
/// take consecutive vectors of a row, so a warp reads whole rows of the slice:
/// coalesced. Outside the matrix the tile holds zeros.
template <int kRows, bool kVectorRows>
__device__ inline void load_tile_to_shared(uint8_t (*tile)[BK], const uint8_t* matrix, int64_t ld, int64_t rows,
                                           int64_t k, int64_t row0, int64_t k0) {
  for (int v = threadIdx.x; v < kRows * kVectorsPerRow; v += kThreads) {
    const int r = v / kVectorsPerRow;
    const int c = (v % kVectorsPerRow) * kVectorBytes;
    const int64_t row = row0 + r;
    const int64_t col = k0 + c;
    const Fp8x16 x = row < rows ? load_vector<kVectorRows>(matrix + row * ld + col, k - col) : Fp8x16{};
    *reinterpret_cast<Fp8x16*>(&tile[r][swizzled_column(r, c)]) = x;
  }
}

template <Fp8Format kFormatA, Fp8Format kFormatB, bool kVectorRows>
__global__ void FP8GEMM_LAUNCH_BOUNDS(kThreads) bank_conflicts_kernel(GemmArgs args) {
  // One slice of A and of B, K contiguous, 16-byte vectors swizzled per row.
  alignas(16) __shared__ uint8_t a_tile[BM][BK];
  alignas(16) __shared__ uint8_t b_tile[BN][BK];

  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * BM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * BN;
  // The thread's patch: rows ty + i * kThreadsM and columns tx + j * kThreadsN
  // of the block tile, as in step 02; (ty, tx) now come from the lane's place
  // in its 4 x 8 lane group.
  const int group = threadIdx.x / kLaneGroup;
  const int lane = threadIdx.x % kLaneGroup;
  const int ty = (group / kGroupsN) * kLaneRows + lane / kLaneCols;
  const int tx = (group % kGroupsN) * kLaneCols + lane % kLaneCols;

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
        const int row = ty + i * kThreadsM;
        a[i] = fp8x4_to_float4<kFormatA>(*reinterpret_cast<const uint32_t*>(&a_tile[row][swizzled_column(row, 4 * w)]));
      }
      for (int j = 0; j < TN; ++j) {
        const int row = tx + j * kThreadsN;
        b[j] = fp8x4_to_float4<kFormatB>(*reinterpret_cast<const uint32_t*>(&b_tile[row][swizzled_column(row, 4 * w)]));
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
Status launch_bank_conflicts_band(const GemmArgs& args) {
  const int64_t blocks_n = (args.n + BN - 1) / BN;
  const int64_t blocks_m = (args.m + BM - 1) / BM;
  if (blocks_n > 0x7FFFFFFF) {
    return Status::error(StatusCode::kNotSupported, "N <= 2^31 * 128 required");
  }
  const dim3 grid(static_cast<unsigned>(blocks_n), static_cast<unsigned>(blocks_m));
  const bool vector_rows = operand_rows_aligned(args, kVectorBytes);
  dispatch_fp8_formats(args.a_format, args.b_format, [&](auto format_a, auto format_b) {
    if (vector_rows) {
      bank_conflicts_kernel<format_a.value, format_b.value, true><<<grid, kThreads, 0, args.stream>>>(args);
    } else {
      bank_conflicts_kernel<format_a.value, format_b.value, false><<<grid, kThreads, 0, args.stream>>>(args);
    }
  });
  return status_from_launch();
}

// Every M: taller problems run as several launches, one per band of rows.
Status launch_bank_conflicts(const GemmArgs& args) {
  return for_each_row_band(args, kMaxGridY * BM, launch_bank_conflicts_band);
}

}  // namespace
}  // namespace fp8gemm
