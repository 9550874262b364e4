// tma_alignment_probe: where a TMA box may start along a row. The TMA asks
// for a 16-byte aligned base and row pitch (cuTensorMapEncodeTiled checks
// both), but says nothing at encode time about the coordinates an
// instruction passes. Step 12 tried to store D's misaligned rows through a
// map of G rows per row (issue 11 run 55), whose boxes start 2, 4 or 8 bytes
// past a 16-byte boundary, and the store stopped the kernel with an illegal
// instruction. This program asks the question alone: one box of 8 rows x 128
// bytes, loaded from global into shared memory or stored back, at an inner
// coordinate `offset` bytes into rows that start on 16-byte boundaries, with
// the 128-byte swizzle or none, elements of 1 or 2 bytes.
//
// One case per process (an illegal instruction ends the CUDA context), so a
// script runs it once per case (bench/results/h100/issue11/run56.sh). It
// prints one JSON object: the case, and `result` = "correct" (the box's bytes
// where they should be, nothing else touched), "wrong" (it ran, with other
// bytes), or "fault" with the CUDA error.
//
// Usage: tma_alignment_probe --op load|store --offset BYTES --swizzle 0|128
//                            --element-bytes 1|2
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/sm90/arch.h"
#include "common/sm90/mbarrier.cuh"
#include "common/sm90/tensor_map.h"
#include "common/sm90/tma.cuh"

namespace fp8gemm {
namespace {

constexpr int kRows = 8;           // the box's rows, and the matrix's
constexpr int kBoxBytes = 128;     // a box row: the 128-byte swizzle's whole span
constexpr int kRowBytes = 512;     // the matrix's row pitch (a multiple of 16)
constexpr uint8_t kPoison = 0xEE;  // global bytes a store must not touch

// Byte b of box row r in shared memory, with the 128-byte swizzle or none.
__host__ __device__ inline int box_byte(int r, int b, bool swizzle) {
  return swizzle ? r * kBoxBytes + ((((b >> 4) ^ r) & 7) << 4) + (b & 15) : r * kBoxBytes + b;
}

// One block of 32 threads. load: thread 0 copies the box at (inner, 0) into
// shared memory, then every thread copies shared memory out to `out` in box
// order. store: the threads fill the box with `pattern` (box order), thread 0
// stores it to (inner, 0).
__global__ void probe_kernel(const __grid_constant__ CUtensorMap map, bool store, bool swizzle, int inner,
                             const uint8_t* pattern, uint8_t* out) {
#if FP8GEMM_SM90A_DEVICE
  using namespace sm90;
  __shared__ __align__(1024) uint8_t box[kRows * kBoxBytes];
  __shared__ __align__(8) uint64_t full;
  const uint32_t box_address = shared_address(box);
  if (!store) {
    if (threadIdx.x == 0) {
      mbarrier_init(shared_address(&full), 1);
      fence_barrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      mbarrier_arrive_expect_tx(shared_address(&full), kRows * kBoxBytes);
      tma_load_2d(box_address, &map, shared_address(&full), inner, 0);
    }
    mbarrier_wait(shared_address(&full), 0);
    for (int i = threadIdx.x; i < kRows * kBoxBytes; i += blockDim.x) {
      out[i] = box[box_byte(i / kBoxBytes, i % kBoxBytes, swizzle)];
    }
  } else {
    for (int i = threadIdx.x; i < kRows * kBoxBytes; i += blockDim.x) {
      box[box_byte(i / kBoxBytes, i % kBoxBytes, swizzle)] = pattern[i];
    }
    fence_shared_for_tma();
    __syncthreads();
    if (threadIdx.x == 0) {
      tma_store_2d(&map, box_address, inner, 0);
      tma_store_commit_group();
      asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");  // the writes done, not only the reads
    }
  }
#endif
}

int fail(const char* what, cudaError_t error) {
  std::printf("\"result\": \"fault\", \"error\": \"%s: %s\"}\n", what, cudaGetErrorString(error));
  return 0;  // the case ran: its answer is the fault
}

int run(int argc, char** argv) {
  std::string op = "load";
  int offset = 0, swizzle_bytes = 128, element_bytes = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    const char* value = argv[i + 1];
    if (name == "--op") {
      op = value;
    } else if (name == "--offset") {
      offset = std::atoi(value);
    } else if (name == "--swizzle") {
      swizzle_bytes = std::atoi(value);
    } else if (name == "--element-bytes") {
      element_bytes = std::atoi(value);
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if ((op != "load" && op != "store") || (swizzle_bytes != 0 && swizzle_bytes != 128) ||
      (element_bytes != 1 && element_bytes != 2) || offset < 0 || offset % element_bytes != 0 ||
      offset + kBoxBytes > kRowBytes) {
    std::fprintf(stderr,
                 "usage: tma_alignment_probe --op load|store --offset BYTES (a multiple of the element, at most "
                 "%d) --swizzle 0|128 --element-bytes 1|2\n",
                 kRowBytes - kBoxBytes);
    return 2;
  }
  const bool store = op == "store", swizzle = swizzle_bytes == 128;
  std::printf("{\"op\": \"%s\", \"offset_bytes\": %d, \"swizzle\": %d, \"element_bytes\": %d, ", op.c_str(), offset,
              swizzle_bytes, element_bytes);

  // The matrix: row r, byte b holds (r * 37 + b * 11 + 1) mod 251 (no two
  // neighbours alike, none 0); for a store, poison.
  std::vector<uint8_t> matrix(kRows * kRowBytes), pattern(kRows * kBoxBytes);
  for (int r = 0; r < kRows; ++r) {
    for (int b = 0; b < kRowBytes; ++b) matrix[r * kRowBytes + b] = static_cast<uint8_t>((r * 37 + b * 11 + 1) % 251);
  }
  for (int i = 0; i < kRows * kBoxBytes; ++i) pattern[i] = static_cast<uint8_t>((i * 7 + 3) % 253);
  if (store) std::memset(matrix.data(), kPoison, matrix.size());
  uint8_t *d_matrix = nullptr, *d_pattern = nullptr, *d_out = nullptr;
  cudaError_t error = cudaMalloc(&d_matrix, matrix.size());
  if (error == cudaSuccess) error = cudaMalloc(&d_pattern, pattern.size());
  if (error == cudaSuccess) error = cudaMalloc(&d_out, pattern.size());
  if (error == cudaSuccess) error = cudaMemcpy(d_matrix, matrix.data(), matrix.size(), cudaMemcpyHostToDevice);
  if (error == cudaSuccess) error = cudaMemcpy(d_pattern, pattern.data(), pattern.size(), cudaMemcpyHostToDevice);
  if (error == cudaSuccess) error = cudaMemset(d_out, 0, pattern.size());
  if (error != cudaSuccess) return fail("setting up", error);

  const PFN_cuTensorMapEncodeTiled_v12000 encode = sm90::tensor_map_encoder();
  if (encode == nullptr) {
    std::printf("\"result\": \"fault\", \"error\": \"no cuTensorMapEncodeTiled\"}\n");
    return 1;
  }
  CUtensorMap map;
  const CUtensorMapDataType type = element_bytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_UINT16;
  const cuuint64_t global_dim[2] = {static_cast<cuuint64_t>(kRowBytes / element_bytes), kRows};
  const cuuint64_t global_stride[1] = {kRowBytes};
  const cuuint32_t box_dim[2] = {static_cast<cuuint32_t>(kBoxBytes / element_bytes), kRows};
  const cuuint32_t element_stride[2] = {1, 1};
  const CUresult encoded =
      encode(&map, type, 2, d_matrix, global_dim, global_stride, box_dim, element_stride, CU_TENSOR_MAP_INTERLEAVE_NONE,
             swizzle ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (encoded != CUDA_SUCCESS) {
    std::printf("\"result\": \"fault\", \"error\": \"cuTensorMapEncodeTiled returned %d\"}\n",
                static_cast<int>(encoded));
    return 0;
  }
  probe_kernel<<<1, 32>>>(map, store, swizzle, offset / element_bytes, d_pattern, d_out);
  error = cudaGetLastError();
  if (error != cudaSuccess) return fail("launching", error);
  error = cudaDeviceSynchronize();
  if (error != cudaSuccess) return fail("running", error);

  std::vector<uint8_t> after(matrix.size()), out(pattern.size());
  error = cudaMemcpy(after.data(), d_matrix, after.size(), cudaMemcpyDeviceToHost);
  if (error == cudaSuccess) error = cudaMemcpy(out.data(), d_out, out.size(), cudaMemcpyDeviceToHost);
  if (error != cudaSuccess) return fail("reading back", error);
  int wrong = 0;
  for (int r = 0; r < kRows; ++r) {
    for (int b = 0; b < kRowBytes; ++b) {
      const bool in_box = b >= offset && b < offset + kBoxBytes;
      if (store) {  // the box's bytes in its place, poison everywhere else
        const uint8_t want = in_box ? pattern[r * kBoxBytes + (b - offset)] : kPoison;
        wrong += after[r * kRowBytes + b] != want;
      } else if (in_box) {  // the matrix's bytes in the box
        wrong += out[r * kBoxBytes + (b - offset)] != matrix[r * kRowBytes + b];
      }
    }
  }
  std::printf("\"result\": \"%s\", \"wrong_bytes\": %d}\n", wrong == 0 ? "correct" : "wrong", wrong);
  cudaFree(d_matrix);
  cudaFree(d_pattern);
  cudaFree(d_out);
  return 0;
}

}  // namespace
}  // namespace fp8gemm

int main(int argc, char** argv) { return fp8gemm::run(argc, argv); }
