// Step 05 (AMD) — matrix cores: FP8 MFMA on CDNA3 (gfx942) and CDNA4 (gfx950).
//
// D[m,n] = a_scale * b_scale * sum_k A[m,k] * B[n,k]
//
// A block computes a 128 x 128 tile of D with four wavefronts; each wavefront
// owns a 64 x 64 sub-tile, 4 x 4 MFMA tiles of 16 x 16, whose FP32 sums stay
// in the MFMA accumulators for the whole K loop. A and B reach the matrix cores
// in three hops: global memory -> registers (16-byte loads) -> LDS (two
// buffers) -> registers in the lane layout the instruction wants
// (common/cdna/mfma_layout.h). CDNA has no cp.async (its direct-to-LDS loads are
// 4 bytes per lane on gfx942), so the next K tile is loaded into registers
// before this tile's MFMAs are issued and written to the other LDS buffer
// after them: the loads are in flight while the matrix cores work.
//
//   gfx942 (CDNA3): v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8}; FNUZ formats only.
//   gfx950 (CDNA4): v_mfma_f32_16x16x128_f8f6f4, CBSZ/BLGP = 0 (e4m3) or
//                   1 (e5m2); OCP formats only. Reached through the scaled
//                   builtin with zero scale operands, which clang lowers to
//                   the unscaled instruction.
//
// Constraints (kNotSupported from the registry or the launcher):
//   K % 16 == 0 and rows of A, B (and D: the registry's rule) 16-byte aligned,
//   so every 16-byte load is wholly inside or wholly outside the matrix;
//   A and B both FNUZ on gfx942, both OCP on gfx950. M and N are free: rows
//   past the edge load as zeros and their results are not stored.
//
// Compiled for gfx942 and gfx950 and checked in the assembly (MFMA present, no
// scratch, LDS within limits); the lane layouts are tested on the CPU by
// simulating the wavefront. Not yet run on AMD hardware.
#include "common/api/registry.h"
#include "common/cdna/mfma_layout.h"
#include "common/device/kernel.h"

#if !defined(FP8GEMM_HIP_DEVICE_ONLY)
#include <string>
#endif

namespace fp8gemm {
namespace {

constexpr int kBlockM = 128;  // rows of D per block
constexpr int kBlockN = 128;  // columns of D per block
constexpr int kWaveM = 64;    // rows of D per wavefront
constexpr int kWaveN = 64;    // columns of D per wavefront
constexpr int kWavesN = kBlockN / kWaveN;
constexpr int kThreads = (kBlockM / kWaveM) * kWavesN * mfma::kWaveLanes;  // 256
constexpr int kTilesM = kWaveM / 16;                                       // MFMA tiles per wavefront along M
constexpr int kTilesN = kWaveN / 16;                                       // and along N
constexpr int kChunkBytes = 16;                                            // one global load: 16 FP8 values

// The per-architecture part: the instruction and the K depth of a block tile.
// A K tile of A and B in LDS: 2 * 128 * kBlockK bytes; two of them (double
// buffering) make 32 KB on gfx942 (two blocks fit its 64 KB LDS) and 64 KB on
// gfx950 (two blocks fit its 160 KB).
#if defined(__gfx950__)
using Mfma = mfma::Mfma16x16x128F8f6f4;
constexpr int kBlockK = 128;
constexpr int kSwizzleRowShift = 0;
#else  // gfx942, and the host pass (which only needs the block shape)
using Mfma = mfma::Mfma16x16x32Fp8;
constexpr int kBlockK = 64;
constexpr int kSwizzleRowShift = 1;
#endif
constexpr int kUnitsPerRow = kBlockK / Mfma::kRunBytes;  // 8 on both
constexpr int kChunksPerRow = kBlockK / kChunkBytes;
constexpr int kChunksPerThread = kBlockM * kChunksPerRow / kThreads;  // per operand and K tile
static_assert(kBlockM == kBlockN, "A and B tiles are loaded by the same code");
static_assert(kBlockK % Mfma::kK == 0, "a block tile is a whole number of MFMA K steps");
static_assert(kUnitsPerRow == 8, "the swizzle permutes 8 units per row");

typedef uint32_t Chunk __attribute__((ext_vector_type(4)));                  // one global load
typedef uint32_t Run __attribute__((ext_vector_type(Mfma::kRunBytes / 4)));  // one LDS read
typedef float Accumulator __attribute__((ext_vector_type(4)));
#if defined(__gfx950__)
typedef int Fragment __attribute__((ext_vector_type(8)));  // 32 FP8 values in 8 VGPRs
#else
typedef long Fragment;  // 8 FP8 values in 2 VGPRs, as the gfx942 builtins take them
#endif
static_assert(sizeof(Fragment) == Mfma::kOperandBytes, "a fragment is one lane's operand");

// Where element (row, k) of a K tile lives in LDS. Rows are kBlockK bytes,
// cut into 8 units of one run (8 bytes on gfx942, 16 on gfx950). A fragment
// read has 16 lanes reading the same unit of 16 consecutive rows; unswizzled,
// they would all hit the same banks. XOR-ing the unit with the row spreads the
// lanes that one LDS cycle serves (128 bytes over 32 banks: 16 lanes of 8
// bytes on gfx942, 8 lanes of 16 bytes on gfx950) over distinct banks. Rows
// are 64 bytes on gfx942, so two rows share the 32 banks: there the XOR uses
// row / 2, and odd rows take the other half of the banks.
__device__ inline int lds_offset(int row, int k) {
  const int unit = (k / Mfma::kRunBytes) ^ ((row >> kSwizzleRowShift) % kUnitsPerRow);
  return row * kBlockK + unit * Mfma::kRunBytes + k % Mfma::kRunBytes;
}

// True where this architecture's MFMA reads both formats: FNUZ on gfx942,
// OCP on gfx950. Other instantiations compile to an empty kernel that the
// launcher never starts.
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

// One MFMA: acc += A_fragment * B_fragment for a 16 x 16 x Mfma::kK step.
template <Fp8Format kFormatA, Fp8Format kFormatB>
__device__ inline Accumulator mfma_fp8(Fragment a, Fragment b, Accumulator acc) {
#if defined(__gfx950__)
  // cbsz / blgp select the formats of A / B; opsel and the E8M0 scales are 0.
  // (Named constants: clang 22 crashes when the call itself is the argument.)
  constexpr int kCbsz = mfma::f8f6f4_format_code(kFormatA);
  constexpr int kBlgp = mfma::f8f6f4_format_code(kFormatB);
  return __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(a, b, acc, kCbsz, kBlgp, 0, 0, 0, 0);
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

// Global -> registers: this thread's chunks of the K tile starting at k0 of
// the 128 rows starting at row0 of A or B. Chunks past the last row or past K
// are zero, which adds nothing to the sums (K % 16 == 0: none straddles K).
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

// Registers -> LDS, one run at a time (a 16-byte chunk is two runs on gfx942,
// which the swizzle may place in either order).
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

enum class Side { kA, kB };

// LDS -> registers: one lane's operand of one MFMA, for the 16 rows of the
// tile starting at row0 and MFMA K step `step`. The layout functions say which
// (row, k) the first byte of each of the lane's runs holds; a run is
// kRunBytes consecutive k, so one LDS read. Column j of the instruction's B
// is row j of the stored N x K tile, so both operands read rows of a tile.
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

// Epilogue: per-tensor scales, then BF16 or FP32 (kType is a template argument
// so that the type test is not repeated for each of the 64 values). Lanes 16
// apart hold rows 4 apart; the 16 lanes of a row write 16 consecutive columns.
template <OutputType kType>
__device__ inline void store_tile(const GemmArgs& args, const Accumulator (&acc)[kTilesM][kTilesN], int64_t row0,
                                  int64_t col0) {
  const int lane = static_cast<int>(threadIdx.x) % mfma::kWaveLanes;
  const float scale = args.a_scale * args.b_scale;
#pragma unroll
  for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
    for (int j = 0; j < kTilesN; ++j) {
#pragma unroll
      for (int r = 0; r < Mfma::kAccumulators; ++r) {
        const mfma::MatrixIndex e = Mfma::d_element_of(lane, r);
        const int64_t row = row0 + 16 * i + e.row;
        const int64_t col = col0 + 16 * j + e.col;
        if (row < args.m && col < args.n) store_output(args.d, row * args.ldd + col, kType, acc[i][j][r] * scale);
      }
    }
  }
}

template <Fp8Format kFormatA, Fp8Format kFormatB>
__device__ inline void gemm_block(const GemmArgs& args) {
  __shared__ __attribute__((aligned(16))) uint8_t lds_a[2][kBlockM * kBlockK];
  __shared__ __attribute__((aligned(16))) uint8_t lds_b[2][kBlockN * kBlockK];

  const int wave = static_cast<int>(threadIdx.x) / mfma::kWaveLanes;
  const int wave_row = (wave / kWavesN) * kWaveM;  // this wavefront's sub-tile within the block tile
  const int wave_col = (wave % kWavesN) * kWaveN;
  const int64_t block_row = static_cast<int64_t>(blockIdx.y) * kBlockM;
  const int64_t block_col = static_cast<int64_t>(blockIdx.x) * kBlockN;

  Accumulator acc[kTilesM][kTilesN];
#pragma unroll
  for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
    for (int j = 0; j < kTilesN; ++j) acc[i][j] = Accumulator{0.0f, 0.0f, 0.0f, 0.0f};
  }

  Chunk stage_a[kChunksPerThread];
  Chunk stage_b[kChunksPerThread];
  const int64_t k_tiles = (args.k + kBlockK - 1) / kBlockK;
  load_tile_to_registers(stage_a, args.a, args.lda, args.m, args.k, block_row, 0);
  load_tile_to_registers(stage_b, args.b, args.ldb, args.n, args.k, block_col, 0);
  store_registers_to_lds(stage_a, lds_a[0]);
  store_registers_to_lds(stage_b, lds_b[0]);
  __syncthreads();

  for (int64_t t = 0; t < k_tiles; ++t) {
    const int buffer = static_cast<int>(t & 1);
    const bool has_next = t + 1 < k_tiles;
    // Issue the next tile's global loads first; nothing waits for them until
    // they are written to LDS after this tile's MFMAs.
    if (has_next) {
      load_tile_to_registers(stage_a, args.a, args.lda, args.m, args.k, block_row, (t + 1) * kBlockK);
      load_tile_to_registers(stage_b, args.b, args.ldb, args.n, args.k, block_col, (t + 1) * kBlockK);
    }
#pragma unroll
    for (int step = 0; step < kBlockK / Mfma::kK; ++step) {
      Fragment a[kTilesM];
      Fragment b[kTilesN];
#pragma unroll
      for (int i = 0; i < kTilesM; ++i) a[i] = load_fragment<Side::kA>(lds_a[buffer], wave_row + 16 * i, step);
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) b[j] = load_fragment<Side::kB>(lds_b[buffer], wave_col + 16 * j, step);
#pragma unroll
      for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
        for (int j = 0; j < kTilesN; ++j) acc[i][j] = mfma_fp8<kFormatA, kFormatB>(a[i], b[j], acc[i][j]);
      }
    }
    // The other buffer was last read in iteration t - 1, before the barrier
    // that ended it, so it is free: one barrier per K tile.
    if (has_next) {
      store_registers_to_lds(stage_a, lds_a[buffer ^ 1]);
      store_registers_to_lds(stage_b, lds_b[buffer ^ 1]);
    }
    __syncthreads();
  }

  if (args.d_type == OutputType::kBF16) {
    store_tile<OutputType::kBF16>(args, acc, block_row + wave_row, block_col + wave_col);
  } else {
    store_tile<OutputType::kFP32>(args, acc, block_row + wave_row, block_col + wave_col);
  }
}

// Exactly 256 threads: the compiler may then give each lane up to 512
// registers (256 VGPRs + 256 accumulation VGPRs) instead of the 128 it would
// budget for the default of 1024-thread blocks.
template <Fp8Format kFormatA, Fp8Format kFormatB>
__global__ __attribute__((amdgpu_flat_work_group_size(kThreads, kThreads))) void matrix_cores_cdna_kernel(
    GemmArgs args) {
  if constexpr (formats_native_here<kFormatA, kFormatB>()) gemm_block<kFormatA, kFormatB>(args);
}

Status launch_matrix_cores_cdna(const GemmArgs& args) {
  const bool a_fnuz = fp8_is_fnuz(args.a_format);
  const bool b_fnuz = fp8_is_fnuz(args.b_format);
#if !defined(FP8GEMM_HIP_DEVICE_ONLY)
  // Which formats the matrix cores read depends on the GPU, known only now.
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
  if (blocks_m > 65535 || blocks_n > 0x7FFFFFFF) {
    return Status::error(StatusCode::kNotSupported, "M <= 65535 * 128 required");
  }
  const dim3 grid(static_cast<unsigned>(blocks_n), static_cast<unsigned>(blocks_m));
  return dispatch_fp8_formats(args.a_format, args.b_format, [&](auto format_a, auto format_b) {
    // Only same-family pairs are instantiated; the test above rejects the others.
    if constexpr (fp8_is_fnuz(format_a.value) == fp8_is_fnuz(format_b.value)) {
      matrix_cores_cdna_kernel<format_a.value, format_b.value><<<grid, dim3(kThreads), 0, args.stream>>>(args);
    }
    return status_from_launch();
  });
}

}  // namespace
}  // namespace fp8gemm

// This folder's step on AMD GPUs (on NVIDIA ones, step_sm90a.cu registers the
// wgmma kernel under the same number and name). MFMA's accumulation is treated
// as FP32 here; the chapter (CDNA.md) says what is and is not known about it.
FP8GEMM_REGISTER_STEP("matrix cores: FP8 MFMA (gfx942 FNUZ, gfx950 OCP), 4 wavefronts of 64x64, LDS double buffer",
                      fp8gemm::launch_matrix_cores_cdna, (fp8gemm::StepConstraints{1, 1, 16, 16}),
                      fp8gemm::Accumulation::kFp32);
