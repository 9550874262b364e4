/// @file launch.h
/// @brief Launch helpers shared by the steps' launchers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/api/gemm.h"

namespace fp8gemm {

/// True when every row of a matrix at `p` with leading dimension `ld` (in
/// bytes) starts on a `bytes` boundary.
inline bool rows_aligned(const void* p, int64_t ld, int64_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0 && ld % bytes == 0;
}

/// True when every row of A and of B starts on a `bytes` boundary (the
/// pointers aligned, lda and ldb multiples of `bytes`), so that a kernel may
/// load the rows in vectors of that size.
inline bool operand_rows_aligned(const GemmArgs& args, int64_t bytes) {
  return rows_aligned(args.a, args.lda, bytes) && rows_aligned(args.b, args.ldb, bytes);
}

/// True when every row of D starts on a `bytes` boundary (pointer aligned,
/// ldd times the element size a multiple of `bytes`).
inline bool output_rows_aligned(const GemmArgs& args, int64_t bytes) {
  return reinterpret_cast<uintptr_t>(args.d) % bytes == 0 && (args.ldd * output_bytes(args.d_type)) % bytes == 0;
}

/// Maps the runtime's error after a launch to a Status: success, kNotSupported
/// (no kernel image for this GPU, naming what the step was built for), or
/// kRuntimeError with the runtime's message. `context`, if not empty, starts
/// the message (run_step() adds the step's folder itself).
Status status_from_launch(const char* context = "");

/// The SM count of the current device, asked of the driver once per device;
/// 0 without a usable device.
int sm_count_of_current_device();

/// What a stream_buffer() is for: each purpose has its own buffer.
enum class StreamBuffer { kSplitKSums, kSplitKCounters, kAlignedRows };

/// A device buffer of at least `bytes` for this device, stream and purpose,
/// allocated on first use and kept; grown (the old one freed: cudaFree waits
/// for the GPU) when a call asks for more. GEMMs on one stream run one after
/// another, so they never share it. `*fresh` (if given) tells whether it was
/// just allocated, its contents undefined.
Status stream_buffer(cudaStream_t stream, StreamBuffer purpose, size_t bytes, void** data, bool* fresh);

/// Split-K's workspace form (steps 08 on): a buffer of at least `floats`
/// FP32 partial sums and `tiles` counters, one pair per device and stream,
/// allocated on first use and grown when a GEMM needs more. GEMMs on one
/// stream run one after another, so they never share them; the counters are
/// cleared on `stream` when allocated, and every launch must leave them at
/// zero. Growing frees the old buffer (cudaFree waits for the GPU).
Status split_k_workspace(cudaStream_t stream, size_t floats, size_t tiles, float** workspace, unsigned** counters);

/// Which operands align_operand_rows() copied.
struct AlignedCopies {
  bool a = false;  ///< A was copied: args->a and args->lda are the copy's
  bool b = false;  ///< B was copied: args->b and args->ldb are the copy's
};

/// For a kernel that reads A and B through the TMA (rows on 16-byte
/// boundaries) and accepts any rows: each operand whose pointer or leading
/// dimension is not a multiple of `bytes` (a multiple of 16) is copied, on
/// args->stream, into a buffer of this device and stream whose rows are K
/// rounded up to 128 bytes long (an L2 line), zero past K; `*args` then
/// points at the copy
/// (a, lda or b, ldb). Operands already aligned are left as they are. The
/// buffer is kept and grown like split_k_workspace's. The copy reads and
/// writes each operand once: the price of a misaligned row, measured in
/// step 10's chapter.
Status align_operand_rows(GemmArgs* args, int64_t bytes, AlignedCopies* copies);

/// True when A has 1 x 128 or B has 128 x 128 scales: scales that change
/// along K, which a kernel applies at each promotion.
inline bool has_block_scales(const GemmArgs& args) {
  return args.a_scale_granularity == ScaleGranularity::kGroup1x128 ||
         args.b_scale_granularity == ScaleGranularity::kBlock128x128;
}

/// kNotSupported, by name, for block scales with fast accumulation (there is
/// no promotion to apply them at); success otherwise.
Status refuse_block_scales_without_promotion(const GemmArgs& args);

/// Lets `kernel` (a __global__ function) use `bytes` of dynamic shared
/// memory; kRuntimeError with the runtime's reason if it cannot. The runtime
/// is asked once per device, kernel and size (once_per_kernel()).
Status reserve_dynamic_shared_memory(const void* kernel, size_t bytes);

/// What once_per_kernel() remembers of a kernel.
enum class KernelFact {
  kDynamicSharedMemory,  ///< it may use `value` bytes of dynamic shared memory (reserve_dynamic_shared_memory)
  kSm90aImage,           ///< its image is the sm_90a one (sm90::kernel_has_sm90a_image)
};

/// `check()` (a query or setting of `kernel` whose answer holds as long as
/// the program runs) the first time a launch on the current device asks for
/// this fact with this `value`; later calls return success without it. A
/// failure is returned and not remembered: the next call asks again. Each
/// such call to the runtime costs a launch about a microsecond of CPU time,
/// which matters where a GEMM takes ten (the PyTorch operator's chapter
/// measures it).
Status once_per_kernel(const void* kernel, KernelFact what, size_t value,
                       Status (*check)(const void* kernel, size_t value));

/// Sets *args.d_amax to 0 on args.stream, before a kernel that folds each
/// block's amax into it with an atomic max; success when d_amax is null.
Status clear_amax(const GemmArgs& args);

/// A grid has at most this many blocks along y (and z); x allows 2^31 - 1.
inline constexpr int64_t kMaxGridY = 65535;

/// Runs `launch(band)` for consecutive bands of at most `max_rows` rows of A
/// and D, so that a launcher whose grid puts row tiles on gridDim.y (at most
/// kMaxGridY blocks) still accepts every M: `band` is `args` with `a`, `d` and
/// `m` moved to the band. Stops at, and returns, the first error.
template <typename Launch>
Status for_each_row_band(const GemmArgs& args, int64_t max_rows, Launch&& launch) {
  for (int64_t row = 0; row < args.m; row += max_rows) {
    GemmArgs band = args;
    band.m = args.m - row < max_rows ? args.m - row : max_rows;
    band.a = args.a + row * args.lda;  // FP8: one byte per element
    band.d = static_cast<uint8_t*>(args.d) + row * args.ldd * output_bytes(args.d_type);
    const Status status = launch(band);
    if (!status.ok()) return status;
  }
  return Status::success();
}

}  // namespace fp8gemm
