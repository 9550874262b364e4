/// @file grouped_scheduler.h
/// @brief Which (expert, tile) a persistent block of a grouped GEMM — the
///        mixture-of-experts layer's many GEMMs that share N and K but not M
///        — computes next, as plain functions, the same on the host and on
///        every GPU, for the two layouts a grouped GEMM is given in. The
///        grouped kernels (Hopper and CDNA) and their CPU tests share them.
///
/// Masked layout (decode under CUDA graphs: the host cannot know the counts):
/// expert g owns rows [g * capacity, g * capacity + capacity) of A and D, of
/// which the first counts[g] are valid, counts in device memory. Its tiles
/// are ceil(counts[g] / block_m) rows of tiles by n_tiles columns; the
/// experts' tiles are numbered one expert after another (each in the grouped
/// order of tile_scheduler.h), so an expert with no rows has no tiles, and a
/// persistent block takes numbers block, block + blocks, ... until
/// masked_tile says there are no more.
///
/// Contiguous layout (training, prefill): the experts' rows are concatenated
/// along M, each expert's segment padded to a multiple of block_m, and
/// m_indices[row] names the expert of each row (-1 for a padding row). A
/// block of block_m rows then belongs to one expert (or is all padding):
/// contiguous_expert reads it from the block's first row.
#pragma once

#include <cstdint>

#include "common/device/tile_scheduler.h"
#include "common/portability.h"

namespace fp8gemm {

/// A tile of one expert's GEMM.
struct GroupedTile {
  bool valid = false;   ///< False past the last tile.
  int expert = -1;      ///< Which expert's GEMM.
  int64_t m_block = 0;  ///< Row of tiles within the expert's rows.
  int64_t n_block = 0;  ///< Column of tiles.
};

// Each function computes in Int (int64_t unless asked): a kernel that has
// checked that its numbers fit asks for int, as with tile_scheduler.h.

/// Rows of tiles of an expert with `rows` valid rows (masked layout).
template <class Int = int64_t>
FP8GEMM_HOST_DEVICE inline Int expert_row_tiles(typename Exactly<Int>::type rows, typename Exactly<Int>::type block_m) {
  return rows > 0 ? (rows + block_m - 1) / block_m : 0;
}

/// Every tile of the masked layout: the sum over the experts of their row
/// tiles times n_tiles.
template <class Int = int64_t>
FP8GEMM_HOST_DEVICE inline Int masked_tile_count(const int* counts, int experts, typename Exactly<Int>::type block_m,
                                                 typename Exactly<Int>::type n_tiles) {
  Int tiles = 0;
  for (int g = 0; g < experts; ++g) tiles += expert_row_tiles<Int>(counts[g], block_m) * n_tiles;
  return tiles;
}

/// The tile with number `number` of the masked layout (see above), each
/// expert's tiles in grouped_tile order with `group_rows`; not valid when
/// `number` is past the last tile.
template <class Int = int64_t>
FP8GEMM_HOST_DEVICE inline GroupedTile masked_tile(typename Exactly<Int>::type number, const int* counts, int experts,
                                                   typename Exactly<Int>::type block_m,
                                                   typename Exactly<Int>::type n_tiles,
                                                   typename Exactly<Int>::type group_rows) {
  GroupedTile tile;
  Int first = 0;  // the number of the expert's first tile
  for (int g = 0; g < experts; ++g) {
    const Int row_tiles = expert_row_tiles<Int>(counts[g], block_m);
    const Int tiles = row_tiles * n_tiles;
    if (number < first + tiles) {
      const TileCoord t = grouped_tile<Int>(number - first, row_tiles, n_tiles, group_rows);
      tile.valid = true;
      tile.expert = g;
      tile.m_block = t.m_block;
      tile.n_block = t.n_block;
      return tile;
    }
    first += tiles;
  }
  return tile;
}

/// The expert of row block `m_block` (rows m_block * block_m ...) of the
/// contiguous layout: the expert of its first row, -1 for a block of padding.
FP8GEMM_HOST_DEVICE inline int contiguous_expert(const int* m_indices, int64_t m_block, int64_t block_m) {
  return m_indices[m_block * block_m];
}

/// The height, in rows of tiles, of grouped_tile's groups for the contiguous
/// layout, whose tiles are numbered as one GEMM over all the rows: the
/// experts' mean rows of tiles (m_tiles / experts, at least 1), at most
/// `group_rows`, a plain GEMM's height. Tiles of different experts share no
/// tile of B, so a group taller than an expert adds rows of A to what the L2
/// must hold and shares nothing for it; 32 experts of 128 rows then walk row
/// after row (step 12's chapter measures it), 4 experts of 8192 rows keep the
/// plain GEMM's groups. (The masked layout numbers each expert's tiles on
/// their own, so its groups never cross experts: see masked_tile.)
template <class Int = int64_t>
FP8GEMM_HOST_DEVICE inline Int contiguous_group_rows(typename Exactly<Int>::type m_tiles, int experts,
                                                     typename Exactly<Int>::type group_rows) {
  const Int mean = experts > 0 ? m_tiles / experts : m_tiles;
  return mean < 1 ? Int{1} : mean < group_rows ? mean : group_rows;
}

/// Whether m_indices (`rows` rows, a multiple of block_m) is a contiguous
/// layout a grouped kernel can take: every block of block_m rows holds rows
/// of one expert in [0, experts) followed only by padding (-1), or padding
/// alone. Returns the first row that breaks it, or -1 when none does; the
/// host checks this before a launch (the layout is the host's to make).
inline int64_t first_bad_contiguous_row(const int* m_indices, int64_t rows, int64_t block_m, int experts) {
  if (block_m <= 0 || rows % block_m != 0) return 0;
  for (int64_t block = 0; block < rows / block_m; ++block) {
    const int expert = m_indices[block * block_m];
    if (expert < -1 || expert >= experts) return block * block_m;
    bool padding = expert == -1;
    for (int64_t r = block * block_m + 1; r < (block + 1) * block_m; ++r) {
      if (m_indices[r] == -1) {
        padding = true;
      } else if (padding || m_indices[r] != expert) {
        return r;  // another expert, or a row after padding
      }
    }
  }
  return -1;
}

}  // namespace fp8gemm
