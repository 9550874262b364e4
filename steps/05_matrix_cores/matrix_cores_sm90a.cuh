// Step 05 (Hopper) — the FP8 tensor cores, through wgmma.
//
// D[m,n] = a_scale * b_scale * sum_k A[m,k] * B[n,k]
//
// One block computes a 64 x 128 tile of D with 128 threads: one warpgroup
// (4 warps), which both loads and computes.
//
//   loading: the copies of step 04. Every thread issues 16-byte cp.async
//     copies, global -> shared, of its part of the next K blocks into a ring
//     of kStages stages (A: 64 rows x 128 bytes, B: 128 rows x 128 bytes per
//     stage). A copy that reaches past M, N or K reads fewer bytes (src-size)
//     and cp.async fills the rest of the 16 with zeros: what lies outside the
//     matrices adds 0 to the sums, and the bytes between K and lda are never
//     read. What is new is *where* the bytes go: the 128-byte-swizzled layout
//     wgmma reads (16-byte chunk c of row r stored at chunk c ^ (r % 8)).
//   computing: no decoding, no FFMAs. Per K block of 128, four
//     wgmma.m64n128k32 multiply the stage's A tile (64 x 32 each) by its B
//     tile (128 x 32 each), straight from shared memory into 64 FP32
//     accumulators per thread.
//
// wgmma is asynchronous: it reads shared memory and writes its registers
// after it was issued, until wgmma.wait_group says it is done. So a stage is
// refilled only after every warp has waited for the wgmmas that read it, and
// a stage is published to wgmma by a proxy fence plus a barrier (below).
//
// Promotion (the default): Hopper's FP8 tensor cores accumulate with fewer
// bits than FP32. So each K block of 128 starts a fresh wgmma accumulation,
// and its result is added into separate FP32 registers (DeepSeek-V3's
// "two-level accumulation"). GemmArgs::fast_accumulation keeps accumulating
// in the wgmma registers over the whole K instead: faster, less accurate.
//
// Scales are applied in the epilogue, which writes the FP32 result straight
// from registers to D (BF16 or FP32), bounds-checked.
//
// Requires sm_90a. Step 06 replaces the cp.async copies by the TMA and gives
// the loading to a warp of its own, so that the wgmmas never wait for it.
//
// Everything below is in an unnamed namespace: a copy of this folder (a fork)
// compiles the same names into its own unit, and both link into one program.
#pragma once

#include "common/device/kernel.h"
#include "common/sm90/wgmma.cuh"

namespace fp8gemm {
namespace {

// ---- what a reader would tune ------------------------------------------------
// 64 x 128, not 128 x 128: with promotion, one warpgroup holding a 128 x 128
// tile needs 2 x 64 wgmma accumulators + 2 x 64 FP32 sums = 256 registers per
// thread, over the 255 a thread can have. At 64 x 128 it needs 128, which
// leaves room for kBlocksPerSm blocks per SM: while one block waits for its
// wgmmas or its copies, another one's wgmmas keep the tensor cores busy.
constexpr int kBlockM = 64;      // rows of D per block: the M of one wgmma
constexpr int kBlockN = 128;     // columns of D per block: the N of one wgmma
constexpr int kBlockK = 128;     // K per stage: one 128-byte swizzle row of FP8
constexpr int kStages = 3;       // the ring: K blocks kb + 1, kb + 2 in flight while kb is computed
constexpr int kBlocksPerSm = 3;  // 3 x (74 + 1 reserved) KB of shared memory in 228 KB; registers <= 168
constexpr int kThreads = sm90::kWarpgroupThreads;  // one warpgroup loads and computes

constexpr int kTileBytesA = kBlockM * kBlockK;  // FP8: one byte per element
constexpr int kTileBytesB = kBlockN * kBlockK;
constexpr int kChunkBytes = 16;                      // one cp.async
constexpr int kRowChunks = kBlockK / kChunkBytes;    // 8 chunks per 128-byte row
constexpr int kRowsPerPass = kThreads / kRowChunks;  // 16 rows copied per pass of the 128 threads
static_assert(kTileBytesA % 1024 == 0 && kTileBytesB % 1024 == 0, "tiles must keep 1024-byte alignment");
static_assert(kBlockM % kRowsPerPass == 0 && kBlockN % kRowsPerPass == 0, "whole passes over the tiles");

// Every tile starts on a 1024-byte boundary, where the 128-byte swizzle
// pattern (8 rows x 128 bytes) starts; each ring gets 1024 bytes of slack to
// align its start. A's ring is static shared memory, B's dynamic: static
// shared memory ends at 48 KB. The static part also tells the launcher that
// the sm_90a body was compiled (see sm90::kernel_has_sm90a_image).
constexpr size_t kStaticSharedBytes = kStages * kTileBytesA + 1024;
constexpr size_t kDynamicSharedBytes = kStages * kTileBytesB + 1024;

// Byte offset of 16-byte chunk `chunk` (0..7) of row `row` in a tile laid out
// in the 128-byte swizzle, the layout make_kmajor_sw128_descriptor describes.
// Rows 8 apart have the same pattern: spreading a row's chunks over all the
// banks lets wgmma read a 32-byte column of 8 rows without bank conflicts.
FP8GEMM_HOST_DEVICE constexpr uint32_t swizzled_offset(int row, int chunk) {
  return static_cast<uint32_t>(row * kBlockK + ((chunk ^ (row % 8)) * kChunkBytes));
}
static_assert(swizzled_offset(0, 5) == 80 && swizzled_offset(3, 1) == 3 * 128 + 2 * 16 &&
                  swizzled_offset(15, 7) == 15 * 128 + 0 && swizzled_offset(16 + 3, 1) == swizzled_offset(3, 1) + 2048,
              "chunk c of row r lands at chunk c ^ (r % 8); 16 rows down is 2048 bytes down");

#if FP8GEMM_SM90A_DEVICE
constexpr int kWgmmaK = 32;                                  // K of one FP8 wgmma
constexpr int kAccumulators = kBlockM * kBlockN / kThreads;  // FP32 per thread: 64

// ---- cp.async, as in step 04 (.cg: through L2 only; no thread re-reads a line)
// Copies 16 bytes from global `src` (16-byte aligned) to shared `dst`: the
// first `src_bytes` (0..16) are read, the rest of the 16 are zero-filled.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
// Closes the group of this thread's cp.async issued since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most kPending of this thread's committed groups are in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}
// cp.async writes shared memory through the generic proxy, wgmma reads it
// through the async proxy: this orders the thread's writes before later
// async-proxy reads. Put it between the wait and the barrier.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Writes this thread's part of the block's D tile: acc (64 FP32 values in the
// wgmma fragment layout, see wgmma_m64n128k32) times the scales, rounded to
// T (uint16_t = BF16 bits, or float). Two neighbouring columns per store.
// Alignment: D's pointer and row pitch are 16-byte multiples (the step's
// constraints) and the column is even, so the pair store is aligned.
template <typename T>
__device__ __forceinline__ void store_fragment(const float (&acc)[kAccumulators], const GemmArgs& args, int64_t row0,
                                               int64_t col0) {
  const float scale = args.a_scale * args.b_scale;
  T* d = static_cast<T*>(args.d);
#pragma unroll
  for (int h = 0; h < 2; ++h) {  // h = 1: the row 8 below
    const int64_t row = row0 + 8 * h;
    if (row >= args.m) continue;
    T* d_row = d + row * args.ldd;
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
      const int64_t col = col0 + 8 * j;
      const float v0 = acc[4 * j + 2 * h] * scale;
      const float v1 = acc[4 * j + 2 * h + 1] * scale;
      if constexpr (sizeof(T) == 2) {
        const uint32_t pair = float_to_bf16_bits(v0) | static_cast<uint32_t>(float_to_bf16_bits(v1)) << 16;
        if (col + 1 < args.n) {
          *reinterpret_cast<uint32_t*>(d_row + col) = pair;
        } else if (col < args.n) {
          d_row[col] = static_cast<T>(pair & 0xFFFFu);
        }
      } else {
        if (col + 1 < args.n) {
          *reinterpret_cast<float2*>(d_row + col) = make_float2(v0, v1);
        } else if (col < args.n) {
          d_row[col] = v0;
        }
      }
    }
  }
}
#endif

template <Fp8Format kFormatA, Fp8Format kFormatB, bool kPromote>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm) wgmma_fp8_gemm_kernel(GemmArgs args) {
#if FP8GEMM_SM90A_DEVICE
  using namespace sm90;
  __shared__ uint8_t ring_a_bytes[kStaticSharedBytes];
  extern __shared__ uint8_t ring_b_bytes[];
  const uint32_t ring_a = (shared_address(ring_a_bytes) + 1023u) & ~1023u;  // shared-window addresses
  const uint32_t ring_b = (shared_address(ring_b_bytes) + 1023u) & ~1023u;

  // Block -> tile of D. Consecutive blocks walk down M, sharing one B tile.
  const int m_tiles = static_cast<int>((args.m + kBlockM - 1) / kBlockM);
  const int64_t m0 = static_cast<int64_t>(blockIdx.x % m_tiles) * kBlockM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x / m_tiles) * kBlockN;
  const int k_blocks = static_cast<int>((args.k + kBlockK - 1) / kBlockK);  // the last one zero-filled past K

  // This thread copies chunk `chunk` of rows first_row, first_row + 16, ...
  // of each tile: a warp copies 4 whole rows, 512 contiguous bytes of global
  // memory, into 512 contiguous bytes of shared memory (permuted, no bank
  // conflicts). Rows 16 apart share the swizzle, so one offset serves them all.
  const int chunk = threadIdx.x % kRowChunks;
  const int first_row = threadIdx.x / kRowChunks;
  const uint32_t thread_offset = swizzled_offset(first_row, chunk);

  // Offsets (from args.a, args.b) of this thread's chunk in row first_row of
  // its tiles at K block 0, and how far its rows reach: row first_row + 16 i
  // is inside the matrix when 16 i < rows_left.
  const int64_t a_start = (m0 + first_row) * args.lda + chunk * kChunkBytes;
  const int64_t b_start = (n0 + first_row) * args.ldb + chunk * kChunkBytes;
  const int64_t a_rows_left = args.m - (m0 + first_row);
  const int64_t b_rows_left = args.n - (n0 + first_row);

  // Starts copying K block kb of A and B into stage kb % kStages.
  auto load_stage = [&](int kb) {
    const int stage = kb % kStages;
    const int64_t k_left = args.k - (static_cast<int64_t>(kb) * kBlockK + chunk * kChunkBytes);
    const int k_bytes = k_left >= kChunkBytes ? kChunkBytes : (k_left > 0 ? static_cast<int>(k_left) : 0);
    // The rows' offsets are summed up pass by pass (not kept per row: registers).
    int64_t a_offset = a_start + static_cast<int64_t>(kb) * kBlockK;
    int64_t b_offset = b_start + static_cast<int64_t>(kb) * kBlockK;
#pragma unroll
    for (int i = 0; i < kBlockM / kRowsPerPass; ++i, a_offset += kRowsPerPass * args.lda) {
      const int bytes = i * kRowsPerPass < a_rows_left ? k_bytes : 0;  // 0: nothing read, 16 zeros written
      cp_async_16(ring_a + stage * kTileBytesA + thread_offset + i * kRowsPerPass * kBlockK,
                  args.a + (bytes > 0 ? a_offset : 0), bytes);
    }
#pragma unroll
    for (int i = 0; i < kBlockN / kRowsPerPass; ++i, b_offset += kRowsPerPass * args.ldb) {
      const int bytes = i * kRowsPerPass < b_rows_left ? k_bytes : 0;
      cp_async_16(ring_b + stage * kTileBytesB + thread_offset + i * kRowsPerPass * kBlockK,
                  args.b + (bytes > 0 ? b_offset : 0), bytes);
    }
  };

  float accum[kAccumulators];                 // wgmma's accumulators
  float total[kPromote ? kAccumulators : 1];  // promoted FP32 sums (promotion only)
#pragma unroll
  for (int i = 0; i < kAccumulators; ++i) accum[i] = 0.0f;
  if constexpr (kPromote) {
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) total[i] = 0.0f;
  }

  // Prologue: K blocks 0 .. kStages - 2 on their way. One group per K block,
  // empty past the end, so that "group kb has landed" is always wait_group<kStages - 2>.
  for (int kb = 0; kb < kStages - 1; ++kb) {
    if (kb < k_blocks) load_stage(kb);
    cp_async_commit();
  }

  for (int kb = 0; kb < k_blocks; ++kb) {
    cp_async_wait<kStages - 2>();  // this thread's copies of K block kb have landed
    fence_proxy_async_shared();    // ... and are visible to wgmma
    // Everyone's copies of K block kb have landed; and every warp has waited
    // for the wgmmas of K block kb - 1, so its stage may be refilled.
    __syncthreads();

    const int stage = kb % kStages;
    const uint64_t desc_a = make_kmajor_sw128_descriptor(ring_a + stage * kTileBytesA);
    const uint64_t desc_b = make_kmajor_sw128_descriptor(ring_b + stage * kTileBytesB);
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

    // While the tensor cores work: K block kb + kStages - 1 into the stage of
    // K block kb - 1, which nothing reads any more (see the barrier above).
    if (kb + kStages - 1 < k_blocks) load_stage(kb + kStages - 1);
    cp_async_commit();

    // Both modes wait for this block's wgmmas here: the next refill overwrites
    // this stage right after the next barrier. The SM's other blocks keep the
    // tensor cores busy meanwhile (step 06 gets that overlap inside one block).
    wgmma_wait_group<0>();
    fence_registers(accum);
    if constexpr (kPromote) {
#pragma unroll
      for (int i = 0; i < kAccumulators; ++i) total[i] += accum[i];
    }
  }

  // ---- epilogue: this thread's rows and columns of the fragment (see wgmma_m64n128k32).
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int64_t row0 = m0 + warp * 16 + lane / 4;
  const int64_t col0 = n0 + 2 * (lane % 4);
  auto write_d = [&](const float(&result)[kAccumulators]) {
    if (args.d_type == OutputType::kBF16) {
      store_fragment<uint16_t>(result, args, row0, col0);
    } else {
      store_fragment<float>(result, args, row0, col0);
    }
  };
  if constexpr (kPromote) {
    write_d(total);
  } else {
    write_d(accum);
  }
#endif  // FP8GEMM_SM90A_DEVICE
}

using KernelFunction = void (*)(GemmArgs);

// The kernel for one pair of formats (e4m3 or e5m2 each) and accumulation mode.
template <bool kPromote>
KernelFunction select_kernel(Fp8Format a, Fp8Format b) {
  constexpr Fp8Format kE4 = Fp8Format::kE4M3, kE5 = Fp8Format::kE5M2;
  if (a == kE4) return b == kE4 ? wgmma_fp8_gemm_kernel<kE4, kE4, kPromote> : wgmma_fp8_gemm_kernel<kE4, kE5, kPromote>;
  return b == kE4 ? wgmma_fp8_gemm_kernel<kE5, kE4, kPromote> : wgmma_fp8_gemm_kernel<kE5, kE5, kPromote>;
}

Status launch_matrix_cores_sm90a(const GemmArgs& args) {
  Status status = sm90::require_sm90a_gpu();
  if (!status.ok()) return status;

  // The grid is one-dimensional (any M); tile and K-block numbers are ints.
  constexpr int64_t kMaxExtent = 0x7FFFFFFF;
  const int64_t tiles = ((args.m + kBlockM - 1) / kBlockM) * ((args.n + kBlockN - 1) / kBlockN);
  if (args.m > kMaxExtent || args.n > kMaxExtent || args.k > kMaxExtent - kBlockK || tiles > kMaxExtent) {
    return Status::error(StatusCode::kNotSupported,
                         std::string("M, N, K < 2^31 and at most 2^31 - 1 tiles of 64 x 128 required"));
  }

  const KernelFunction kernel = args.fast_accumulation ? select_kernel<false>(args.a_format, args.b_format)
                                                       : select_kernel<true>(args.a_format, args.b_format);
  status = sm90::kernel_has_sm90a_image(kernel, kStaticSharedBytes);
  if (!status.ok()) return status;
  // Above 48 KB of dynamic shared memory a kernel must opt in; the largest
  // shared-memory split of the SM lets kBlocksPerSm blocks fit.
  cudaError_t err =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kDynamicSharedBytes));
  if (err == cudaSuccess) {
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
  }
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear it: the error is reported here
    return Status::error(StatusCode::kRuntimeError, std::string("cannot reserve ") +
                                                        std::to_string(kDynamicSharedBytes) +
                                                        " bytes of shared memory: " + cudaGetErrorString(err));
  }
  kernel<<<static_cast<unsigned>(tiles), kThreads, kDynamicSharedBytes, args.stream>>>(args);
  return status_from_launch();
}

}  // namespace
}  // namespace fp8gemm
