/// @file fragment_epilogue.cuh
/// @brief The fused epilogue on a wgmma accumulator fragment (step 07's, and
///        every later Hopper step's): scales, bias and GELU in place on a
///        thread's sums, max |y| for an FP8 D's amax, and D written straight
///        from the registers, through shared memory and the TMA, or through
///        shared memory a row at a time by whole warps (rows the TMA cannot
///        write).
///
/// A consumer warpgroup holds a 64 x kBlockN tile of sums, kBlockN / 2 per
/// thread, in wgmma's fragment layout (common/sm90/wgmma.cuh): value
/// 4j + 2h + c of the thread is row row0 + 8h, column col0 + 8j + c, where
/// row0 = the warpgroup's first row + 16 * warp + lane / 4 and col0 = the
/// tile's first column + 2 * (lane % 4). Every function here takes the tile
/// width as a template parameter, so a step with a narrower tile (step 08's
/// small-M tiles) instantiates the same code.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <type_traits>

#include "common/api/gemm.h"
#include "common/device/amax.cuh"
#include "common/device/epilogue.h"
#include "common/device/kernel.h"
#include "common/device/operand_scales.h"
#include "common/sm90/arch.h"
#include "common/sm90/tma.cuh"

namespace fp8gemm {
namespace sm90 {

// D's types and the layout of its shared-memory buffer are plain arithmetic,
// outside the guard below: a kernel's configuration (its shared-memory sizes)
// uses them in every pass, also the device pass of an architecture whose
// kernels are empty (a "89;90a" build).

/// D's element type for an output type: BF16 and FP8 are stored as their bits.
template <OutputType kOut>
using OutputElement = std::conditional_t<kOut == OutputType::kFP32, float,
                                         std::conditional_t<kOut == OutputType::kBF16, uint16_t, uint8_t>>;

/// The boxes of D that store_tile_through_tma() writes for a warpgroup: 64
/// rows x 128 bytes each (the 128-byte swizzle's row), kBlockN columns in
/// all: 1 box of FP8 for 128 columns, 2 of BF16, 4 of FP32.
template <OutputType kOut, int kBlockN>
inline constexpr int kTmaStoreBoxes = kBlockN* static_cast<int>(sizeof(OutputElement<kOut>)) / 128;
/// A BF16 tile whose rows are longer than one box but not whole boxes (step
/// 12's 128 x 112 tile: 224 bytes) takes one box more, which starts a box's
/// width before the row's end: it overlaps the box before it, and the TMA
/// writes the columns they share twice, with the same values.
template <OutputType kOut, int kBlockN>
inline constexpr bool kOverlappingLastBox =
    (kOut == OutputType::kBF16) && kBlockN * 2 > 128 && kBlockN * 2 % 128 != 0 && kBlockN % 16 == 0;
/// The boxes that cover a row: kTmaStoreBoxes, and the overlapping one.
template <OutputType kOut, int kBlockN>
inline constexpr int kTmaStoreBoxesCovering = kTmaStoreBoxes<kOut, kBlockN> +
                                              (kOverlappingLastBox<kOut, kBlockN> ? 1 : 0);
/// Bytes of one such box: 64 rows of 128 bytes.
inline constexpr uint32_t kTmaStoreBoxBytes = 64 * 128;

}  // namespace sm90
}  // namespace fp8gemm

#if FP8GEMM_SM90A_PARSE
namespace fp8gemm {
namespace sm90 {

/// Two neighbouring values of y as D's type, packed as they lie in memory (the
/// first in the low bits), with the hardware's conversions: BF16 rounded to
/// nearest even; FP8 the saturating, nearest-even code of y / d_scale (as
/// float_to_fp8 in common/fp8/fp8.h, bit for bit). `inverse_d_scale` is
/// 1 / d_scale: y times it is y / d_scale exactly when d_scale is a power of
/// two, and within one FP32 rounding of it otherwise.
template <OutputType kOut>
__device__ __forceinline__ uint32_t output_pair(float y0, float y1, float inverse_d_scale) {
  if constexpr (kOut == OutputType::kBF16) {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(y0, y1);
    return *reinterpret_cast<const uint32_t*>(&pair);
  } else {
    static_assert(kOut == OutputType::kE4M3 || kOut == OutputType::kE5M2, "FP32 needs no conversion");
    return __nv_cvt_float2_to_fp8x2(make_float2(y0 * inverse_d_scale, y1 * inverse_d_scale), __NV_SATFINITE,
                                    kOut == OutputType::kE4M3 ? __NV_E4M3 : __NV_E5M2);
  }
}

/// This thread's kBlockN / 4 columns' entries of a per-column vector (B's
/// outer-vector scales, or the bias): entry 2j + c is column col0 + 8j + c,
/// columns past N read the last column's. Every load is issued before the
/// first is used: with one load in flight at a time (the BF16 bias went
/// through one register, each load waiting for the last one's use) the
/// epilogue paid an L2 latency per column, 32 per tile.
template <int kBlockN, class T>
__device__ __forceinline__ void load_tile_columns(float (&values)[kBlockN / 4], const T* vector, int col0,
                                                  int last_col) {
  T loaded[kBlockN / 4];
#pragma unroll
  for (int i = 0; i < kBlockN / 4; ++i) loaded[i] = vector[std::min(col0 + 8 * (i / 2) + i % 2, last_col)];
#pragma unroll
  for (int i = 0; i < kBlockN / 4; ++i) {
    if constexpr (std::is_same_v<T, uint16_t>) {
      values[i] = bf16_bits_to_float(loaded[i]);
    } else {
      values[i] = loaded[i];
    }
  }
}

/// How apply_epilogue() reads a tile's per-column vectors (the bias, B's
/// outer-vector scales): every load first, then the arithmetic (32 loads in
/// flight a thread: one L2 latency a tile, 64 more registers live; a
/// 256-column tile in two chunks of 128 columns, two latencies), or a
/// column at a time (a latency per column, no extra registers). Step 10's
/// split block-scaled kernels keep the second: with the first, ptxas spills
/// in them (5 local-memory instructions); every other step takes the first.
enum class ColumnLoads { kAllFirst, kOneAtATime };

/// The epilogue's arithmetic, in place on this thread's kBlockN / 2 sums (the wgmma
/// fragment layout, see wgmma_m64n128k32: value 4j + 2h + c is row row0 + 8h,
/// column col0 + 8j + c): y = act(sum * s_A(row) * s_B(col) + bias[col]).
///
/// The epilogue runs once per tile and nothing overlaps it, so every
/// instruction in it counts: each decision that is the same for the whole GEMM
/// (which scales, whether a bias, which activation) is taken once, around the
/// unrolled loops, not inside them. Elements past M or N are computed too (from
/// the zeros the TMA loaded), with the last row's and column's factors, and
/// never stored.
template <int kBlockN, ColumnLoads kColumnLoads = ColumnLoads::kAllFirst>
__device__ __forceinline__ void apply_epilogue(float (&acc)[kBlockN / 2], const GemmArgs& args,
                                               const ConstantScales& a_scales, const ConstantScales& b_scales, int row0,
                                               int col0) {
  const int last_row = static_cast<int>(args.m) - 1, last_col = static_cast<int>(args.n) - 1;
  float row_factor[2];  // s_A of the row times B's per-tensor part
#pragma unroll
  for (int h = 0; h < 2; ++h) row_factor[h] = a_scales.of_row(std::min(row0 + 8 * h, last_row)) * b_scales.tensor;
  if (b_scales.rows == nullptr && args.bias == nullptr) {
#pragma unroll
    for (int i = 0; i < kBlockN / 2; ++i) acc[i] *= row_factor[(i / 2) % 2];
  } else if constexpr (kColumnLoads == ColumnLoads::kOneAtATime) {
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int column = std::min(col0 + 8 * j + c, last_col);
        const float col_scale = b_scales.rows != nullptr ? b_scales.rows[column] : 1.0f;  // B's rows are D's columns
        const float bias = args.bias != nullptr ? load_bias(args.bias, column, args.bias_type) : 0.0f;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float& value = acc[4 * j + 2 * h + c];
          value = fmaf(value, row_factor[h] * col_scale, bias);
        }
      }
    }
  } else {
    // A chunk of at most 128 columns at a time: a 256-column tile's 128 sums
    // a thread leave no room for 128 more registers of vector entries
    // (ptxas spilled them), and room for 64. One chunk for every other tile.
    constexpr int kChunkN = kBlockN < 128 ? kBlockN : 128;
#pragma unroll
    for (int chunk = 0; chunk < kBlockN / kChunkN; ++chunk) {
      const int chunk_col0 = col0 + chunk * kChunkN;
      float col_scale[kChunkN / 4], bias[kChunkN / 4];  // entry 2j + c: column chunk_col0 + 8j + c
      if (b_scales.rows != nullptr) {                   // B's rows are D's columns
        load_tile_columns<kChunkN>(col_scale, b_scales.rows, chunk_col0, last_col);
      } else {
#pragma unroll
        for (int i = 0; i < kChunkN / 4; ++i) col_scale[i] = 1.0f;
      }
      if (args.bias == nullptr) {
#pragma unroll
        for (int i = 0; i < kChunkN / 4; ++i) bias[i] = 0.0f;
      } else if (args.bias_type == BiasType::kBF16) {
        load_tile_columns<kChunkN>(bias, static_cast<const uint16_t*>(args.bias), chunk_col0, last_col);
      } else {
        load_tile_columns<kChunkN>(bias, static_cast<const float*>(args.bias), chunk_col0, last_col);
      }
#pragma unroll
      for (int j = 0; j < kChunkN / 8; ++j) {
#pragma unroll
        for (int c = 0; c < 2; ++c) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            float& value = acc[chunk * kChunkN / 2 + 4 * j + 2 * h + c];
            value = fmaf(value, row_factor[h] * col_scale[2 * j + c], bias[2 * j + c]);
          }
        }
      }
    }
  }
  // GELU inline, one loop per form: its 64 evaluations are independent, so
  // the warp overlaps their latencies. (A call per element, the version
  // before this one, ran them one after another.)
  if (args.activation == Activation::kGeluTanh) {
#pragma unroll
    for (int i = 0; i < kBlockN / 2; ++i) acc[i] = gelu_tanh(acc[i]);
  } else if (args.activation == Activation::kGeluErf) {
#pragma unroll
    for (int i = 0; i < kBlockN / 2; ++i) acc[i] = gelu_erf(acc[i]);
  }
}

/// max |y| over this thread's elements inside D, for FP8 D's amax. A tile
/// inside D (all but the last row and column of tiles) needs no bounds checks.
template <int kBlockN>
__device__ __forceinline__ float fragment_amax(const float (&y)[kBlockN / 2], const GemmArgs& args, int row0,
                                               int col0) {
  float amax = 0.0f;
  const int rows_left = static_cast<int>(args.m) - row0, cols_left = static_cast<int>(args.n) - col0;
  // The thread's farthest element is 8 rows and 8 * 15 + 1 = kBlockN - 7 columns on.
  if (8 < rows_left && kBlockN - 7 < cols_left) {
#pragma unroll
    for (int i = 0; i < kBlockN / 2; ++i) amax = fmaxf(amax, fabsf(y[i]));
    return amax;
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        if (8 * h < rows_left && 8 * j + c < cols_left) amax = fmaxf(amax, fabsf(y[4 * j + 2 * h + c]));
      }
    }
  }
  return amax;
}

/// Stores y (in the fragment layout) straight from registers into D: each
/// thread writes pairs of neighbouring columns, 2 to 8 bytes at a time; one
/// store instruction of a warp touches 8 rows. Alignment: where D's pointer is
/// aligned to a pair and ldd is even (`pairs_aligned`; always so for the steps
/// whose constraints ask for 16-byte rows) a pair starts on its own size, the
/// column being even; otherwise each element is stored alone.
template <OutputType kOut, int kBlockN>
__device__ __forceinline__ void store_tile_directly(const float (&y)[kBlockN / 2], const GemmArgs& args, int row0,
                                                    int col0, float inverse_d_scale, bool pairs_aligned = true) {
  using T = OutputElement<kOut>;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + 8 * h;
    if (row >= args.m) continue;
    T* d_row = static_cast<T*>(args.d) + row * args.ldd;
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
      const int col = col0 + 8 * j;
      const float y0 = y[4 * j + 2 * h], y1 = y[4 * j + 2 * h + 1];
      if (!pairs_aligned) {  // one element at a time (step 10 accepts any ldd and pointer)
        if constexpr (kOut == OutputType::kFP32) {
          if (col < args.n) d_row[col] = y0;
          if (col + 1 < args.n) d_row[col + 1] = y1;
        } else {
          const uint32_t pair = output_pair<kOut>(y0, y1, inverse_d_scale);  // the first in the low bits
          constexpr int kBits = 8 * static_cast<int>(sizeof(T));
          if (col < args.n) d_row[col] = static_cast<T>(pair);
          if (col + 1 < args.n) d_row[col + 1] = static_cast<T>(pair >> kBits);
        }
        continue;
      }
      if (col + 1 < args.n) {
        if constexpr (kOut == OutputType::kFP32) {
          *reinterpret_cast<float2*>(d_row + col) = make_float2(y0, y1);
        } else if constexpr (kOut == OutputType::kBF16) {
          *reinterpret_cast<uint32_t*>(d_row + col) = output_pair<kOut>(y0, y1, inverse_d_scale);
        } else {
          *reinterpret_cast<uint16_t*>(d_row + col) = static_cast<uint16_t>(output_pair<kOut>(y0, y1, inverse_d_scale));
        }
      } else if (col < args.n) {
        if constexpr (kOut == OutputType::kFP32) {
          d_row[col] = y0;
        } else {
          d_row[col] = static_cast<T>(output_pair<kOut>(y0, 0.0f, inverse_d_scale));
        }
      }
    }
  }
}

/// Writes the warpgroup's 64 x kBlockN part of D, as D's type, into shared
/// memory: boxes of 64 rows x 128 bytes laid out in the TMA's 128-byte
/// swizzle (BF16 with stmatrix, 4 rows of 16 bytes per lane and instruction;
/// FP32 and FP8 with plain stores: stmatrix moves 16-bit values only). Each
/// warp writes the 16 rows of its fragment. Box b is at shared-window address
/// `first_box + b * box_stride`, 1024-byte aligned: step 07 reuses the
/// warpgroup's share of the A tiles of stages 0, 1, ..., idle once the
/// mainloop is over; the persistent steps have a D buffer of their own.
/// kBlockN * sizeof(D's element) must be a multiple of 128, or, BF16 only,
/// the rows end in an overlapping box (kOverlappingLastBox).
template <OutputType kOut, int kBlockN>
__device__ __forceinline__ void write_tile_to_boxes(const float (&y)[kBlockN / 2], uint32_t first_box,
                                                    uint32_t box_stride, float inverse_d_scale) {
  using T = OutputElement<kOut>;
  constexpr int kBoxBytesPerRow = 128;  // the swizzle's row
  constexpr int kBoxColumns = kBoxBytesPerRow / static_cast<int>(sizeof(T));
  static_assert(kTmaStoreBoxes<kOut, kBlockN> * kBoxColumns == kBlockN || kOverlappingLastBox<kOut, kBlockN>,
                "the tile's rows must fill whole 128-byte boxes (BF16: or end in an overlapping one)");
  const auto box_address = [&](int box) { return first_box + box * box_stride; };
  const int lane = threadIdx.x % kWarpSize;
  const int warp_row = (threadIdx.x % kWarpgroupThreads) / kWarpSize * 16;  // the warp's 16 rows of the 64

  if constexpr (kOut == OutputType::kBF16) {
    // One stmatrix stores fragment columns 8j..8j+15 of the warp's 16 rows
    // as four 8 x 8 matrices: q = 0: rows 0-7 of columns 8j.., q = 1: rows
    // 8-15, q = 2 and 3: the same for columns 8j + 8... Lane 8q + r names
    // the address of row r of matrix q.
    const int q = lane / 8;
    const int address_row = warp_row + 8 * (q % 2) + lane % 8;
#pragma unroll
    for (int j = 0; j < kBlockN / 8; j += 2) {
      uint32_t pairs[4];
#pragma unroll
      for (int m = 0; m < 4; ++m) {
        const int i = 4 * (j + m / 2) + 2 * (m % 2);  // the pair's first value in the fragment
        pairs[m] = output_pair<kOut>(y[i], y[i + 1], inverse_d_scale);
      }
      const int byte = 8 * (j + q / 2) * static_cast<int>(sizeof(T));
      // With an overlapping last box, the columns before its first go to
      // their box and those from it on to the last box (the columns they
      // share, to both); otherwise every column goes to its box.
      constexpr bool kOverlap = kOverlappingLastBox<kOut, kBlockN>;
      constexpr int kLastBox = kTmaStoreBoxes<kOut, kBlockN>;
      constexpr int kLastBoxByte = (kBlockN - kBoxColumns) * static_cast<int>(sizeof(T));
      if (!kOverlap || 16 * j < kLastBox * kBoxBytesPerRow) {
        stmatrix_x4(swizzled_128b_address(box_address(byte / kBoxBytesPerRow), address_row, byte % kBoxBytesPerRow),
                    pairs);
      }
      if (kOverlap && 16 * j >= kLastBoxByte) {
        stmatrix_x4(swizzled_128b_address(box_address(kLastBox), address_row, byte - kLastBoxByte), pairs);
      }
    }
  } else {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = warp_row + lane / 4 + 8 * h;
#pragma unroll
      for (int j = 0; j < kBlockN / 8; ++j) {
        const int byte = (8 * j + 2 * (lane % 4)) * static_cast<int>(sizeof(T));
        const uint32_t address =
            swizzled_128b_address(box_address(byte / kBoxBytesPerRow), row, byte % kBoxBytesPerRow);
        const int i = 4 * j + 2 * h;
        if constexpr (kOut == OutputType::kFP32) {
          asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(address), "f"(y[i]), "f"(y[i + 1]) : "memory");
        } else {
          const uint16_t codes = static_cast<uint16_t>(output_pair<kOut>(y[i], y[i + 1], inverse_d_scale));
          asm volatile("st.shared.u16 [%0], %1;" ::"r"(address), "h"(codes) : "memory");
        }
      }
    }
  }
}

/// Stores the warpgroup's 64 x kBlockN part of D through shared memory and
/// the TMA: write_tile_to_boxes(), then the warpgroup meets at named barrier
/// `barrier`, and one thread hands the boxes to the TMA, which writes whole
/// rows and skips what lies past M or N. kWaitForRead: the issuing thread
/// waits until the TMA has read the boxes (the block may then exit or
/// overwrite them); a persistent kernel passes false and waits only before it
/// writes the boxes again.
template <OutputType kOut, int kBlockN, bool kWaitForRead = true>
__device__ __forceinline__ void store_tile_through_tma(const float (&y)[kBlockN / 2], const GemmArgs& args,
                                                       const CUtensorMap* map_d, uint32_t first_box,
                                                       uint32_t box_stride, int barrier, int tile_row, int tile_col,
                                                       float inverse_d_scale) {
  constexpr int kBoxColumns = 128 / static_cast<int>(sizeof(OutputElement<kOut>));
  write_tile_to_boxes<kOut, kBlockN>(y, first_box, box_stride, inverse_d_scale);
  fence_shared_for_tma();  // every thread: its stores, visible to the TMA
  named_barrier_sync(barrier, kWarpgroupThreads);
  if (threadIdx.x % kWarpgroupThreads == 0 && tile_row < args.m) {
#pragma unroll
    for (int box = 0; box < kTmaStoreBoxes<kOut, kBlockN>; ++box) {
      tma_store_2d(map_d, first_box + box * box_stride, tile_col + box * kBoxColumns, tile_row);
    }
    if constexpr (kOverlappingLastBox<kOut, kBlockN>) {  // the last box, a box's width before the row's end
      tma_store_2d(map_d, first_box + kTmaStoreBoxes<kOut, kBlockN> * box_stride, tile_col + kBlockN - kBoxColumns,
                   tile_row);
    }
    tma_store_commit_group();
    if constexpr (kWaitForRead) tma_store_wait_read();  // the block must not exit while the TMA still reads
  }
}

/// Stores the warpgroup's 64 x kBlockN part of D where the TMA cannot write
/// it (D's rows not on 16-byte boundaries: an odd N, ldd or pointer), through
/// the boxes of write_tile_to_boxes(). Each warp reads back the 16 rows it
/// wrote and stores them one row at a time, lane l taking columns l, l + 32,
/// ...: one store instruction writes 32 neighbouring elements (64 bytes of
/// BF16, in two or three 32-byte sectors), where store_tile_directly()'s
/// element stores write pieces of 8 rows (8 sectors, 8 bytes used in each).
/// Rows past M and columns past N are not written. Only the warp meets: it
/// reads only what it wrote, and has read it all before it returns (so the
/// next unit may write the boxes again).
template <OutputType kOut, int kBlockN>
__device__ __forceinline__ void store_tile_through_shared_rows(const float (&y)[kBlockN / 2], const GemmArgs& args,
                                                               uint32_t first_box, uint32_t box_stride, int tile_row,
                                                               int tile_col, float inverse_d_scale) {
  using T = OutputElement<kOut>;
  static_assert(sizeof(T) <= 2, "FP32 has no boxes of its own here: it is stored from the registers");
  write_tile_to_boxes<kOut, kBlockN>(y, first_box, box_stride, inverse_d_scale);
  __syncwarp();  // the warp's shared stores, visible to its own lanes
  const int lane = threadIdx.x % kWarpSize;
  const int warp_row = (threadIdx.x % kWarpgroupThreads) / kWarpSize * 16;  // the warp's 16 rows of the 64
  const int64_t rows_left = args.m - (tile_row + warp_row);
  const int64_t cols_left = args.n - tile_col;
  // Eight rows at a time: every load first (the boxes hold all 64 rows, past
  // M too), then the stores. (ptxas, which knows a shared load cannot alias a
  // global store, schedules them row by row anyway: each row's four loads,
  // its 64-bit address, its four stores. Issue 12 run 56 counts the loop at
  // 8 % of the samples at 4096 x 4097 x 4096; step 12's chapter, "Rows
  // anywhere".)
  constexpr int kRowsAtOnce = 8, kPerRow = kBlockN / kWarpSize;
#pragma unroll 1
  for (int first = 0; first < 16 && first < rows_left; first += kRowsAtOnce) {
    uint16_t codes[kRowsAtOnce][kPerRow];  // PTX has no 8-bit register: FP8 codes zero-extended
#pragma unroll
    for (int r = 0; r < kRowsAtOnce; ++r) {
#pragma unroll
      for (int i = 0; i < kPerRow; ++i) {
        const int byte = (lane + kWarpSize * i) * static_cast<int>(sizeof(T));
        const uint32_t address =
            swizzled_128b_address(first_box + byte / 128 * box_stride, warp_row + first + r, byte % 128);
        if constexpr (sizeof(T) == 2) {
          asm volatile("ld.shared.u16 %0, [%1];" : "=h"(codes[r][i]) : "r"(address) : "memory");
        } else {
          asm volatile("ld.shared.u8 %0, [%1];" : "=h"(codes[r][i]) : "r"(address) : "memory");
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kRowsAtOnce; ++r) {
      if (first + r >= rows_left) break;
      T* const d_row = static_cast<T*>(args.d) + (tile_row + warp_row + first + r) * args.ldd + tile_col;
#pragma unroll
      for (int i = 0; i < kPerRow; ++i) {
        if (lane + kWarpSize * i < cols_left) d_row[lane + kWarpSize * i] = static_cast<T>(codes[r][i]);
      }
    }
  }
  __syncwarp();  // every lane's loads done before any lane writes the boxes again
}

/// The warpgroup's part of D, through the TMA where the launcher allows it
/// (see store_tile_through_tma() for the boxes and kWaitForRead), else through
/// the same boxes a row at a time where the kernel asks for it
/// (`through_shared_rows`, step 12), else straight from the registers. A
/// tile whose rows do not fill whole 128-byte boxes (FP32, which the boxes
/// are not sized for; FP8 on a 64-column tile) always goes straight; BF16
/// rows that end in an overlapping box (kOverlappingLastBox) go through the
/// TMA or straight, never a row at a time.
template <OutputType kOut, int kBlockN, bool kWaitForRead = true>
__device__ __forceinline__ void store_tile(const float (&y)[kBlockN / 2], const GemmArgs& args, bool store_through_tma,
                                           const CUtensorMap* map_d, uint32_t first_box, uint32_t box_stride,
                                           int barrier, int tile_row, int tile_col, int row0, int col0,
                                           float inverse_d_scale, bool pairs_aligned = true,
                                           bool through_shared_rows = false) {
  constexpr bool kWholeBoxes =
      kTmaStoreBoxes<kOut, kBlockN> * 128 == kBlockN * static_cast<int>(sizeof(OutputElement<kOut>));
  if constexpr (kWholeBoxes || kOverlappingLastBox<kOut, kBlockN>) {
    if (store_through_tma) {
      store_tile_through_tma<kOut, kBlockN, kWaitForRead>(y, args, map_d, first_box, box_stride, barrier, tile_row,
                                                          tile_col, inverse_d_scale);
      return;
    }
  }
  if constexpr (kWholeBoxes) {
    if constexpr (kOut != OutputType::kFP32) {
      if (through_shared_rows) {
        store_tile_through_shared_rows<kOut, kBlockN>(y, args, first_box, box_stride, tile_row, tile_col,
                                                      inverse_d_scale);
        return;
      }
    }
  }
  store_tile_directly<kOut, kBlockN>(y, args, row0, col0, inverse_d_scale, pairs_aligned);
}

}  // namespace sm90
}  // namespace fp8gemm
#endif  // FP8GEMM_SM90A_PARSE
