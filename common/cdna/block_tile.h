/// @file block_tile.h
/// @brief The mainloop of the CDNA MFMA kernels (steps 05 and 07 on gfx942
///        and gfx950): one 128 x 128 block tile of D, multiplied over K by
///        four wavefronts of 64 x 64, with A and B staged global memory ->
///        registers -> LDS (two buffers, swizzled) -> MFMA fragments.
///
/// A block computes a 128 x 128 tile of D with four wavefronts; each wavefront
/// owns a 64 x 64 sub-tile, 4 x 4 MFMA tiles of 16 x 16, whose FP32 sums stay
/// in the MFMA accumulators. A and B reach the matrix cores in three hops:
/// global memory -> registers (16-byte loads) -> LDS (two buffers) ->
/// registers in the lane layout the instruction wants (mfma_layout.h). CDNA
/// has no cp.async (its direct-to-LDS loads are 4 bytes per lane on gfx942),
/// so the next K tile is loaded into registers before this tile's MFMAs are
/// issued and written to the other LDS buffer after them: the loads are in
/// flight while the matrix cores work.
///
///   gfx942 (CDNA3): v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8}; FNUZ formats only.
///   gfx950 (CDNA4): v_mfma_f32_16x16x128_f8f6f4, CBSZ/BLGP = 0 (e4m3) or
///                   1 (e5m2); OCP formats only. Reached through the scaled
///                   builtin with both E8M0 scales 127 (2^0 = 1.0), which
///                   clang 22 emits as v_mfma_scale_f32_16x16x128_f8f6f4.
///
/// What a kernel needs: K % 16 == 0 and rows of A and B 16-byte aligned, so
/// that every 16-byte load is wholly inside or wholly outside the matrix; M
/// and N are free (rows past the edge load as zeros). The chapter is
/// steps/05_matrix_cores/CDNA.md. Compiled for gfx942 and gfx950 and checked
/// in the assembly; not yet run on AMD hardware.
#pragma once

#include <cstdint>

#include "common/api/gemm.h"
#include "common/cdna/mfma_layout.h"
#include "common/device/kernel.h"

#if !defined(FP8GEMM_HIP_DEVICE_ONLY)
#include <string>
#endif

namespace fp8gemm {
namespace cdna {

inline constexpr int kBlockM = 128;                          ///< Rows of D per block.
inline constexpr int kBlockN = 128;                          ///< Columns of D per block.
inline constexpr int kWaveM = 64;                            ///< Rows of D per wavefront.
inline constexpr int kWaveN = 64;                            ///< Columns of D per wavefront.
inline constexpr int kWavesN = kBlockN / kWaveN;             ///< Wavefronts along N.
inline constexpr int kWaves = (kBlockM / kWaveM) * kWavesN;  ///< Wavefronts per block: 4.
inline constexpr int kThreads = kWaves * mfma::kWaveLanes;   ///< Threads per block: 256.
inline constexpr int kTilesM = kWaveM / 16;                  ///< MFMA tiles per wavefront along M.
inline constexpr int kTilesN = kWaveN / 16;                  ///< And along N.
inline constexpr int kChunkBytes = 16;                       ///< One global load: 16 FP8 values.

// The per-architecture part: the instruction and the K depth of a block tile.
// A K tile of A and B in LDS: 2 * 128 * kBlockK bytes; two of them (double
// buffering) make 32 KB on gfx942 and 64 KB on gfx950. Two blocks of these
// buffers alone would fit gfx942's 64 KB of LDS, but a kernel that adds any
// LDS of its own (steps 07 on: the amax scratch, 32 784 bytes in all) fits
// one block per CU there; gfx950's 160 KB hold two.
#if defined(__gfx950__)
using Mfma = mfma::Mfma16x16x128F8f6f4;
inline constexpr int kBlockK = 128;
inline constexpr int kSwizzleRowShift = 0;
#else  // gfx942, and the host pass (which only needs the block shape)
/// The lane layout of this architecture's MFMA (mfma_layout.h): 16x16x32 on
/// gfx942, 16x16x128 on gfx950.
using Mfma = mfma::Mfma16x16x32Fp8;
/// K per block tile (one LDS buffer): 64 on gfx942, 128 on gfx950.
inline constexpr int kBlockK = 64;
/// The swizzle XORs the unit with row >> this: 1 on gfx942 (two 64-byte rows
/// share the 32 banks), 0 on gfx950.
inline constexpr int kSwizzleRowShift = 1;
#endif
inline constexpr int kUnitsPerRow = kBlockK / Mfma::kRunBytes;  ///< LDS units of one run per row: 8 on both.
inline constexpr int kChunksPerRow = kBlockK / kChunkBytes;     ///< 16-byte chunks per row of a K tile.
/// 16-byte chunks each thread loads per operand and K tile.
inline constexpr int kChunksPerThread = kBlockM * kChunksPerRow / kThreads;
static_assert(kBlockM == kBlockN, "A and B tiles are loaded by the same code");
static_assert(kBlockK % Mfma::kK == 0, "a block tile is a whole number of MFMA K steps");
static_assert(kUnitsPerRow == 8, "the swizzle permutes 8 units per row");

typedef uint32_t Chunk __attribute__((ext_vector_type(4)));                  ///< One global load.
typedef uint32_t Run __attribute__((ext_vector_type(Mfma::kRunBytes / 4)));  ///< One LDS read.
typedef float Accumulator __attribute__((ext_vector_type(4)));               ///< A lane's 4 FP32 of one MFMA tile.
#if defined(__gfx950__)
typedef int Fragment __attribute__((ext_vector_type(8)));  // 32 FP8 values in 8 VGPRs
#else
/// A lane's operand of one MFMA: 8 FP8 values in 2 VGPRs on gfx942 (as its
/// builtins take them), 32 in 8 VGPRs on gfx950.
typedef long Fragment;
#endif
static_assert(sizeof(Fragment) == Mfma::kOperandBytes, "a fragment is one lane's operand");

/// A wavefront's accumulators: its 4 x 4 MFMA tiles of 16 x 16.
using WaveAccumulators = Accumulator[kTilesM][kTilesN];

/// Where this thread's wavefront sits in the block tile: its first row and column.
struct WaveOrigin {
  int row;  ///< First row of the wavefront's 64 x 64 sub-tile within the block tile.
  int col;  ///< First column.
};

/// The sub-tile of the calling thread's wavefront.
__device__ inline WaveOrigin wave_origin() {
  const int wave = static_cast<int>(threadIdx.x) / mfma::kWaveLanes;
  return {(wave / kWavesN) * kWaveM, (wave % kWavesN) * kWaveN};
}

/// Where element (row, k) of a K tile lives in LDS. Rows are kBlockK bytes,
/// cut into 8 units of one run (8 bytes on gfx942, 16 on gfx950). A fragment
/// read has 16 lanes reading the same unit of 16 consecutive rows; unswizzled,
/// they would all hit the same banks. XOR-ing the unit with the row spreads the
/// lanes that one LDS cycle serves (128 bytes over 32 banks: 16 lanes of 8
/// bytes on gfx942, 8 lanes of 16 bytes on gfx950) over distinct banks. Rows
/// are 64 bytes on gfx942, so two rows share the 32 banks: there the XOR uses
/// row / 2, and odd rows take the other half of the banks.
__device__ inline int lds_offset(int row, int k) {
  const int unit = (k / Mfma::kRunBytes) ^ ((row >> kSwizzleRowShift) % kUnitsPerRow);
  return row * kBlockK + unit * Mfma::kRunBytes + k % Mfma::kRunBytes;
}

/// True where this architecture's MFMA reads both formats: FNUZ on gfx942,
/// OCP on gfx950. A kernel instantiated for other formats compiles to an
/// empty body that its launcher never starts.
template <Fp8Format kFormatA, Fp8Format kFormatB>
constexpr bool formats_native_here() {
#if defined(__gfx950__)
  return !fp8_is_fnuz(kFormatA) && !fp8_is_fnuz(kFormatB);
#elif defined(__gfx942__)
  return fp8_is_fnuz(kFormatA) && fp8_is_fnuz(kFormatB);
#else
  return false;
#endif
}

/// One MFMA: acc += A_fragment * B_fragment for a 16 x 16 x Mfma::kK step.
template <Fp8Format kFormatA, Fp8Format kFormatB>
__device__ inline Accumulator mfma_fp8(Fragment a, Fragment b, Accumulator acc) {
#if defined(__gfx950__)
  // cbsz / blgp select the formats of A / B; opsel is 0. The scale operands
  // are E8M0 exponents, 2^(byte - 127): 127 is 1.0, the "no scale" meant
  // here, while 0 would be 2^-127. LLVM happens to turn two constant zero
  // scales into the unscaled opcode, which is why 0 used to work; 127 says
  // what is meant without relying on that rewrite. clang 22 then emits the
  // scaled form, v_mfma_scale_f32_16x16x128_f8f6f4 with 0x7f in a VGPR.
  // (Named constants: clang 22 crashes when the call itself is the argument.)
  constexpr int kCbsz = mfma::f8f6f4_format_code(kFormatA);
  constexpr int kBlgp = mfma::f8f6f4_format_code(kFormatB);
  return __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(a, b, acc, kCbsz, kBlgp, 0, mfma::kE8m0One, 0,
                                                          mfma::kE8m0One);
#elif defined(__gfx942__)
  constexpr bool kAE4M3 = kFormatA == Fp8Format::kE4M3Fnuz;
  constexpr bool kBE4M3 = kFormatB == Fp8Format::kE4M3Fnuz;
  if constexpr (kAE4M3 && kBE4M3) return __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a, b, acc, 0, 0, 0);
  else if constexpr (kAE4M3) return __builtin_amdgcn_mfma_f32_16x16x32_fp8_bf8(a, b, acc, 0, 0, 0);
  else if constexpr (kBE4M3) return __builtin_amdgcn_mfma_f32_16x16x32_bf8_fp8(a, b, acc, 0, 0, 0);
  else return __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8(a, b, acc, 0, 0, 0);
#else
  return acc;
#endif
}

/// One K tile of A and B on its way to LDS: this thread's 16-byte chunks of both.
struct StagedKTile {
  Chunk a[kChunksPerThread];  ///< Chunks of the A tile.
  Chunk b[kChunksPerThread];  ///< Chunks of the B tile.
};

/// Global -> registers: this thread's chunks of the K tile starting at k0 of
/// the 128 rows starting at row0 of A or B. Chunks past the last row or past K
/// are zero, which adds nothing to the sums (K % 16 == 0: none straddles K).
__device__ inline void load_tile_to_registers(Chunk (&stage)[kChunksPerThread], const uint8_t* matrix, int64_t ld,
                                              int64_t rows, int64_t k, int64_t row0, int64_t k0) {
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i) {
    const int chunk = static_cast<int>(threadIdx.x) + i * kThreads;
    const int64_t row = row0 + chunk / kChunksPerRow;
    const int64_t col = k0 + (chunk % kChunksPerRow) * kChunkBytes;
    stage[i] = (row < rows && col < k) ? *reinterpret_cast<const Chunk*>(matrix + row * ld + col) : Chunk{0, 0, 0, 0};
  }
}

/// Registers -> LDS, one run at a time (a 16-byte chunk is two runs on gfx942,
/// which the swizzle may place in either order).
__device__ inline void store_registers_to_lds(const Chunk (&stage)[kChunksPerThread], uint8_t* tile) {
  constexpr int kRunsPerChunk = kChunkBytes / Mfma::kRunBytes;
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i) {
    const int chunk = static_cast<int>(threadIdx.x) + i * kThreads;
    const int row = chunk / kChunksPerRow;
    const int k = (chunk % kChunksPerRow) * kChunkBytes;
    union {
      Chunk chunk;
      Run runs[kRunsPerChunk];
    } data = {stage[i]};
#pragma unroll
    for (int r = 0; r < kRunsPerChunk; ++r) {
      *reinterpret_cast<Run*>(tile + lds_offset(row, k + r * Mfma::kRunBytes)) = data.runs[r];
    }
  }
}

/// Which operand a fragment belongs to.
enum class Side { kA, kB };

/// LDS -> registers: one lane's operand of one MFMA, for the 16 rows of the
/// tile starting at row0 and MFMA K step `step`. The layout functions say which
/// (row, k) the first byte of each of the lane's runs holds; a run is
/// kRunBytes consecutive k, so one LDS read. Column j of the instruction's B
/// is row j of the stored N x K tile, so both operands read rows of a tile.
template <Side kSide>
__device__ inline Fragment load_fragment(const uint8_t* tile, int row0, int step) {
  const int lane = static_cast<int>(threadIdx.x) % mfma::kWaveLanes;
  union {
    Fragment fragment;
    Run runs[Mfma::kRuns];
  } f;
#pragma unroll
  for (int run = 0; run < Mfma::kRuns; ++run) {
    const int byte = run * Mfma::kRunBytes;
    int row, k;
    if constexpr (kSide == Side::kA) {
      const mfma::MatrixIndex e = Mfma::a_element_of(lane, byte);  // (i, k)
      row = e.row, k = e.col;
    } else {
      const mfma::MatrixIndex e = Mfma::b_element_of(lane, byte);  // (k, j)
      row = e.col, k = e.row;
    }
    f.runs[run] = *reinterpret_cast<const Run*>(tile + lds_offset(row0 + row, step * Mfma::kK + k));
  }
  return f.fragment;
}

/// The K loop of one block tile: acc += A[block_row.., k] * B[block_col.., k]
/// over K tiles [first_tile, end_tile) (all of K by default; split-K gives a
/// block a run of them) for the calling wavefront's 64 x 64 sub-tile, with
/// LDS double-buffered and the next K tile's global loads in flight during
/// this tile's MFMAs. After the MFMAs of K tile t (columns kBlockK t onwards),
/// it calls `after_k_tile(t)`, which may read and rewrite acc (step 07 folds
/// its block-scaled partial sums there); pass a lambda that does nothing for
/// a plain product. Every thread of the block must call it (it has barriers).
template <Fp8Format kFormatA, Fp8Format kFormatB, typename AfterKTile>
__device__ inline void multiply_block_tile(const GemmArgs& args, int64_t block_row, int64_t block_col,
                                           WaveAccumulators& acc, AfterKTile&& after_k_tile, int64_t first_tile = 0,
                                           int64_t end_tile = -1) {
  __shared__ __attribute__((aligned(16))) uint8_t lds_a[2][kBlockM * kBlockK];
  __shared__ __attribute__((aligned(16))) uint8_t lds_b[2][kBlockN * kBlockK];
  const WaveOrigin wave = wave_origin();

  StagedKTile stage;
  const int64_t k_tiles = end_tile < 0 ? (args.k + kBlockK - 1) / kBlockK : end_tile;
  if (first_tile >= k_tiles) return;  // an empty run: acc stays as it is
  load_tile_to_registers(stage.a, args.a, args.lda, args.m, args.k, block_row, first_tile * kBlockK);
  load_tile_to_registers(stage.b, args.b, args.ldb, args.n, args.k, block_col, first_tile * kBlockK);
  store_registers_to_lds(stage.a, lds_a[0]);
  store_registers_to_lds(stage.b, lds_b[0]);
  __syncthreads();

  for (int64_t t = first_tile; t < k_tiles; ++t) {
    const int buffer = static_cast<int>((t - first_tile) & 1);
    const bool has_next = t + 1 < k_tiles;
    // Issue the next tile's global loads first; nothing waits for them until
    // they are written to LDS after this tile's MFMAs.
    if (has_next) {
      load_tile_to_registers(stage.a, args.a, args.lda, args.m, args.k, block_row, (t + 1) * kBlockK);
      load_tile_to_registers(stage.b, args.b, args.ldb, args.n, args.k, block_col, (t + 1) * kBlockK);
    }
#pragma unroll
    for (int step = 0; step < kBlockK / Mfma::kK; ++step) {
      Fragment a[kTilesM];
      Fragment b[kTilesN];
#pragma unroll
      for (int i = 0; i < kTilesM; ++i) a[i] = load_fragment<Side::kA>(lds_a[buffer], wave.row + 16 * i, step);
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) b[j] = load_fragment<Side::kB>(lds_b[buffer], wave.col + 16 * j, step);
#pragma unroll
      for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
        for (int j = 0; j < kTilesN; ++j) acc[i][j] = mfma_fp8<kFormatA, kFormatB>(a[i], b[j], acc[i][j]);
      }
    }
    after_k_tile(t);
    // The other buffer was last read in iteration t - 1, before the barrier
    // that ended it, so it is free: one barrier per K tile.
    if (has_next) {
      store_registers_to_lds(stage.a, lds_a[buffer ^ 1]);
      store_registers_to_lds(stage.b, lds_b[buffer ^ 1]);
    }
    __syncthreads();
  }
}

/// The launch checks the CDNA kernels share: the formats this GPU's MFMA
/// reads (FNUZ on gfx942, OCP on gfx950; known only at run time, in a HIP
/// build with the ROCm runtime), and a grid of 128 x 128 tiles with the row
/// tiles on grid.y. Returns kNotSupported naming the rule, or fills `grid`.
inline Status prepare_cdna_launch(const GemmArgs& args, dim3* grid) {
  const bool a_fnuz = fp8_is_fnuz(args.a_format);
  const bool b_fnuz = fp8_is_fnuz(args.b_format);
#if !defined(FP8GEMM_HIP_DEVICE_ONLY)
  int device = 0;
  hipDeviceProp_t prop;
  if (hipGetDevice(&device) != hipSuccess || hipGetDeviceProperties(&prop, device) != hipSuccess) {
    return Status::error(StatusCode::kRuntimeError, "cannot query the current GPU");
  }
  const std::string arch = prop.gcnArchName;  // e.g. "gfx942:sramecc+:xnack-"
  const bool cdna3 = arch.rfind("gfx942", 0) == 0;
  const bool cdna4 = arch.rfind("gfx950", 0) == 0;
  if (!cdna3 && !cdna4) {
    return Status::error(StatusCode::kNotSupported, "built for gfx942 and gfx950, this GPU is " + arch);
  }
  if (cdna3 && !(a_fnuz && b_fnuz)) {
    return Status::error(StatusCode::kNotSupported,
                         "on gfx942: A and B must be e4m3fnuz or e5m2fnuz (the CDNA3 MFMA formats)");
  }
  if (cdna4 && (a_fnuz || b_fnuz)) {
    return Status::error(StatusCode::kNotSupported,
                         "on gfx950: A and B must be e4m3 or e5m2 (OCP, the CDNA4 MFMA formats)");
  }
#endif
  if (a_fnuz != b_fnuz) {
    return Status::error(StatusCode::kNotSupported, "A and B must both be FNUZ (gfx942) or both OCP (gfx950)");
  }
  const int64_t blocks_m = (args.m + kBlockM - 1) / kBlockM;
  const int64_t blocks_n = (args.n + kBlockN - 1) / kBlockN;
  if (blocks_m > kMaxGridY || blocks_n > 0x7FFFFFFF) {  // row tiles on grid.y
    return Status::error(StatusCode::kNotSupported, "M <= 65535 * 128 required");
  }
  *grid = dim3(static_cast<unsigned>(blocks_n), static_cast<unsigned>(blocks_m));
  return Status::success();
}

}  // namespace cdna
}  // namespace fp8gemm
