// Copies of A and B whose rows start on 16-byte boundaries, for the TMA
// kernels (see align_operand_rows in launch.h). A kernel of its own rather
// than cudaMemcpy2DAsync, which took twice as long (issue 11 runs 6 and 7).
#include "common/device/launch.h"

namespace fp8gemm {
namespace {

/// One operand to copy: `rows` rows of the GEMM's K bytes, `ld` bytes apart
/// from `src` (anywhere), to `dst` (rows `pitch` apart, 16-byte aligned).
struct RowCopy {
  const uint8_t* src = nullptr;
  int64_t rows = 0;
  int64_t ld = 0;
  uint8_t* dst = nullptr;
  int64_t chunks = 0;  ///< 16-byte chunks of dst: rows * pitch / 16 (0: nothing to copy)
};

/// Word j of the 16 bytes that start `shift` bytes into w[0..7] (two aligned
/// 16-byte loads; little-endian words): the bytes of w[q + j] from the
/// (shift % 4)-th on, then those of w[q + j + 1], q = shift / 4. Every index
/// is a constant, so w stays in registers (an index known only at run time
/// would put the array in local memory).
__device__ __forceinline__ uint32_t realigned_word(const uint32_t (&w)[8], int shift, int j) {
  const int q = shift / 4;
  const uint32_t lo = q == 0 ? w[j] : q == 1 ? w[j + 1] : q == 2 ? w[j + 2] : w[j + 3];
  const uint32_t hi = q == 0 ? w[j + 1] : q == 1 ? w[j + 2] : q == 2 ? w[j + 3] : w[j + 4];
  return __funnelshift_r(lo, hi, 8 * (shift % 4));
}

/// Both copies in one launch: the first a.chunks threads copy A, the rest B.
/// One thread writes one 16-byte chunk of dst (an aligned store): dst's row
/// r, bytes [first, first + 16), from src's row r, zero past `cols`. Its
/// source bytes start anywhere, so it loads the two aligned 16-byte words
/// that hold them and shifts them into place (neighbouring threads load the
/// same words, the second one's first is the first one's second: L1 serves
/// it). A chunk at the end of a row (past `cols`) or whose two words would
/// reach outside the operand (before its first byte, after its last) is read
/// a byte at a time instead.
__global__ void copy_rows_kernel(RowCopy a, RowCopy b, int64_t cols, int64_t pitch) {
  int64_t chunk = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool is_a = chunk < a.chunks;
  if (!is_a) chunk -= a.chunks;
  // The fields one at a time: a reference to a or b, chosen at run time,
  // would copy both parameter structs to local memory.
  const uint8_t* const src = is_a ? a.src : b.src;
  const int64_t rows = is_a ? a.rows : b.rows, ld = is_a ? a.ld : b.ld;
  if (chunk >= (is_a ? a.chunks : b.chunks)) return;
  const int64_t chunks_per_row = pitch / 16;
  const int64_t row = chunk / chunks_per_row;
  const int64_t first = (chunk % chunks_per_row) * 16;
  const uint8_t* const from = src + row * ld + first;
  const uint8_t* const end = src + (rows - 1) * ld + cols;  // one past the operand's last byte
  const int shift = static_cast<int>(reinterpret_cast<uintptr_t>(from) % 16);
  const uint8_t* const aligned = from - shift;
  uint32_t words[4];
  if (first + 16 <= cols && aligned >= src && aligned + 32 <= end) {
    const uint4 lo = *reinterpret_cast<const uint4*>(aligned);
    const uint4 hi = *reinterpret_cast<const uint4*>(aligned + 16);
    const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) words[j] = realigned_word(w, shift, j);
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      uint32_t word = 0;
#pragma unroll
      for (int byte = 0; byte < 4; ++byte) {
        const int64_t col = first + 4 * j + byte;
        const uint32_t value = col < cols ? from[4 * j + byte] : 0u;
        word |= value << (8 * byte);
      }
      words[j] = word;
    }
  }
  *reinterpret_cast<uint4*>((is_a ? a.dst : b.dst) + row * pitch + first) =
      make_uint4(words[0], words[1], words[2], words[3]);
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
  RowCopy a, b;
  if (copy_a) a = RowCopy{args->a, args->m, args->lda, buffer, args->m * (pitch / 16)};
  if (copy_b) b = RowCopy{args->b, args->n, args->ldb, buffer + a_bytes, args->n * (pitch / 16)};
  constexpr int kThreads = 256;
  const int64_t chunks = a.chunks + b.chunks;
  const auto blocks = static_cast<unsigned>((chunks + kThreads - 1) / kThreads);
  copy_rows_kernel<<<blocks, kThreads, 0, args->stream>>>(a, b, args->k, pitch);
  status = status_from_launch("copying rows of A or B to 16-byte boundaries");
  if (!status.ok()) return status;
  if (copy_a) {
    args->a = a.dst;
    args->lda = pitch;
    copies->a = true;
  }
  if (copy_b) {
    args->b = b.dst;
    args->ldb = pitch;
    copies->b = true;
  }
  return Status::success();
}

}  // namespace fp8gemm
