/// @file tile_scheduler.h
/// @brief The order in which a persistent kernel walks the output tiles of D,
///        as plain functions, the same on the host and on every GPU: the
///        persistent kernels (Hopper and CDNA) and their CPU tests share them.
///
/// A persistent kernel launches one block per SM and lets each block take
/// tile after tile: block b takes the tiles numbered b, b + blocks,
/// b + 2 blocks, ... (persistent_tile_count, persistent_tile_number). Which
/// tile of D a number stands for decides what the L2 cache holds: the blocks
/// that run at the same time work on neighbouring numbers, and they share
/// the operands' tiles only if neighbouring numbers share rows or columns of
/// tiles. grouped_tile orders the tiles in groups of `group_rows` rows of
/// tiles: inside a group the numbers go down a column of tiles, then to the
/// next column, so that the blocks of one wave share a few tiles of B and a
/// few tiles of A instead of streaming all of one operand.
///
///   numbering of a 6 x 4 grid of tiles with group_rows = 2:
///        n:  0   1   2   3
///     m 0:   0   2   4   6
///     m 1:   1   3   5   7
///     m 2:   8  10  12  14
///     m 3:   9  11  13  15
///     m 4:  16  18  20  22
///     m 5:  17  19  21  23
///
/// The last group may have fewer rows (M's tiles not a multiple of
/// group_rows); it is numbered the same way with its own height.
///
/// The arithmetic is done in `Int`, int64_t unless the caller names another
/// type (`grouped_tile<int>(...)`): a kernel whose launcher has checked that
/// every number fits in an int can ask for 32-bit arithmetic, because a 64-bit
/// division is a subroutine call in GPU code, and a call in a kernel that
/// moves registers between warpgroups (setmaxnreg, step 10) makes ptxas keep
/// the whole kernel within the launch's register budget.
#pragma once

#include <cstdint>

#include "common/portability.h"

namespace fp8gemm {

/// A parameter of type `typename Exactly<T>::type` is not deduced from the
/// argument: the template's default (or the type the caller names) applies,
/// and arguments of other integer types convert to it.
template <class T>
struct Exactly {
  using type = T;  ///< T itself
};

/// A tile of D: its row of tiles (rows m_block * tile rows ...) and column of tiles.
struct TileCoord {
  int64_t m_block = 0;  ///< Row of tiles.
  int64_t n_block = 0;  ///< Column of tiles.
};

/// The tile with number `number` (0 <= number < m_tiles * n_tiles) in the
/// grouped order above, group_rows >= 1. The two ends: group_rows = 1 walks
/// row after row of tiles (N fastest); group_rows >= m_tiles walks column
/// after column (M fastest), the order of steps 05 to 08's grids.
template <class Int = int64_t>
FP8GEMM_HOST_DEVICE inline TileCoord grouped_tile(typename Exactly<Int>::type number,
                                                  typename Exactly<Int>::type m_tiles,
                                                  typename Exactly<Int>::type n_tiles,
                                                  typename Exactly<Int>::type group_rows) {
  const Int tiles_per_group = group_rows * n_tiles;
  const Int group = number / tiles_per_group;
  const Int first_row = group * group_rows;
  const Int rows = m_tiles - first_row < group_rows ? m_tiles - first_row : group_rows;  // the last group
  const Int in_group = number - group * tiles_per_group;
  TileCoord t;
  t.m_block = first_row + in_group % rows;
  t.n_block = in_group / rows;
  return t;
}

/// How many tiles block `block` of `blocks` takes when it takes every
/// blocks-th tile of `tiles`, starting with its own number: the first
/// tiles % blocks blocks take one more than the others.
template <class Int = int64_t>
FP8GEMM_HOST_DEVICE inline Int persistent_tile_count(typename Exactly<Int>::type tiles,
                                                     typename Exactly<Int>::type blocks,
                                                     typename Exactly<Int>::type block) {
  return block < tiles ? (tiles - block + blocks - 1) / blocks : 0;
}

/// The number of the i-th tile (0 <= i < persistent_tile_count) block `block` takes.
template <class Int = int64_t>
FP8GEMM_HOST_DEVICE inline Int persistent_tile_number(typename Exactly<Int>::type blocks,
                                                      typename Exactly<Int>::type block,
                                                      typename Exactly<Int>::type i) {
  return block + i * blocks;
}

}  // namespace fp8gemm
