// Step 07 (Hopper) — the fused epilogue: scales at every granularity, bias,
// GELU, and an FP8 output with its amax, inside the kernel of step 06.
//
// D[m,n] = out( act( sum_k (A[m,k] s_A(m,k)) (B[n,k] s_B(n,k)) + bias[n] ) )
//
// The mainloop is step 06's: a producer warpgroup feeds a 6-stage ring of
// 128 x 128 tiles of A and B through the TMA, two consumer warpgroups run
// wgmma.m64n128k32 on them and promote each K block of 128 into FP32
// registers. What is new is what happens to the numbers:
//
//   1 x 128 scales of A and 128 x 128 scales of B (DeepSeek-V3's activations
//     and weights) change along K, so they cannot wait for the epilogue. The
//     K block of a stage is exactly one scale group, so the promotion that
//     adds a block's partial sum into the FP32 total multiplies it by the two
//     scales on the way, one FMA per accumulator:
//         total = fma(partial, s_A(row, kb) * s_B(n_block, kb), total)
//   Per-tensor scales (host floats, or one float in device memory: "delayed
//     scaling") and per-row scales are constant along K and are applied once,
//     in the epilogue.
//   The epilogue then adds the bias (BF16 or FP32, one per column), applies
//     GELU (tanh or erf form) and writes D as BF16, FP32 or FP8 (y / d_scale,
//     saturating, round to nearest even), reducing max |y| into d_amax with
//     a warp reduction and one atomic per block.
//
// The arithmetic of the epilogue lives in common/device/epilogue.h, shared
// with the CDNA kernel and the unfused baseline, and tested on the CPU.
//
// Requires sm_90a; the chapter (README.md) explains every piece.
//
// Everything below is in an unnamed namespace: a copy of this folder (a fork)
// compiles the same names into its own unit, and both link into one program.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <type_traits>

#include "common/device/amax.cuh"
#include "common/device/epilogue.h"
#include "common/device/kernel.h"
#include "common/device/launch.h"
#include "common/device/operand_scales.h"
#include "common/sm90/fragment_epilogue.cuh"
#include "common/sm90/mbarrier.cuh"
#include "common/sm90/tma.cuh"
#include "common/sm90/wgmma.cuh"

namespace fp8gemm {
namespace {

// ---- what a reader would tune ------------------------------------------------
constexpr int kBlockM = 128;  // rows of D per block: 2 consumer warpgroups x 64
constexpr int kBlockN = 128;  // columns of D per block: the N of one wgmma
constexpr int kBlockK = 128;  // K per stage: one 128-byte swizzle row of FP8
constexpr int kStages = 6;    // shared-memory ring: 6 x 32 KB = 192 KB
// D leaves through shared memory and the TMA (true: where D's rows end on
// 16-byte boundaries) or straight from the registers (false); the chapter
// measures both.
constexpr bool kStoreThroughTma = true;
constexpr int kConsumerWarpgroups = kBlockM / 64;
constexpr int kThreads = (kConsumerWarpgroups + 1) * sm90::kWarpgroupThreads;  // + 1 producer warpgroup

constexpr uint32_t kTileBytesA = kBlockM * kBlockK;  // FP8: one byte per element
constexpr uint32_t kTileBytesB = kBlockN * kBlockK;

// The tiles, in dynamic shared memory. Every tile starts on a 1024-byte
// boundary, where the 128-byte swizzle pattern (8 rows x 128 bytes) starts.
struct StageTiles {
  uint8_t a[kStages][kTileBytesA];
  uint8_t b[kStages][kTileBytesB];
};
static_assert(kTileBytesA % 1024 == 0 && kTileBytesB % 1024 == 0, "tiles must keep 1024-byte alignment");
constexpr size_t kDynamicSharedBytes = sizeof(StageTiles) + 1024;  // + slack to align the start
constexpr int kConsumerWarps = kConsumerWarpgroups * sm90::kWarpgroupThreads / kWarpSize;
// The scales of a stage's K block, for 1 x 128 / 128 x 128 scales: s_A of
// each of the tile's rows and s_B of its columns (one 128 x 128 block of B).
struct StageScales {
  float a[kBlockM];
  float b;
};
constexpr int kScaleLoaderWarp = 1;  // the producer warpgroup's warp that copies them
// The barriers, the amax scratch and (with block scales) the stages' scales
// live in static shared memory; its size also tells the launcher that the
// sm_90a body was compiled (see kernel_has_sm90a_image).
constexpr size_t kStaticSharedBytes = 2 * kStages * sizeof(uint64_t) + kConsumerWarps * sizeof(float);
constexpr size_t kStaticSharedBytesWithScales = kStaticSharedBytes + kStages * sizeof(StageScales);
constexpr int kAmaxBarrier = 1;   // the named barrier of the consumers' amax reduction
constexpr int kStoreBarrier = 2;  // + w: warpgroup w's, before its TMA store

#if FP8GEMM_SM90A_DEVICE
constexpr int kWgmmaK = 32;                                            // K of one FP8 wgmma
constexpr int kAccumulators = 64 * kBlockN / sm90::kWarpgroupThreads;  // FP32 per thread: 64
constexpr uint32_t kStageBytes = kTileBytesA + kTileBytesB;            // what the TMA delivers per stage

#endif

// kBlockScales: A has 1 x 128 or B has 128 x 128 scales, applied at each
// promotion (so kPromote is true).
template <Fp8Format kFormatA, Fp8Format kFormatB, bool kPromote, bool kBlockScales>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_fp8_gemm_kernel(const __grid_constant__ CUtensorMap tensor_map_a,
                          const __grid_constant__ CUtensorMap tensor_map_b,
                          const __grid_constant__ CUtensorMap tensor_map_d, GemmArgs args, bool store_through_tma) {
#if FP8GEMM_SM90A_DEVICE
  using namespace sm90;
  __shared__ uint64_t full_barrier[kStages];     // the TMA has filled the stage
  __shared__ uint64_t empty_barrier[kStages];    // the consumers are done with the stage
  __shared__ StageScales stage_scales[kStages];  // block scales only
  __shared__ float amax_scratch[kConsumerWarps];
  extern __shared__ uint8_t dynamic_shared[];
  const uint32_t tiles_start = (shared_address(dynamic_shared) + 1023u) & ~1023u;
  const uint32_t tiles_a = tiles_start + offsetof(StageTiles, a);  // shared-window addresses
  const uint32_t tiles_b = tiles_start + offsetof(StageTiles, b);

  // Block -> tile of D. Consecutive blocks walk down M, sharing one B tile.
  const int m_tiles = static_cast<int>((args.m + kBlockM - 1) / kBlockM);
  const int m_block = static_cast<int>(blockIdx.x % m_tiles);
  const int n_block = static_cast<int>(blockIdx.x / m_tiles);
  const int k_blocks = static_cast<int>((args.k + kBlockK - 1) / kBlockK);  // the last one zero-filled past K
  const int warpgroup = threadIdx.x / kWarpgroupThreads;

  // A stage is full when the TMA has delivered its tiles (one arrive.expect_tx)
  // and, with block scales, each lane of the scale loader has stored its scales.
  // It is empty when the consumers are done with it: lane 0 of each warp
  // arrives for the warp once its wgmmas have finished reading the tiles; with
  // block scales every consumer thread arrives, after its own reads of the
  // stage's scales (a read by one lane is not ordered before another lane's
  // arrive: compute-sanitizer's racecheck reports it, __syncwarp or not).
  constexpr int kFullArrivals = 1 + (kBlockScales ? kWarpSize : 0);
  constexpr int kEmptyArrivals = kBlockScales ? kConsumerWarps * kWarpSize : kConsumerWarps;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(shared_address(&full_barrier[s]), kFullArrivals);
      mbarrier_init(shared_address(&empty_barrier[s]), kEmptyArrivals);
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (warpgroup == kConsumerWarpgroups) {
    // ---- producer: one thread feeds the ring; with block scales one warp
    // copies each stage's scales beside it; the rest of the warpgroup idles.
    const int producer_thread = threadIdx.x - kConsumerWarpgroups * kWarpgroupThreads;
    if (producer_thread == 0) {
      prefetch_tensor_map(&tensor_map_a);
      prefetch_tensor_map(&tensor_map_b);
      int stage = 0;
      uint32_t phase = 0;  // parity of the round of the ring
      for (int kb = 0; kb < k_blocks; ++kb) {
        // Wait until the consumers released this stage in the previous round
        // (parity phase ^ 1; in round 0 that wait returns at once).
        mbarrier_wait(shared_address(&empty_barrier[stage]), phase ^ 1);
        const uint32_t full = shared_address(&full_barrier[stage]);
        mbarrier_arrive_expect_tx(full, kStageBytes);  // always the whole box, zero-filled parts included
        tma_load_2d(tiles_a + stage * kTileBytesA, &tensor_map_a, full, kb * kBlockK, m_block * kBlockM);
        tma_load_2d(tiles_b + stage * kTileBytesB, &tensor_map_b, full, kb * kBlockK, n_block * kBlockN);
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
    } else if (kBlockScales && producer_thread / kWarpSize == kScaleLoaderWarp) {
      // The scales of K block kb go into the stage that holds its tiles, and
      // the stage is full only when they are there: a consumer reads them from
      // shared memory, never waiting on global memory in its mainloop. (Loaded
      // by the consumers themselves, one K block ahead or not, they cost 20 %:
      // the compiler put their first use before the wgmmas.) Lane l copies
      // the scales of rows l, l + 32, l + 64, l + 96 of the tile; rows past M
      // copy the last row's (the TMA zero-filled those rows of A).
      const int lane = producer_thread % kWarpSize;
      const float* a_rows[kBlockM / kWarpSize];
#pragma unroll
      for (int i = 0; i < kBlockM / kWarpSize; ++i) {
        const int64_t row = std::min<int64_t>(int64_t{m_block} * kBlockM + lane + kWarpSize * i, args.m - 1);
        a_rows[i] = k_block_scales(args.a_scale_granularity, args.a_scales, row, args.k);  // nullptr: constant
      }
      const float* b_row = k_block_scales(args.b_scale_granularity, args.b_scales, int64_t{n_block} * kBlockN, args.k);
      int stage = 0;
      uint32_t phase = 0;
      for (int kb = 0; kb < k_blocks; ++kb) {
        float a[kBlockM / kWarpSize];
#pragma unroll
        for (int i = 0; i < kBlockM / kWarpSize; ++i) a[i] = a_rows[i] != nullptr ? a_rows[i][kb] : 1.0f;
        const float b = b_row != nullptr ? b_row[kb] : 1.0f;
        mbarrier_wait(shared_address(&empty_barrier[stage]), phase ^ 1);
#pragma unroll
        for (int i = 0; i < kBlockM / kWarpSize; ++i) stage_scales[stage].a[lane + kWarpSize * i] = a[i];
        if (lane == 0) stage_scales[stage].b = b;
        mbarrier_arrive(shared_address(&full_barrier[stage]));  // release: the stores above come first
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
    return;
  }

  // ---- consumers: warpgroup w multiplies rows 64w..64w+63 of the A tile.
  float accum[kAccumulators];                 // wgmma's accumulators
  float total[kPromote ? kAccumulators : 1];  // promoted FP32 sums (promotion only)
#pragma unroll
  for (int i = 0; i < kAccumulators; ++i) accum[i] = 0.0f;
  if constexpr (kPromote) {
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) total[i] = 0.0f;
  }
  const int lane = threadIdx.x % kWarpSize;
  const int warp_in_group = (threadIdx.x % kWarpgroupThreads) / kWarpSize;
  // This thread's rows of D: row0 and row0 + 8 (the wgmma fragment layout).
  const int row0 = m_block * kBlockM + warpgroup * 64 + warp_in_group * 16 + lane / 4;
  int stage = 0;
  uint32_t phase = 0;
  for (int kb = 0; kb < k_blocks; ++kb) {
    mbarrier_wait(shared_address(&full_barrier[stage]), phase);
    __syncwarp();  // wgmma is .aligned: the warp must be converged
    // With block scales: this K block's s_A of the thread's two rows and s_B.
    float scales[3] = {1.0f, 1.0f, 1.0f};
    if constexpr (kBlockScales) {
      const int tile_row = row0 - m_block * kBlockM;
      scales[0] = stage_scales[stage].a[tile_row];
      scales[1] = stage_scales[stage].a[tile_row + 8];
      scales[2] = stage_scales[stage].b;
    }

    const uint64_t desc_a = make_kmajor_sw128_descriptor(tiles_a + stage * kTileBytesA + warpgroup * 64 * kBlockK);
    const uint64_t desc_b = make_kmajor_sw128_descriptor(tiles_b + stage * kTileBytesB);
    fence_registers(accum);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBlockK / kWgmmaK; ++kk) {
      // + (32 bytes >> 4) per step along K inside the swizzled 128-byte rows.
      // Promotion restarts the sum each K block (accumulate = false overwrites);
      // fast accumulation restarts it only at the very first wgmma.
      const bool accumulate = kPromote ? kk > 0 : (kb > 0 || kk > 0);
      wgmma_m64n128k32<kFormatA, kFormatB>(accum, desc_a + 2 * kk, desc_b + 2 * kk, accumulate);
    }
    wgmma_commit_group();
    fence_registers(accum);

    if constexpr (kPromote) {
      wgmma_wait_group<0>();  // this K block's products are in accum, its stage is no longer read
      fence_registers(accum);
      if (kBlockScales || lane == 0) mbarrier_arrive(shared_address(&empty_barrier[stage]));
      if constexpr (kBlockScales) {
        const float block_scale[2] = {scales[0] * scales[2], scales[1] * scales[2]};
        // total += partial * (s_A * s_B): accumulator 4j + 2h + c is in row row0 + 8h.
#pragma unroll
        for (int i = 0; i < kAccumulators; ++i) total[i] = fmaf(accum[i], block_scale[(i / 2) % 2], total[i]);
      } else {
#pragma unroll
        for (int i = 0; i < kAccumulators; ++i) total[i] += accum[i];
      }
    } else {
      // Keep this K block's wgmmas running; wait for the previous block's and
      // release its stage.
      wgmma_wait_group<1>();
      if (kb > 0 && lane == 0) {
        mbarrier_arrive(shared_address(&empty_barrier[stage == 0 ? kStages - 1 : stage - 1]));
      }
    }
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1;
    }
  }
  if constexpr (!kPromote) {
    wgmma_wait_group<0>();
    fence_registers(accum);
  }

  // ---- epilogue: this thread's columns of the fragment (see common/sm90/wgmma.cuh).
  const int col0 = n_block * kBlockN + 2 * (lane % 4);
  // The scales constant along K (per tensor, per row), applied here; a 1 x 128
  // or 128 x 128 operand contributes 1: its scales were applied at each promotion.
  const ConstantScales a_scales = constant_scales(args.a_scale_granularity, args.a_scale, args.a_scales);
  const ConstantScales b_scales = constant_scales(args.b_scale_granularity, args.b_scale, args.b_scales);
  const int tile_row = m_block * kBlockM + warpgroup * 64;  // the warpgroup's part of the D tile
  const int tile_col = n_block * kBlockN;
  const float inverse_d_scale = 1.0f / args.d_scale;
  // D's boxes for the TMA store: this warpgroup's share of the A tiles of
  // stages 0, 1, ... (the mainloop is over: every TMA load has landed and been
  // read, and the other warpgroup's last wgmmas read only its own share of A).
  static_assert(kTmaStoreBoxes<OutputType::kFP32, kBlockN> <= kStages &&
                    kTmaStoreBoxBytes == kTileBytesA / kConsumerWarpgroups,
                "D's boxes are a warpgroup's share of the A tiles of the first stages");
  const uint32_t first_box = tiles_a + warpgroup * (kTileBytesA / kConsumerWarpgroups);
  auto finish = [&](float(&y)[kAccumulators]) {
    apply_epilogue<kBlockN>(y, args, a_scales, b_scales, row0, col0);
    const float amax = args.d_amax != nullptr ? fragment_amax<kBlockN>(y, args, row0, col0) : 0.0f;
    switch (args.d_type) {
      case OutputType::kBF16:
        store_tile<OutputType::kBF16, kBlockN>(y, args, store_through_tma, &tensor_map_d, first_box, kTileBytesA,
                                               kStoreBarrier + warpgroup, tile_row, tile_col, row0, col0,
                                               inverse_d_scale);
        break;
      case OutputType::kFP32:
        store_tile<OutputType::kFP32, kBlockN>(y, args, store_through_tma, &tensor_map_d, first_box, kTileBytesA,
                                               kStoreBarrier + warpgroup, tile_row, tile_col, row0, col0,
                                               inverse_d_scale);
        break;
      case OutputType::kE4M3:
        store_tile<OutputType::kE4M3, kBlockN>(y, args, store_through_tma, &tensor_map_d, first_box, kTileBytesA,
                                               kStoreBarrier + warpgroup, tile_row, tile_col, row0, col0,
                                               inverse_d_scale);
        break;
      default:
        store_tile<OutputType::kE5M2, kBlockN>(y, args, store_through_tma, &tensor_map_d, first_box, kTileBytesA,
                                               kStoreBarrier + warpgroup, tile_row, tile_col, row0, col0,
                                               inverse_d_scale);
        break;
    }
    return amax;
  };
  float amax;
  if constexpr (kPromote) {
    amax = finish(total);
  } else {
    amax = finish(accum);
  }
  if (args.d_amax != nullptr) block_amax_to_global(amax, amax_scratch, kConsumerWarps, kAmaxBarrier, args.d_amax);
#endif  // FP8GEMM_SM90A_DEVICE
}

using KernelFunction = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, GemmArgs, bool);

// The kernel for one pair of formats (e4m3 or e5m2 each) and accumulation mode.
template <bool kPromote, bool kBlockScales>
KernelFunction select_kernel(Fp8Format a, Fp8Format b) {
  constexpr Fp8Format kE4 = Fp8Format::kE4M3, kE5 = Fp8Format::kE5M2;
  if (a == kE4) {
    return b == kE4 ? wgmma_fp8_gemm_kernel<kE4, kE4, kPromote, kBlockScales>
                    : wgmma_fp8_gemm_kernel<kE4, kE5, kPromote, kBlockScales>;
  }
  return b == kE4 ? wgmma_fp8_gemm_kernel<kE5, kE4, kPromote, kBlockScales>
                  : wgmma_fp8_gemm_kernel<kE5, kE5, kPromote, kBlockScales>;
}

Status launch_fused_epilogue(const GemmArgs& args) {
  Status status = sm90::require_sm90a_gpu();
  if (!status.ok()) return status;

  // TMA coordinates and the kernel's row and column numbers are signed 32-bit
  // (a tile's last row is 127 past its first); the grid is one-dimensional.
  constexpr int64_t kMaxExtent = 0x7FFFFFFF;
  const int64_t tiles = ((args.m + kBlockM - 1) / kBlockM) * ((args.n + kBlockN - 1) / kBlockN);
  if (args.m > kMaxExtent - kBlockM || args.n > kMaxExtent - kBlockN || args.k > kMaxExtent - kBlockK ||
      tiles > kMaxExtent) {
    return Status::error(StatusCode::kNotSupported,
                         "M, N, K <= 2^31 - 129 and at most 2^31 - 1 tiles of 128 x 128 required");
  }

  CUtensorMap map_a, map_b;
  status = sm90::make_kmajor_tensor_map(&map_a, args.a, args.m, args.k, args.lda, kBlockM, kBlockK);
  if (!status.ok()) return status;
  status = sm90::make_kmajor_tensor_map(&map_b, args.b, args.n, args.k, args.ldb, kBlockN, kBlockK);
  if (!status.ok()) return status;
  // D through the TMA, in boxes of 64 rows (one warpgroup) x 128 bytes, where
  // its rows end on 16-byte boundaries: the TMA writes a row in 16-byte
  // pieces, and the one that holds D's last column would also overwrite the
  // columns after it, up to the boundary (measured: tests/test_epilogue_gpu
  // caught it at N = 1000 for FP8 D and N = 255 for BF16 and FP32 D). Other
  // widths take the direct stores.
  const int d_bytes = static_cast<int>(output_bytes(args.d_type));
  const bool store_through_tma = kStoreThroughTma && (args.n * d_bytes) % 16 == 0;
  CUtensorMap map_d{};
  if (store_through_tma) {
    status =
        sm90::make_swizzled_tensor_map(&map_d, args.d, d_bytes, args.m, args.n, args.ldd * d_bytes, 64, 128 / d_bytes);
    if (!status.ok()) return status;
  }

  // Scales that change along K are applied at each promotion: without
  // promotion there is no place for them.
  const bool block_scales = has_block_scales(args);
  status = refuse_block_scales_without_promotion(args);
  if (!status.ok()) return status;
  const KernelFunction kernel = args.fast_accumulation ? select_kernel<false, false>(args.a_format, args.b_format)
                                : block_scales         ? select_kernel<true, true>(args.a_format, args.b_format)
                                                       : select_kernel<true, false>(args.a_format, args.b_format);
  status = sm90::kernel_has_sm90a_image(kernel, block_scales ? kStaticSharedBytesWithScales : kStaticSharedBytes);
  if (!status.ok()) return status;
  status = reserve_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), kDynamicSharedBytes);
  if (!status.ok()) return status;
  // The kernel folds each block's amax into *d_amax with an atomic max.
  status = clear_amax(args);
  if (!status.ok()) return status;
  kernel<<<static_cast<unsigned>(tiles), kThreads, kDynamicSharedBytes, args.stream>>>(map_a, map_b, map_d, args,
                                                                                       store_through_tma);
  return status_from_launch();
}

}  // namespace
}  // namespace fp8gemm
