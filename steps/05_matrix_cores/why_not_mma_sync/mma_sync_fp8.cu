// Why not mma.sync? — the smallest FP8 tensor-core kernel of the Ampere/Ada
// style, compiled for sm_90a only to read its SASS (show_sass.sh). Not a step:
// it is not built into the library and not registered.
//
// One warp computes D(16 x 8) = A(16 x 32) * B(8 x 32)^T with
// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32, the FP8 shape that
// sm_89 (Ada) introduced. A and B are K-major (row-major A, B stored as N x K),
// 32 bytes per row; D is row-major 16 x 8 FP32.
//
// Fragments (lane = 4 * group + quad): a 32-bit register holds 4 FP8 values
// consecutive along K.
//   A: a0 = A[group][4q..4q+3]     a1 = A[group+8][4q..4q+3]
//      a2 = A[group][16+4q..]      a3 = A[group+8][16+4q..]
//   B: b0 = B[group][4q..4q+3]     b1 = B[group][16+4q..]
//   D: d0, d1 = D[group][2q, 2q+1] d2, d3 = D[group+8][2q, 2q+1]
#include <cstdint>

__global__ void mma_sync_fp8_16x8x32(const uint8_t* a, const uint8_t* b, float* d) {
  const int lane = threadIdx.x % 32;
  const int group = lane / 4, quad = lane % 4;
  auto load4 = [](const uint8_t* p) { return *reinterpret_cast<const uint32_t*>(p); };
  const uint32_t a0 = load4(a + group * 32 + 4 * quad);
  const uint32_t a1 = load4(a + (group + 8) * 32 + 4 * quad);
  const uint32_t a2 = load4(a + group * 32 + 16 + 4 * quad);
  const uint32_t a3 = load4(a + (group + 8) * 32 + 16 + 4 * quad);
  const uint32_t b0 = load4(b + group * 32 + 4 * quad);
  const uint32_t b1 = load4(b + group * 32 + 16 + 4 * quad);
  float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  d[group * 8 + 2 * quad] = c0;
  d[group * 8 + 2 * quad + 1] = c1;
  d[(group + 8) * 8 + 2 * quad] = c2;
  d[(group + 8) * 8 + 2 * quad + 1] = c3;
}
