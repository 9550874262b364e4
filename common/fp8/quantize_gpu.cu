// GPU quantization: the same three passes as the host quantize(), as three
// kernels on one stream, with the scale array itself as the working storage.
//
//   1. group_amax_kernel     each block reduces a tile that lies inside one
//                            group and folds it into the group's amax with an
//                            atomic max (scales[] holds amax bits meanwhile);
//                            it also keeps the row-major index of the first
//                            non-finite element, which the host reads back:
//                            if there is one, nothing more runs and the call
//                            returns non_finite_input_error() for it
//   2. amax_to_scale_kernel  scales[i] = dequant_scale_from_amax(amax[i])
//   3. encode_kernel         codes = quantize_value(x, scale of its group)
//
// The amax is exact (a maximum never rounds) and passes 2 and 3 call the same
// functions as the host, so the output is bit-identical to quantize().
#include "common/device/launch.h"
#include "common/fp8/quantize.h"

namespace fp8gemm {
namespace {

// One thread per column of a 128-column group: each block covers one group
// width, and a warp reads 32 consecutive floats of a row (coalesced).
constexpr int kThreads = kQuantGroupSize;
constexpr int kWarpsPerBlock = kThreads / kWarpSize;
// Rows of one amax tile when a group spans many rows (per tensor, 128 x 128).
// It divides 128, so a tile never straddles two 128 x 128 blocks.
constexpr int kTallTileRows = 32;
constexpr int64_t kMaxGridX = 0x7FFFFFFF;

// A tile lies inside one group: 1 x 128 when groups are one row high (per row,
// 1 x 128), 32 x 128 otherwise.
int amax_tile_rows(ScaleGranularity g) {
  return (g == ScaleGranularity::kPerTensor || g == ScaleGranularity::kBlock128x128) ? kTallTileRows : 1;
}

// Largest value over the block; every thread must call it. Returns the result
// in every thread.
__device__ uint32_t block_max(uint32_t value) {
  __shared__ uint32_t warp_max[kWarpsPerBlock];
  __shared__ uint32_t result;
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    value = max(value, __shfl_xor_sync(0xFFFFFFFFu, value, offset));
  }
  const int warp = threadIdx.x / kWarpSize;
  if (threadIdx.x % kWarpSize == 0) warp_max[warp] = value;
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t m = warp_max[0];
    for (int w = 1; w < kWarpsPerBlock; ++w) m = max(m, warp_max[w]);
    result = m;
  }
  __syncthreads();
  const uint32_t block_result = result;
  __syncthreads();  // the next call may overwrite warp_max and result
  return block_result;
}

// Pass 1. Block (x, y) reduces the tiles of column group x whose first rows are
// y * tile_rows, (y + gridDim.y) * tile_rows, ...
//
// The amax is kept as the bits of |v|: for non-negative finite floats the
// order of the bit patterns as unsigned integers is the order of the values,
// so the integer atomicMax computes a float maximum exactly. amax_bits must be
// zero (the bits of +0.0) on entry. A NaN or an infinity (|v| bits >=
// 0x7F800000) takes no part in the amax; instead its index r * cols + col is
// folded into *first_non_finite with an atomic min, which must hold
// kNoNonFinite on entry. The smallest index is the first in row-major order,
// the element the host's check_finite_input() names.
constexpr unsigned long long kNoNonFinite = ~0ull;

__global__ void group_amax_kernel(const float* x, int64_t rows, int64_t cols, int64_t ld, ScaleGranularity g,
                                  int tile_rows, uint32_t* amax_bits, unsigned long long* first_non_finite) {
  const int64_t group_col = static_cast<int64_t>(blockIdx.x) * kQuantGroupSize;
  const int64_t col = group_col + threadIdx.x;
  for (int64_t tile_row = static_cast<int64_t>(blockIdx.y) * tile_rows; tile_row < rows;
       tile_row += static_cast<int64_t>(gridDim.y) * tile_rows) {
    uint32_t thread_max = 0;
    unsigned long long thread_non_finite = kNoNonFinite;
    if (col < cols) {
      const int64_t row_end = min(tile_row + tile_rows, rows);
      for (int64_t r = tile_row; r < row_end; ++r) {
        const uint32_t magnitude = float_bits(x[r * ld + col]) & 0x7FFFFFFFu;
        if (magnitude < 0x7F800000u) {
          thread_max = max(thread_max, magnitude);
        } else if (thread_non_finite == kNoNonFinite) {  // rows ascend: the first is this thread's smallest
          thread_non_finite = static_cast<unsigned long long>(r * cols + col);
        }
      }
    }
    if (thread_non_finite != kNoNonFinite) atomicMin(first_non_finite, thread_non_finite);
    const uint32_t tile_max = block_max(thread_max);
    if (threadIdx.x == 0) atomicMax(&amax_bits[scale_index(tile_row, group_col, rows, cols, g)], tile_max);
  }
}

// Pass 2, in place: the amax bits of each group become its scale. One type
// (uint32_t) for the reads and the writes, so no aliasing question arises.
__global__ void amax_to_scale_kernel(uint32_t* amax_then_scale_bits, int64_t count, Fp8Format format) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float amax = float_from_bits(amax_then_scale_bits[i]);
    amax_then_scale_bits[i] = float_bits(dequant_scale_from_amax(amax, format));
  }
}

// Pass 3. Block (x, y) encodes column group x of rows y, y + gridDim.y, ...
__global__ void encode_kernel(const float* x, int64_t rows, int64_t cols, int64_t ld, ScaleGranularity g,
                              const float* scales, Fp8Format format, Fp8Overflow overflow, uint8_t* codes) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kQuantGroupSize + threadIdx.x;
  if (col >= cols) return;
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const float scale = scales[scale_index(row, col, rows, cols, g)];
    codes[row * cols + col] = quantize_value(x[row * ld + col], scale, format, overflow);
  }
}

Status runtime_error(const char* what, cudaError_t err) {
  return Status::error(StatusCode::kRuntimeError,
                       std::string("quantize_on_gpu: ") + what + ": " + cudaGetErrorString(err));
}

// One unsigned long long on the device, from the stream's memory pool, freed
// on `stream` when the object goes.
class DeviceFlag {
 public:
  explicit DeviceFlag(cudaStream_t stream) : stream_(stream) {
    error_ = cudaMallocAsync(reinterpret_cast<void**>(&ptr_), sizeof(unsigned long long), stream);
    if (error_ != cudaSuccess) ptr_ = nullptr;
  }
  ~DeviceFlag() {
    if (ptr_ != nullptr) cudaFreeAsync(ptr_, stream_);
  }
  DeviceFlag(const DeviceFlag&) = delete;
  DeviceFlag& operator=(const DeviceFlag&) = delete;
  unsigned long long* get() const { return ptr_; }
  cudaError_t error() const { return error_; }

 private:
  cudaStream_t stream_;
  unsigned long long* ptr_ = nullptr;
  cudaError_t error_;
};

// The prefix every message of quantize_on_gpu() carries.
Status with_prefix(const Status& status) { return Status::error(status.code, "quantize_on_gpu: " + status.message); }

}  // namespace

Status quantize_on_gpu(const float* x, int64_t rows, int64_t cols, int64_t ld, Fp8Format format,
                       ScaleGranularity granularity, uint8_t* codes, float* scales, cudaStream_t stream,
                       Fp8Overflow overflow) {
  Status status = validate_quantize_args(x, rows, cols, ld, format, granularity, overflow);
  if (!status.ok()) return with_prefix(status);
  if (codes == nullptr || scales == nullptr) {
    return Status::error(StatusCode::kInvalidArgument, "quantize_on_gpu: codes and scales must not be null pointers");
  }
  const int64_t column_groups = (cols + kQuantGroupSize - 1) / kQuantGroupSize;
  if (column_groups > kMaxGridX) {
    return Status::error(StatusCode::kNotSupported, "quantize_on_gpu: cols <= 128 * (2^31 - 1) required");
  }
  const int64_t count = scale_count(rows, cols, granularity);
  uint32_t* amax_bits = reinterpret_cast<uint32_t*>(scales);

  // Pass 1: amax per group, accumulated from zero, and the first non-finite
  // element, from "none".
  const DeviceFlag first_non_finite(stream);
  if (first_non_finite.error() != cudaSuccess) {
    return runtime_error("cudaMallocAsync of the non-finite flag", first_non_finite.error());
  }
  cudaError_t err = cudaMemsetAsync(first_non_finite.get(), 0xFF, sizeof(unsigned long long), stream);
  if (err != cudaSuccess) return runtime_error("cudaMemsetAsync of the non-finite flag", err);
  err = cudaMemsetAsync(scales, 0, static_cast<size_t>(count) * sizeof(float), stream);
  if (err != cudaSuccess) return runtime_error("cudaMemsetAsync of the scales", err);
  const int tile_rows = amax_tile_rows(granularity);
  const int64_t row_tiles = (rows + tile_rows - 1) / tile_rows;
  const dim3 amax_grid(static_cast<unsigned>(column_groups),
                       static_cast<unsigned>(row_tiles < kMaxGridY ? row_tiles : kMaxGridY));
  group_amax_kernel<<<amax_grid, kThreads, 0, stream>>>(x, rows, cols, ld, granularity, tile_rows, amax_bits,
                                                        first_non_finite.get());
  status = status_from_launch("quantize_on_gpu (group_amax_kernel)");
  if (!status.ok()) return status;

  // The one wait: is x finite? If not, name its first non-finite element,
  // read back from x, as the host does, and stop before any scale exists.
  unsigned long long first = kNoNonFinite;
  err = cudaMemcpyAsync(&first, first_non_finite.get(), sizeof(first), cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) return runtime_error("reading back the non-finite flag", err);
  if (first != kNoNonFinite) {
    const int64_t row = static_cast<int64_t>(first / static_cast<unsigned long long>(cols));
    const int64_t col = static_cast<int64_t>(first % static_cast<unsigned long long>(cols));
    float value = 0.0f;
    err = cudaMemcpyAsync(&value, x + row * ld + col, sizeof(value), cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    if (err != cudaSuccess) return runtime_error("reading back the first non-finite element", err);
    return with_prefix(non_finite_input_error(row, col, value));
  }

  // Pass 2: scales from amaxes. Few elements: a small grid-stride grid suffices.
  const int64_t scale_blocks = (count + kThreads - 1) / kThreads;
  amax_to_scale_kernel<<<static_cast<unsigned>(scale_blocks < 1024 ? scale_blocks : 1024), kThreads, 0, stream>>>(
      amax_bits, count, format);
  status = status_from_launch("quantize_on_gpu (amax_to_scale_kernel)");
  if (!status.ok()) return status;

  // Pass 3: the codes.
  const dim3 encode_grid(static_cast<unsigned>(column_groups),
                         static_cast<unsigned>(rows < kMaxGridY ? rows : kMaxGridY));
  encode_kernel<<<encode_grid, kThreads, 0, stream>>>(x, rows, cols, ld, granularity, scales, format, overflow, codes);
  return status_from_launch("quantize_on_gpu (encode_kernel)");
}

}  // namespace fp8gemm
