// Split-K's plain functions (common/device/split_k.h): the partition of K
// among slices, the slice count, the order the partials are added in, and
// the rows each slice reduces. The split-K kernels call these, so a
// partition that dropped or repeated a K block would be wrong everywhere.
#include "common/device/split_k.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fp8gemm {
namespace {

// The 32-bit arithmetic a kernel may ask for (step 10) gives the same slices.
TEST(KSlice, IntArithmeticMatchesTheDefault) {
  for (int k_blocks : {1, 7, 56, 129, 100000}) {
    for (int slices : {1, 3, 8, 200}) {
      for (int s = 0; s < slices; ++s) {
        const KBlockRange narrow = k_slice<int>(k_blocks, slices, s);
        const KBlockRange wide = k_slice(k_blocks, slices, s);
        ASSERT_EQ(narrow.first, wide.first) << k_blocks << " blocks, slice " << s << " of " << slices;
        ASSERT_EQ(narrow.count, wide.count) << k_blocks << " blocks, slice " << s << " of " << slices;
      }
    }
  }
}

// Every K block belongs to exactly one slice, the slices are contiguous and
// in order, and their sizes differ by at most one.
TEST(KSlice, CoversEveryKBlockOnceInOrderWithSizesWithinOne) {
  for (int64_t k_blocks : {1, 2, 7, 56, 128, 129, 1000}) {
    for (int slices : {1, 2, 3, 7, 16, 64, 200}) {
      std::vector<int> owner(static_cast<size_t>(k_blocks), -1);
      int64_t next = 0, smallest = k_blocks, largest = 0;
      for (int s = 0; s < slices; ++s) {
        const KBlockRange r = k_slice(k_blocks, slices, s);
        ASSERT_GE(r.count, 0);
        EXPECT_EQ(r.first, next) << k_blocks << " blocks, " << slices << " slices, slice " << s;
        for (int64_t kb = r.first; kb < r.first + r.count; ++kb) {
          ASSERT_LT(kb, k_blocks);
          EXPECT_EQ(owner[static_cast<size_t>(kb)], -1) << "K block " << kb << " in two slices";
          owner[static_cast<size_t>(kb)] = s;
        }
        next = r.first + r.count;
        smallest = std::min(smallest, r.count);
        largest = std::max(largest, r.count);
      }
      EXPECT_EQ(next, k_blocks) << k_blocks << " blocks, " << slices << " slices";
      EXPECT_LE(largest - smallest, 1) << k_blocks << " blocks, " << slices << " slices";
      for (int o : owner) EXPECT_GE(o, 0);
    }
  }
}

TEST(KSlice, TheFirstSlicesTakeTheRemainder) {
  // 7 blocks in 3 slices: 3, 2, 2.
  EXPECT_EQ(k_slice(7, 3, 0).first, 0);
  EXPECT_EQ(k_slice(7, 3, 0).count, 3);
  EXPECT_EQ(k_slice(7, 3, 1).first, 3);
  EXPECT_EQ(k_slice(7, 3, 1).count, 2);
  EXPECT_EQ(k_slice(7, 3, 2).first, 5);
  EXPECT_EQ(k_slice(7, 3, 2).count, 2);
  // More slices than blocks: the last ones are empty.
  EXPECT_EQ(k_slice(2, 4, 3).count, 0);
}

constexpr int kH200Sms = 132;
constexpr int64_t kMinKBlocks = 4;
constexpr int kMaxSlices = 16;

int64_t tiles_of(int64_t m, int64_t n, int64_t tile_m, int64_t tile_n) {
  return ((m + tile_m - 1) / tile_m) * ((n + tile_n - 1) / tile_n);
}

TEST(SplitKSlices, TheIssuesShapesOn132Sms) {
  // 64 x 2112 x 7168: 17 tiles of 128 x 128, 56 K blocks -> 7 slices, 119 blocks.
  EXPECT_EQ(split_k_slices(tiles_of(64, 2112, 128, 128), 56, kH200Sms, kMinKBlocks, kMaxSlices), 7);
  // 1024 x 1024 x 16384: 64 tiles -> 2 slices, 128 blocks.
  EXPECT_EQ(split_k_slices(tiles_of(1024, 1024, 128, 128), 128, kH200Sms, kMinKBlocks, kMaxSlices), 2);
  // 128 x 7168 x 16384: 56 tiles -> 2.
  EXPECT_EQ(split_k_slices(tiles_of(128, 7168, 128, 128), 128, kH200Sms, kMinKBlocks, kMaxSlices), 2);
  // Tiles that fill the GPU are never split: 4096^3 has 1024.
  EXPECT_EQ(split_k_slices(tiles_of(4096, 4096, 128, 128), 32, kH200Sms, kMinKBlocks, kMaxSlices), 1);
  EXPECT_EQ(split_k_slices(132, 1000, kH200Sms, kMinKBlocks, kMaxSlices), 1);
}

TEST(SplitKSlices, KeepsTheMinimumKPerSliceAndTheCap) {
  // One tile, 8 K blocks: at most 8 / 4 = 2 slices, whatever the SMs.
  EXPECT_EQ(split_k_slices(1, 8, kH200Sms, kMinKBlocks, kMaxSlices), 2);
  // One tile, a long K: the cap.
  EXPECT_EQ(split_k_slices(1, 4096, kH200Sms, kMinKBlocks, kMaxSlices), kMaxSlices);
  // Too little K to split at all.
  EXPECT_EQ(split_k_slices(1, 3, kH200Sms, kMinKBlocks, kMaxSlices), 1);
  // Never below 1, whatever the arguments.
  EXPECT_EQ(split_k_slices(0, 10, kH200Sms, kMinKBlocks, kMaxSlices), 1);
  EXPECT_EQ(split_k_slices(5, 0, kH200Sms, kMinKBlocks, kMaxSlices), 1);
  EXPECT_EQ(split_k_slices(5, 10, 0, kMinKBlocks, kMaxSlices), 1);
  // Every slice count the rule returns keeps the blocks within one wave.
  for (int64_t tiles = 1; tiles < kH200Sms; ++tiles) {
    const int s = split_k_slices(tiles, 1024, kH200Sms, kMinKBlocks, kMaxSlices);
    EXPECT_LE(tiles * s, kH200Sms) << tiles << " tiles";
    EXPECT_GE(s, 1);
  }
}

// The partials are added in slice order, one FP32 addition at a time: with
// values where the order changes the rounding, the result is that of
// ((p0 + p1) + p2) + ..., and slices at or beyond `slices` are not read.
TEST(SumSlicesInOrder, AddsInSliceOrderInFp32) {
  const float parts[4] = {1e8f, 1.0f, -1e8f, 1.0f};
  std::vector<int> read;
  const float sum = sum_slices_in_order<8>(4, [&](int s) {
    read.push_back(s);
    return parts[s];
  });
  // (1e8 + 1) rounds to 1e8 in FP32; - 1e8 gives 0; + 1 gives 1. Any other
  // order of the same four values gives 2 or 0 instead.
  EXPECT_EQ(sum, 1.0f);
  EXPECT_EQ(read, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(sum_slices_in_order<8>(1, [&](int s) { return parts[s]; }), 1e8f);
}

// Every row of the tile is reduced by exactly one slice, in order.
TEST(SliceRows, EveryRowOnceInOrder) {
  for (int block_rows : {64, 128}) {
    for (int slices = 1; slices <= 16; ++slices) {
      int next = 0;
      for (int s = 0; s < slices; ++s) {
        const RowRange r = slice_rows(block_rows, slices, s);
        ASSERT_GE(r.count, 0);
        EXPECT_EQ(r.first, next) << block_rows << " rows, " << slices << " slices, slice " << s;
        next = r.first + r.count;
      }
      EXPECT_EQ(next, block_rows) << block_rows << " rows, " << slices << " slices";
    }
  }
  EXPECT_EQ(slice_rows(128, 7, 0).count, 19);  // ceil(128 / 7)
  EXPECT_EQ(slice_rows(128, 7, 6).count, 14);  // the rest
}

}  // namespace
}  // namespace fp8gemm
