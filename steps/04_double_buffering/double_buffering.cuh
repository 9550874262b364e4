// Step 04 — double buffering: the next slice is on its way while this one is
// computed, and FP8 is decoded once per block instead of once per thread.
//
// D[m,n] = a_scale * b_scale * sum_k A[m,k] * B[n,k]
//
// Steps 02 and 03 load a slice, wait, compute, wait: the block's warps stop
// for the whole latency of global memory once per slice, and every thread
// decodes the FP8 values it reads (TM + TN decodes per TM * TN FFMAs). Here:
//  1. shared memory holds kStages = 2 slices ("stages"). While the block
//     computes from stage t % 2, each thread has already started the copy of
//     its 16-byte vectors of slice t + 1 — with cp.async on CUDA (global ->
//     shared without registers), with a plain load into registers on AMD and
//     where rows are not 16-byte aligned. One barrier per slice.
//  2. the thread that copied a vector decodes it and stores 16 floats into
//     the next stage, transposed (M-major: m contiguous, a row of the stage is one k), so the
//     compute loop is an FP32 GEMM: two 16-byte shared loads per 8 values, no
//     conversion, and (BM + BN) / (BM * BN) = 1/64 decodes per FFMA instead
//     of 1/4. The chapter (README.md) has the arithmetic.
//
// Everything below is in an unnamed namespace: a copy of this folder (a fork)
// compiles the same names into its own unit, and both link into one program.
#pragma once

#include <cstddef>

#include "common/device/kernel.h"

namespace fp8gemm {
namespace {

/// The tile shape: a template parameter so that sweep.cu can time others.
template <int kBM, int kBN, int kBK, int kTM, int kTN>
struct TileShape {
  static constexpr int BM = kBM;  // rows of A (and of D) per block
  static constexpr int BN = kBN;  // rows of B (columns of D) per block
  static constexpr int BK = kBK;  // K per slice
  static constexpr int TM = kTM;  // rows of D per thread
  static constexpr int TN = kTN;  // columns of D per thread
  static constexpr int kThreads = (BM / TM) * (BN / TN);
};

// The shapes the registered step uses, chosen by sweep.cu on the H200
// (bench/results/h200/sweep_04.json, README "Choosing the tile"): the fastest
// at 4096^3, and for grids too small to fill the GPU (decode shapes) a tile a
// quarter the size, which makes four times the blocks.
using DefaultTile = TileShape<128, 128, 32, 8, 8>;  // 45.0 TFLOP/s at 4096^3
using DecodeTile = TileShape<64, 64, 32, 8, 4>;     // 5.6 TFLOP/s at 64 x 2112 x 7168 (DefaultTile: 2.7)

constexpr int kStages = 2;        // slices in shared memory: one computed, one filled
constexpr int kVectorBytes = 16;  // one 16-byte load: 16 FP8 values

// The 32 lanes of a warp (half a wavefront on AMD) own a 4 x 8 patch of
// threads, as in step 03.
constexpr int kLaneRows = 4;
constexpr int kLaneCols = 8;
constexpr int kLaneGroup = kLaneRows * kLaneCols;

// cp.async exists from sm_80 on. HIP device code and older GPUs stage the
// next slice in registers instead.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
constexpr bool kHasAsyncCopy = true;
#else
constexpr bool kHasAsyncCopy = false;
#endif

/// 16 FP8 codes: what one 16-byte load brings.
struct alignas(16) Fp8x16 {
  uint32_t word[4];
};

/// Loads the 16 bytes at `src`, of which the first `valid` lie inside the
/// matrix row; the rest read as zeros. kVectorRows: rows start on 16-byte
/// boundaries, so a full vector is one 16-byte load.
template <bool kVectorRows>
__device__ inline Fp8x16 load_vector(const uint8_t* src, int valid) {
  if (kVectorRows && valid == kVectorBytes) return *reinterpret_cast<const Fp8x16*>(src);
  Fp8x16 v{};
  for (int b = 0; b < kVectorBytes; ++b) {
    if (b < valid) v.word[b / 4] |= static_cast<uint32_t>(src[b]) << (8 * (b % 4));
  }
  return v;
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
/// Starts copying 16 bytes from global `src` (16-byte aligned) to shared
/// `dst`: the first `valid` bytes are read, the rest of dst is zero-filled.
/// .ca keeps the 128-byte line in L1: a slice of BK = 32 bytes reads one
/// 32-byte sector of each row, and the next three slices read the rest of the line.
__device__ inline void cp_async_16(void* dst, const void* src, int valid) {
  const auto shared_address = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address), "l"(src), "r"(valid)
               : "memory");
}

/// Closes the group of this thread's cp.async issued so far.
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

/// Waits until every committed cp.async group of this thread has landed; the
/// thread may then read what it copied (other threads need a barrier as well).
__device__ inline void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }
#endif

/// Bytes of dynamic shared memory a block of shape Tile needs: the FP32
/// stages of A and B, and on CUDA the landing area of cp.async.
template <typename Tile>
constexpr size_t shared_bytes() {
  constexpr size_t stages = sizeof(float) * kStages * Tile::BK * (Tile::BM + Tile::BN);
#if defined(FP8GEMM_CUDA)
  return stages + sizeof(Fp8x16) * (Tile::BM + Tile::BN) * Tile::BK / kVectorBytes;
#else
  return stages;
#endif
}
#if defined(__HIP__)
static_assert(shared_bytes<DefaultTile>() <= 64 * 1024, "fits the LDS of a CDNA3 workgroup");
static_assert(shared_bytes<DecodeTile>() <= 64 * 1024, "fits the LDS of a CDNA3 workgroup");
#endif

template <typename Tile, Fp8Format kFormatA, Fp8Format kFormatB, bool kVectorRows>
__global__ void FP8GEMM_LAUNCH_BOUNDS(Tile::kThreads) double_buffering_kernel(GemmArgs args) {
  constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK, TM = Tile::TM, TN = Tile::TN;
  constexpr int kThreadsM = BM / TM;
  constexpr int kThreadsN = BN / TN;
  constexpr int kThreads = Tile::kThreads;
  // A slice is (BM + BN) * BK / 16 vectors: the first kVectorsA of A, then B's.
  constexpr int kVectorsA = BM * BK / kVectorBytes;
  constexpr int kVectorsPerThread = (BM + BN) * BK / kVectorBytes / kThreads;
  // A thread's TM rows are TM / 4 groups of 4 consecutive rows, kGroupRowsM
  // apart (the same for columns): one 16-byte shared load per group.
  constexpr int kGroupRowsM = 4 * kThreadsM;
  constexpr int kGroupColsN = 4 * kThreadsN;
  constexpr bool kAsyncCopy = kHasAsyncCopy && kVectorRows;
  static_assert(BK % kVectorBytes == 0 && TM % 4 == 0 && TN % 4 == 0, "16-byte vectors of FP8 and of FP32");
  static_assert((BM + BN) * BK / kVectorBytes % kThreads == 0, "every thread copies the same number of vectors");
  static_assert(kVectorsA % kLaneGroup == 0, "a warp copies vectors of A or of B, not both");
  static_assert(kThreadsM % kLaneRows == 0 && kThreadsN % kLaneCols == 0, "lane groups tile the threads");
  static_assert(kThreads % kWarpSize == 0, "whole warps (NVIDIA) and wavefronts (AMD)");

  // Stages are FP32 and M-major (m contiguous): stage[s][k][m]. After them, on CUDA, the
  // landing area where cp.async puts the thread's raw vectors.
  extern __shared__ Float4 shared_memory[];
  auto a_stage = reinterpret_cast<float(*)[BK][BM]>(shared_memory);
  auto b_stage = reinterpret_cast<float(*)[BK][BN]>(a_stage + kStages);
  auto landing = reinterpret_cast<Fp8x16(*)[kThreads]>(b_stage + kStages);

  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * BM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * BN;
  const int group = threadIdx.x / kLaneGroup;
  const int lane = threadIdx.x % kLaneGroup;
  const int ty = (group / (kThreadsN / kLaneCols)) * kLaneRows + lane / kLaneCols;
  const int tx = (group % (kThreadsN / kLaneCols)) * kLaneCols + lane % kLaneCols;

  // Vector p of this thread is vector v = threadIdx.x + p * kThreads of the
  // slice: row v % rows, bytes 16 * (v / rows) of the slice. Neighbouring
  // lanes take neighbouring rows, so their transposed stores hit neighbouring
  // banks.
  struct VectorPlace {
    bool of_a;
    int row;     // row of the block's tile
    int column;  // first k of the vector within the slice
  };
  auto place_of = [](int v) {
    if (v < kVectorsA) return VectorPlace{true, v % BM, kVectorBytes * (v / BM)};
    v -= kVectorsA;
    return VectorPlace{false, v % BN, kVectorBytes * (v / BN)};
  };

  // Where this thread's vectors come from: the first byte of vector p in the
  // slice at k0 is source[p] + k0; nullptr for a row outside the matrix.
  const uint8_t* source[kVectorsPerThread];
  for (int p = 0; p < kVectorsPerThread; ++p) {
    const VectorPlace at = place_of(threadIdx.x + p * kThreads);
    const int64_t row = (at.of_a ? m0 : n0) + at.row;
    const bool inside = row < (at.of_a ? args.m : args.n);
    source[p] = inside ? (at.of_a ? args.a + row * args.lda : args.b + row * args.ldb) + at.column : nullptr;
  }
  Fp8x16 staged[kVectorsPerThread];  // the thread's vectors of the next slice

  // Starts bringing this thread's vectors of the slice at k0.
  auto fetch_slice = [&](int64_t k0) {
    for (int p = 0; p < kVectorsPerThread; ++p) {
      const int64_t k_left = args.k - k0 - place_of(threadIdx.x + p * kThreads).column;
      int valid = 0;  // bytes of the vector inside the matrix; the rest read as zeros
      if (source[p] != nullptr && k_left > 0) valid = k_left < kVectorBytes ? static_cast<int>(k_left) : kVectorBytes;
      const uint8_t* src = valid > 0 ? source[p] + k0 : args.a;  // any valid address when nothing is read
      if constexpr (kAsyncCopy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        cp_async_16(&landing[p][threadIdx.x], src, valid);
#endif
      } else {
        staged[p] = load_vector<kVectorRows>(src, valid);
      }
    }
    if constexpr (kAsyncCopy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
      cp_async_commit();
#endif
    }
  };

  // Waits for this thread's vectors, decodes them and stores them M-major (one k per row),
  // into stage s.
  auto store_slice = [&](int s) {
    if constexpr (kAsyncCopy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
      cp_async_wait_all();
#endif
      for (int p = 0; p < kVectorsPerThread; ++p) staged[p] = landing[p][threadIdx.x];
    }
    for (int p = 0; p < kVectorsPerThread; ++p) {
      const VectorPlace at = place_of(threadIdx.x + p * kThreads);
      // Element k of the vector goes to column[k * column_stride]: row at.row of stage s.
      float* column = at.of_a ? &a_stage[s][at.column][at.row] : &b_stage[s][at.column][at.row];
      const int column_stride = at.of_a ? BM : BN;
      for (int q = 0; q < kVectorBytes / 4; ++q) {
        const Float4 x =
            at.of_a ? fp8x4_to_float4<kFormatA>(staged[p].word[q]) : fp8x4_to_float4<kFormatB>(staged[p].word[q]);
        for (int e = 0; e < 4; ++e) column[(4 * q + e) * column_stride] = x.v[e];
      }
    }
  };

  // The FP32 GEMM of one stage: per k, TM / 4 + TN / 4 16-byte loads and
  // TM * TN FFMAs.
  float acc[TM][TN] = {};
  auto compute_slice = [&](int s) {
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
      for (int g = 0; g < TM / 4; ++g) {
        const Float4 x = *reinterpret_cast<const Float4*>(&a_stage[s][k][g * kGroupRowsM + 4 * ty]);
        for (int e = 0; e < 4; ++e) a[4 * g + e] = x.v[e];
      }
      for (int g = 0; g < TN / 4; ++g) {
        const Float4 x = *reinterpret_cast<const Float4*>(&b_stage[s][k][g * kGroupColsN + 4 * tx]);
        for (int e = 0; e < 4; ++e) b[4 * g + e] = x.v[e];
      }
      for (int i = 0; i < TM; ++i) {
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
      }
    }
  };

  fetch_slice(0);
  store_slice(0);
  __syncthreads();
  for (int64_t k0 = 0; k0 < args.k; k0 += BK) {
    const int s = static_cast<int>(k0 / BK) % kStages;
    const bool has_next = k0 + BK < args.k;
    if (has_next) fetch_slice(k0 + BK);  // in flight during the FFMAs below
    compute_slice(s);
    // The next stage was last read in the previous iteration, before its barrier.
    if (has_next) store_slice((s + 1) % kStages);
    __syncthreads();  // the next stage is complete, and this one free to refill
  }

  const float scale = args.a_scale * args.b_scale;
  for (int i = 0; i < TM; ++i) {
    const int64_t m = m0 + (i / 4) * kGroupRowsM + 4 * ty + i % 4;
    if (m >= args.m) continue;
    for (int j = 0; j < TN; ++j) {
      const int64_t n = n0 + (j / 4) * kGroupColsN + 4 * tx + j % 4;
      if (n < args.n) store_output(args.d, m * args.ldd + n, args.d_type, acc[i][j] * scale);
    }
  }
}

/// One launch of `kernel`, step 04's kernel for tile shape Tile and one pair
/// of formats, over at most kMaxGridY row tiles.
template <typename Tile, typename Kernel>
Status launch_band(Kernel kernel, const GemmArgs& args) {
  const int64_t blocks_n = (args.n + Tile::BN - 1) / Tile::BN;
  const int64_t blocks_m = (args.m + Tile::BM - 1) / Tile::BM;
  if (blocks_n > 0x7FFFFFFF) {
    return Status::error(StatusCode::kNotSupported, "N <= 2^31 * BN required");
  }
  const dim3 grid(static_cast<unsigned>(blocks_n), static_cast<unsigned>(blocks_m));
  constexpr size_t kSharedBytes = shared_bytes<Tile>();
  if constexpr (kSharedBytes > 48 * 1024) {  // above 48 KiB a kernel must opt in
    const cudaError_t attribute_error =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSharedBytes));
    if (attribute_error != cudaSuccess) return status_from_launch();
  }
  kernel<<<grid, Tile::kThreads, kSharedBytes, args.stream>>>(args);
  return status_from_launch();
}

/// One launch with tile shape Tile over at most kMaxGridY row tiles: the
/// kernel for the operands' formats, with 16-byte row loads where every row
/// starts on a 16-byte boundary.
template <typename Tile>
Status launch_band_with_tile(const GemmArgs& args) {
  const bool vector_rows = operand_rows_aligned(args, kVectorBytes);
  return dispatch_fp8_formats(args.a_format, args.b_format, [&](auto format_a, auto format_b) {
    return vector_rows ? launch_band<Tile>(double_buffering_kernel<Tile, format_a.value, format_b.value, true>, args)
                       : launch_band<Tile>(double_buffering_kernel<Tile, format_a.value, format_b.value, false>, args);
  });
}

/// Launches with tile shape Tile; taller problems than one grid can hold run
/// as several launches, one per band of rows.
template <typename Tile>
Status launch_with_tile(const GemmArgs& args) {
  return for_each_row_band(args, kMaxGridY * Tile::BM, launch_band_with_tile<Tile>);
}

Status launch_double_buffering(const GemmArgs& args) {
  // DefaultTile unless its grid would leave multiprocessors idle.
  int device = 0, multiprocessors = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return status_from_launch();
  }
  const int64_t default_blocks =
      ((args.m + DefaultTile::BM - 1) / DefaultTile::BM) * ((args.n + DefaultTile::BN - 1) / DefaultTile::BN);
  return default_blocks >= multiprocessors ? launch_with_tile<DefaultTile>(args) : launch_with_tile<DecodeTile>(args);
}

}  // namespace
}  // namespace fp8gemm
