// The persistent kernels' tile order (common/device/tile_scheduler.h): every
// tile is visited exactly once, in the documented grouped order, and the
// blocks of a persistent grid share the tiles between them without a gap or
// an overlap.
#include "common/device/tile_scheduler.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace fp8gemm {
namespace {

// The numbering drawn in the header's comment.
TEST(GroupedTile, NumbersTheDocumentedExample) {
  const int64_t expected[6][4] = {{0, 2, 4, 6},    {1, 3, 5, 7},     {8, 10, 12, 14},
                                  {9, 11, 13, 15}, {16, 18, 20, 22}, {17, 19, 21, 23}};
  for (int64_t m = 0; m < 6; ++m) {
    for (int64_t n = 0; n < 4; ++n) {
      const TileCoord t = grouped_tile(expected[m][n], 6, 4, 2);
      EXPECT_EQ(t.m_block, m) << "tile number " << expected[m][n];
      EXPECT_EQ(t.n_block, n) << "tile number " << expected[m][n];
    }
  }
}

// Every tile once, for grids and group heights of every kind: a last group
// shorter than the others, one row or one column of tiles, groups taller
// than the grid.
TEST(GroupedTile, VisitsEveryTileExactlyOnce) {
  for (int64_t m_tiles : {1, 2, 5, 8, 17, 32}) {
    for (int64_t n_tiles : {1, 3, 16, 57}) {
      for (int64_t group_rows : {1, 2, 3, 8, 16, 64}) {
        std::vector<int> seen(static_cast<size_t>(m_tiles * n_tiles), 0);
        for (int64_t number = 0; number < m_tiles * n_tiles; ++number) {
          const TileCoord t = grouped_tile(number, m_tiles, n_tiles, group_rows);
          ASSERT_GE(t.m_block, 0);
          ASSERT_LT(t.m_block, m_tiles) << m_tiles << " x " << n_tiles << ", group " << group_rows;
          ASSERT_GE(t.n_block, 0);
          ASSERT_LT(t.n_block, n_tiles) << m_tiles << " x " << n_tiles << ", group " << group_rows;
          ++seen[static_cast<size_t>(t.m_block * n_tiles + t.n_block)];
        }
        for (int count : seen) EXPECT_EQ(count, 1) << m_tiles << " x " << n_tiles << ", group " << group_rows;
      }
    }
  }
}

// The two ends: one row per group walks row after row; a group as tall as
// the grid walks column after column.
TEST(GroupedTile, EndsAreRowAndColumnOrder) {
  for (int64_t number = 0; number < 5 * 7; ++number) {
    const TileCoord rows = grouped_tile(number, 5, 7, 1);
    EXPECT_EQ(rows.m_block, number / 7);
    EXPECT_EQ(rows.n_block, number % 7);
    const TileCoord columns = grouped_tile(number, 5, 7, 5);
    EXPECT_EQ(columns.m_block, number % 5);
    EXPECT_EQ(columns.n_block, number / 5);
  }
}

// Block b of a persistent grid takes b, b + blocks, ...: together the blocks
// take every tile once, and their counts differ by at most one.
TEST(PersistentTiles, BlocksShareTheTilesWithoutGapOrOverlap) {
  for (int64_t tiles : {0, 1, 17, 132, 133, 1024, 1792}) {
    for (int64_t blocks : {1, 66, 132}) {
      std::vector<int> taken(static_cast<size_t>(tiles), 0);
      int64_t fewest = tiles, most = 0;
      for (int64_t block = 0; block < blocks; ++block) {
        const int64_t count = persistent_tile_count(tiles, blocks, block);
        fewest = count < fewest ? count : fewest;
        most = count > most ? count : most;
        for (int64_t i = 0; i < count; ++i) {
          const int64_t number = persistent_tile_number(blocks, block, i);
          ASSERT_LT(number, tiles);
          ++taken[static_cast<size_t>(number)];
        }
      }
      for (int count : taken) EXPECT_EQ(count, 1) << tiles << " tiles, " << blocks << " blocks";
      EXPECT_LE(most - fewest, 1) << tiles << " tiles, " << blocks << " blocks";
    }
  }
}

// The 32-bit arithmetic a kernel may ask for (step 10) gives the same tiles
// and the same shares as the 64-bit default, wherever the numbers fit.
TEST(GroupedTile, IntArithmeticMatchesTheDefault) {
  for (int m_tiles : {1, 5, 32, 257}) {
    for (int n_tiles : {1, 3, 57, 256}) {
      for (int group_rows : {1, 8, 300}) {
        for (int number = 0; number < m_tiles * n_tiles; number += 7) {
          const TileCoord narrow = grouped_tile<int>(number, m_tiles, n_tiles, group_rows);
          const TileCoord wide = grouped_tile(number, m_tiles, n_tiles, group_rows);
          ASSERT_EQ(narrow.m_block, wide.m_block) << number;
          ASSERT_EQ(narrow.n_block, wide.n_block) << number;
        }
      }
    }
  }
  for (int tiles : {0, 1, 133, 65536}) {
    for (int blocks : {1, 132}) {
      for (int block = 0; block < blocks; ++block) {
        const int count = persistent_tile_count<int>(tiles, blocks, block);
        ASSERT_EQ(count, persistent_tile_count(tiles, blocks, block));
        if (count > 0) {  // (braces: ASSERT_EQ is an if-else inside)
          ASSERT_EQ(persistent_tile_number<int>(blocks, block, count - 1),
                    persistent_tile_number(blocks, block, count - 1));
        }
      }
    }
  }
}

}  // namespace
}  // namespace fp8gemm
