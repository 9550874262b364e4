// The grouped GEMM's scheduler (common/device/grouped_scheduler.h): in the
// masked layout every tile of every expert is visited exactly once, experts
// with no rows get no tiles, and numbers past the last tile are not valid; in
// the contiguous layout a block's expert is its first row's, and a layout a
// kernel cannot take is found.
#include "common/device/grouped_scheduler.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace fp8gemm {
namespace {

constexpr int64_t kBlockM = 128;

// Ragged expert sizes: empty, one row, one short of a tile, a tile, one
// past, many tiles; and a single huge expert among empty ones.
TEST(MaskedTile, VisitsEveryTileOfEveryExpertOnce) {
  const std::vector<std::vector<int>> layouts = {
      {0, 1, 127, 128, 129, 4096}, {0, 0, 8192, 0}, {0, 0, 0}, {1}, {300, 0, 5, 0, 1000}};
  for (const std::vector<int>& counts : layouts) {
    for (int64_t n_tiles : {1, 16, 33}) {
      for (int64_t group_rows : {1, 8}) {
        const int experts = static_cast<int>(counts.size());
        const int64_t total = masked_tile_count(counts.data(), experts, kBlockM, n_tiles);
        std::map<std::tuple<int, int64_t, int64_t>, int> seen;
        for (int64_t number = 0; number < total; ++number) {
          const GroupedTile t = masked_tile(number, counts.data(), experts, kBlockM, n_tiles, group_rows);
          ASSERT_TRUE(t.valid) << "tile " << number << " of " << total;
          ASSERT_GE(t.expert, 0);
          ASSERT_LT(t.expert, experts);
          ASSERT_LT(t.m_block * kBlockM, counts[static_cast<size_t>(t.expert)]) << "a row tile past the expert's rows";
          ASSERT_LT(t.n_block, n_tiles);
          ++seen[{t.expert, t.m_block, t.n_block}];
        }
        int64_t expected = 0;
        for (int g = 0; g < experts; ++g) {
          const int64_t row_tiles = (counts[static_cast<size_t>(g)] + kBlockM - 1) / kBlockM;
          expected += row_tiles * n_tiles;
          for (int64_t m = 0; m < row_tiles; ++m) {
            for (int64_t n = 0; n < n_tiles; ++n) EXPECT_EQ((seen[{g, m, n}]), 1) << "expert " << g;
          }
        }
        EXPECT_EQ(total, expected);
        EXPECT_FALSE(masked_tile(total, counts.data(), experts, kBlockM, n_tiles, group_rows).valid);
      }
    }
  }
}

// The experts' tiles come one expert after another, in expert order.
TEST(MaskedTile, ExpertsInOrder) {
  const std::vector<int> counts = {129, 0, 1, 256};
  int last_expert = -1;
  const int64_t total = masked_tile_count(counts.data(), 4, kBlockM, 4);
  for (int64_t number = 0; number < total; ++number) {
    const GroupedTile t = masked_tile(number, counts.data(), 4, kBlockM, 4, 8);
    EXPECT_GE(t.expert, last_expert);
    last_expert = t.expert;
  }
  EXPECT_EQ(total, (2 + 0 + 1 + 2) * 4);
}

// The contiguous layout's group height: the experts' mean rows of tiles,
// between 1 and the plain GEMM's height.
TEST(ContiguousLayout, GroupRowsAreAnExpertsMeanRowsOfTiles) {
  EXPECT_EQ(contiguous_group_rows(32, 32, 16), 1);   // 32 experts x 128 rows: row after row
  EXPECT_EQ(contiguous_group_rows(32, 8, 16), 4);    // 8 experts x 512 rows
  EXPECT_EQ(contiguous_group_rows(256, 4, 16), 16);  // 4 x 8192: the plain GEMM's height
  EXPECT_EQ(contiguous_group_rows(128, 8, 16), 16);  // 8 x 4096
  EXPECT_EQ(contiguous_group_rows(33, 8, 16), 4);    // rounded down
  EXPECT_EQ(contiguous_group_rows(3, 256, 16), 1);   // more experts than rows of tiles: at least 1
  EXPECT_EQ(contiguous_group_rows(1, 1, 16), 1);     // one expert, one row of tiles
  EXPECT_EQ(contiguous_group_rows(40, 1, 16), 16);   // one expert: a plain GEMM
  EXPECT_EQ(contiguous_group_rows<int>(20, 2, 8), 8);
}

// A block's expert is its first row's; padding blocks are -1.
TEST(ContiguousLayout, ABlocksExpertIsItsFirstRows) {
  std::vector<int> m_indices;
  for (int expert : {0, 2, -1, 1}) m_indices.insert(m_indices.end(), kBlockM, expert);
  for (int64_t block = 0; block < 4; ++block) {
    EXPECT_EQ(contiguous_expert(m_indices.data(), block, kBlockM), m_indices[static_cast<size_t>(block * kBlockM)]);
  }
  EXPECT_EQ(first_bad_contiguous_row(m_indices.data(), 4 * kBlockM, kBlockM, 3), -1);
}

// What a kernel cannot take is found, at its first row: two experts in one
// block, an expert after padding, an expert out of range, rows that are not
// whole blocks.
TEST(ContiguousLayout, FindsTheFirstRowThatBreaksTheLayout) {
  std::vector<int> two_experts(2 * kBlockM, 0);
  two_experts[kBlockM + 5] = 1;  // block 1 starts with expert 0, then expert 1
  EXPECT_EQ(first_bad_contiguous_row(two_experts.data(), 2 * kBlockM, kBlockM, 2), kBlockM + 5);
  std::vector<int> after_padding(kBlockM, 1);
  after_padding[100] = -1;  // padding at row 100, expert 1 again at 101
  EXPECT_EQ(first_bad_contiguous_row(after_padding.data(), kBlockM, kBlockM, 2), 101);
  std::vector<int> out_of_range(kBlockM, 7);
  EXPECT_EQ(first_bad_contiguous_row(out_of_range.data(), kBlockM, kBlockM, 4), 0);
  std::vector<int> padded_end(kBlockM, 3);
  for (int64_t r = 64; r < kBlockM; ++r) padded_end[static_cast<size_t>(r)] = -1;  // a segment's padded end
  EXPECT_EQ(first_bad_contiguous_row(padded_end.data(), kBlockM, kBlockM, 4), -1);
  EXPECT_EQ(first_bad_contiguous_row(padded_end.data(), kBlockM - 1, kBlockM, 4), 0);  // not whole blocks
}

}  // namespace
}  // namespace fp8gemm
