// Copies of A and B whose rows start on 16-byte boundaries, for the TMA
// kernels (see align_operand_rows in launch.h).
//
// The first version copied with a kernel of its own, one thread per 16 bytes
// of the copy, reading a byte at a time: at 4096 x 4096 x 4100 the GEMM with
// its copies took 0.215 ms against 0.120 for the aligned 4096^3 (issue 11
// run 6), where the copies' 67 MB at the HBM's speed would take about 20 us.
#include <map>
#include <mutex>
#include <utility>

#include "common/device/launch.h"

namespace fp8gemm {
namespace {

/// A buffer of at least `bytes` for this device and stream, kept for the
/// next call (the copies of one GEMM are dead once it has run, and the next
/// GEMM on the stream runs after it).
Status aligned_rows_buffer(cudaStream_t stream, size_t bytes, uint8_t** buffer) {
  struct Buffer {
    uint8_t* data = nullptr;
    size_t bytes = 0;
  };
  static std::mutex mutex;
  static std::map<std::pair<int, cudaStream_t>, Buffer> per_stream;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return Status::error(StatusCode::kRuntimeError, "no current device for the aligned copies of A and B");
  }
  const std::lock_guard<std::mutex> lock(mutex);
  Buffer& b = per_stream[{device, stream}];
  if (bytes > b.bytes) {
    if (b.data != nullptr) cudaFree(b.data);  // synchronizes: no launch still reads the old buffer
    b.data = nullptr;
    b.bytes = 0;
    if (cudaMalloc(reinterpret_cast<void**>(&b.data), bytes) != cudaSuccess) {
      cudaGetLastError();
      return Status::error(StatusCode::kRuntimeError, "cannot allocate the aligned copies of A and B");
    }
    b.bytes = bytes;
  }
  *buffer = b.data;
  return Status::success();
}

bool rows_aligned(const uint8_t* p, int64_t ld, int64_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0 && ld % bytes == 0;
}

}  // namespace

Status align_operand_rows(GemmArgs* args, int64_t bytes, AlignedCopies* copies) {
  *copies = AlignedCopies{};
  const bool copy_a = !rows_aligned(args->a, args->lda, bytes);
  const bool copy_b = !rows_aligned(args->b, args->ldb, bytes);
  if (!copy_a && !copy_b) return Status::success();
  const int64_t pitch = (args->k + bytes - 1) / bytes * bytes;  // K rounded up: the copies' row pitch
  const size_t a_bytes = copy_a ? static_cast<size_t>(args->m * pitch) : 0;
  const size_t b_bytes = copy_b ? static_cast<size_t>(args->n * pitch) : 0;
  uint8_t* buffer = nullptr;
  Status status = aligned_rows_buffer(args->stream, a_bytes + b_bytes, &buffer);
  if (!status.ok()) return status;
  // The copy engine's 2-D copy takes any source pitch. The bytes between K
  // and the pitch stay as they are: the TMA, whose tensor is K wide, never
  // reads them (it fills what lies past K with zeros itself).
  const auto copy = [&](const uint8_t* src, int64_t rows, int64_t ld, uint8_t* dst) {
    if (cudaMemcpy2DAsync(dst, static_cast<size_t>(pitch), src, static_cast<size_t>(ld), static_cast<size_t>(args->k),
                          static_cast<size_t>(rows), cudaMemcpyDeviceToDevice, args->stream) != cudaSuccess) {
      cudaGetLastError();
      return Status::error(StatusCode::kRuntimeError, "copying rows of A or B to 16-byte boundaries failed");
    }
    return Status::success();
  };
  if (copy_a) {
    status = copy(args->a, args->m, args->lda, buffer);
    if (!status.ok()) return status;
    args->a = buffer;
    args->lda = pitch;
    copies->a = true;
  }
  if (copy_b) {
    status = copy(args->b, args->n, args->ldb, buffer + a_bytes);
    if (!status.ok()) return status;
    args->b = buffer + a_bytes;
    args->ldb = pitch;
    copies->b = true;
  }
  return Status::success();
}

}  // namespace fp8gemm
