// Copies of A and B whose rows start on 16-byte boundaries, for the TMA
// kernels (see align_operand_rows in launch.h). A kernel of its own rather
// than cudaMemcpy2DAsync, which took twice as long (issue 11 runs 6 and 7).
#include "common/device/launch.h"

namespace fp8gemm {
namespace {

/// dst's row r, bytes [0, pitch): src's row r, bytes [0, cols), then zeros.
/// One thread writes 16 bytes of dst (an aligned 16-byte store); src is read
/// a byte at a time, since its rows may start anywhere.
__global__ void copy_rows_kernel(const uint8_t* src, int64_t rows, int64_t cols, int64_t ld, uint8_t* dst,
                                 int64_t pitch) {
  const int64_t chunks_per_row = pitch / 16;
  const int64_t chunk = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (chunk >= rows * chunks_per_row) return;
  const int64_t row = chunk / chunks_per_row;
  const int64_t first = (chunk % chunks_per_row) * 16;
  const uint8_t* from = src + row * ld;
  uint32_t words[4];
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    uint32_t word = 0;
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const int64_t col = first + 4 * w + b;
      const uint32_t byte = col < cols ? from[col] : 0u;
      word |= byte << (8 * b);
    }
    words[w] = word;
  }
  *reinterpret_cast<uint4*>(dst + row * pitch + first) = make_uint4(words[0], words[1], words[2], words[3]);
}

}  // namespace

Status align_operand_rows(GemmArgs* args, int64_t bytes, AlignedCopies* copies) {
  *copies = AlignedCopies{};
  const bool copy_a = !rows_aligned(args->a, args->lda, bytes);
  const bool copy_b = !rows_aligned(args->b, args->ldb, bytes);
  if (!copy_a && !copy_b) return Status::success();
  // The copies' row pitch: K rounded up to 128 bytes, not just to `bytes`, so
  // that every 128-byte row of a TMA box is one L2 line (the kernel alone, on
  // copies with rows 16-byte aligned, took 189 us at 4096 x 4096 x 4100
  // against 112 at 4096^3: issue 11 run 8).
  constexpr int64_t kLineBytes = 128;
  const int64_t pitch = (args->k + kLineBytes - 1) / kLineBytes * kLineBytes;
  const size_t a_bytes = copy_a ? static_cast<size_t>(args->m * pitch) : 0;
  const size_t b_bytes = copy_b ? static_cast<size_t>(args->n * pitch) : 0;
  void* memory = nullptr;
  Status status = stream_buffer(args->stream, StreamBuffer::kAlignedRows, a_bytes + b_bytes, &memory, nullptr);
  if (!status.ok()) return status;
  uint8_t* const buffer = static_cast<uint8_t*>(memory);
  const auto copy = [&](const uint8_t* src, int64_t rows, int64_t ld, uint8_t* dst) {
    constexpr int kThreads = 256;
    const int64_t chunks = rows * (pitch / 16);
    copy_rows_kernel<<<static_cast<unsigned>((chunks + kThreads - 1) / kThreads), kThreads, 0, args->stream>>>(
        src, rows, args->k, ld, dst, pitch);
    return status_from_launch("copying rows of A or B to 16-byte boundaries");
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
