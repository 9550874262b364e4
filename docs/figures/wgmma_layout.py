"""Draws the figures of the Hopper wgmma steps (05 and 06).

Writes into steps/05_matrix_cores/ (step 05, wgmma itself):
  wgmma_accumulator_layout.png  which thread and register of the warpgroup hold
                                each element of the 64 x N FP32 accumulator of
                                wgmma.m64nNk32 (first 16 columns; the pattern
                                repeats every 8 columns)
  wgmma_sw128_layout.png        the 128-byte swizzle of a K-major FP8 tile in
                                shared memory (as step 05's cp.async copies and
                                step 06's TMA write it and wgmma reads it), with
                                the 32-byte K slices of the four k32 wgmmas
and into steps/06_tma_warp_specialization/ (step 06):
  wgmma_pipeline.png            the warp-specialized pipeline: the TMA thread
                                filling a ring of stages, two consumer
                                warpgroups multiplying and promoting

The fragment formula mirrors wgmma_m64n128k32 in common/sm90/wgmma.cuh; main()
checks that it covers the tile exactly once before drawing.
Run: python3 docs/figures/wgmma_layout.py  (needs matplotlib)
"""
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import Patch, Rectangle

OUT_DIR = pathlib.Path(__file__).resolve().parents[2] / "steps" / "05_matrix_cores"
PIPELINE_DIR = pathlib.Path(__file__).resolve().parents[2] / "steps" / "06_tma_warp_specialization"
WARP_COLORS = ["#9fc5e8", "#f9cb9c", "#b6d7a8", "#d5a6bd"]  # warps 0..3 of the warpgroup
SLICE_COLORS = ["#6fa8dc", "#f6b26b", "#93c47d", "#c27ba0"]  # k32 slices 0..3


# ---- mirror of common/sm90/wgmma.cuh: (warp, lane, register) -> (row, column) of D ----
def accumulator_element(warp, lane, reg):
    """d[4j + 2h + e] of lane l in warp w is D[16w + l/4 + 8h][8j + 2(l%4) + e]."""
    j, h, e = reg // 4, (reg // 2) % 2, reg % 2
    return 16 * warp + lane // 4 + 8 * h, 8 * j + 2 * (lane % 4) + e


def accumulator_owners(n):
    owners = {}
    for warp in range(4):
        for lane in range(32):
            for reg in range(n // 2):
                owners[accumulator_element(warp, lane, reg)] = (warp, lane, reg)
    assert len(owners) == 64 * n, "fragment layout does not cover the tile exactly once"
    assert all(0 <= r < 64 and 0 <= c < n for r, c in owners), "fragment layout leaves the tile"
    return owners


def draw_accumulator(path, n_overview=32, n_detail=16):
    """Left: the 64 x N tile by warp. Right: warp 0's 16 rows, thread and register of every element."""
    owners = accumulator_owners(128)
    fig, (overview, detail) = plt.subplots(1, 2, figsize=(14, 7.5), gridspec_kw={"width_ratios": [1, 1.9]})
    for (row, col), (warp, lane, reg) in owners.items():
        if col < n_overview:
            overview.add_patch(Rectangle((col, row), 1, 1, facecolor=WARP_COLORS[warp], edgecolor="white",
                                         linewidth=0.3))
        if warp == 0 and col < n_detail:
            shade = WARP_COLORS[0] if (reg // 2) % 2 == 0 else "#cfe2f3"
            detail.add_patch(Rectangle((col, row), 1, 1, facecolor=shade, edgecolor="white", linewidth=0.8))
            detail.text(col + 0.5, row + 0.5, f"T{lane}\nd{reg}", ha="center", va="center", fontsize=6)
    for r in range(0, 65, 16):
        overview.axhline(r, color="black", linewidth=0.8)
    for c in range(0, n_overview + 1, 8):
        overview.axvline(c, color="black", linewidth=0.5)
    overview.add_patch(Rectangle((0, 0), n_detail, 16, fill=False, edgecolor="red", linewidth=1.5))
    overview.set_xlim(0, n_overview)
    overview.set_ylim(64, 0)
    overview.set_aspect("equal")
    overview.set_xticks(range(0, n_overview + 1, 8))
    overview.set_yticks(range(0, 65, 16))
    overview.set_xlabel("column n of D (first 32 of N)")
    overview.set_ylabel("row m of D")
    overview.set_title("one warpgroup's 64 x N accumulator:\nwarp w owns rows 16w..16w+15")
    overview.legend(handles=[Patch(color=WARP_COLORS[w], label=f"warp {w}") for w in range(4)],
                    loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=4, fontsize=8)
    for c in range(0, n_detail + 1, 8):
        detail.axvline(c, color="black", linewidth=1.2)
    detail.axhline(8, color="black", linewidth=1.2)
    detail.set_xlim(0, n_detail)
    detail.set_ylim(16, 0)
    detail.set_aspect("equal")
    detail.set_xticks(range(0, n_detail, 2))
    detail.set_yticks(range(0, 16, 2))
    detail.set_xlabel("column n of D (the pattern repeats every 8 columns: d[4j..4j+3] for j = n / 8)")
    detail.set_ylabel("row m of D")
    detail.set_title("warp 0 (red box): lane T and register d[i] of each element\n"
                     "d[4j + 2h + e] = D[16w + lane/4 + 8h][8j + 2(lane%4) + e],  h, e in {0, 1}")
    fig.suptitle("wgmma.m64nNk32 with FP32 accumulators: N/2 registers per thread (64 for N = 128)")
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


def draw_swizzle(path):
    """8 rows x 8 chunks of 16 bytes: logical chunk c of row r sits at physical chunk c ^ r."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.6))
    for ax, physical in ((left, False), (right, True)):
        for row in range(8):
            for chunk in range(8):
                where = chunk ^ row if physical else chunk
                color = SLICE_COLORS[chunk // 2]
                ax.add_patch(Rectangle((where, row), 1, 1, facecolor=color, edgecolor="white", linewidth=1.0))
                ax.text(where + 0.5, row + 0.5, f"k {16 * chunk}-{16 * chunk + 15}", ha="center", va="center",
                        fontsize=6.5)
        ax.set_xlim(0, 8)
        ax.set_ylim(8, 0)
        ax.set_aspect("equal")
        ax.set_xticks([c + 0.5 for c in range(8)])
        ax.set_xticklabels([f"{16 * c}" for c in range(8)], fontsize=7)
        ax.set_yticks([r + 0.5 for r in range(8)])
        ax.set_yticklabels([f"{r}" for r in range(8)], fontsize=7)
        ax.set_xlabel("byte offset in the 128-byte row" if physical else "K (FP8 elements = bytes)")
        ax.set_ylabel("row (m of A, n of B), mod 8")
    left.set_title("global memory: one K block of 8 rows (K-major)")
    right.set_title("shared memory, 128-byte swizzle: chunk c of row r at c XOR (r mod 8)")
    fig.legend(handles=[Patch(color=SLICE_COLORS[s], label=f"K {32 * s}-{32 * s + 31}: wgmma {s}, descriptor + {2 * s}")
                        for s in range(4)], loc="lower center", ncol=4, fontsize=8)
    fig.suptitle("A 128 x 128 FP8 tile = 16 such 1024-byte atoms stacked (stride-dimension byte offset 1024)")
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    fig.savefig(path, dpi=150)
    plt.close(fig)


def pipeline_schedule(stages, k_blocks, load=1.6, issue=0.15, mma=1.0, promote=0.3):
    """A toy model of the timeline (not a measurement), K block by K block.

    The TMA thread issues the load of K block kb as soon as its stage was
    released (K block kb - stages done); the load lands `load` later. Each
    consumer warpgroup runs its 4 wgmmas (`mma`) once the stage is full and
    the tensor cores are free, then promotes (`promote`) while the other
    warpgroup uses the tensor cores.
    """
    loads, mmas, promotions, released = [], [], [], []
    issued = 0.0
    tensor_free, group_free = 0.0, [0.0, 0.0]
    for kb in range(k_blocks):
        start = issued if kb < stages else max(issued, released[kb - stages])
        loads.append((start, start + load, kb % stages))
        issued = start + issue
        ends = []
        for wg in (0, 1):
            begin = max(start + load, group_free[wg], tensor_free)
            tensor_free = begin + mma
            mmas.append((wg, begin, begin + mma, kb))
            promotions.append((wg, begin + mma, begin + mma + promote))
            group_free[wg] = begin + mma + promote
            ends.append(begin + mma)
        released.append(max(ends))
    return loads, mmas, promotions


def draw_pipeline(path, stages=6, k_blocks=12):
    loads, mmas, promotions = pipeline_schedule(stages, k_blocks)
    fig, ax = plt.subplots(figsize=(13, 4.4))
    rows = {"TMA thread": 2.0, "consumer warpgroup 0": 1.0, "consumer warpgroup 1": 0.0}
    stage_colors = ["#6fa8dc", "#f6b26b", "#93c47d", "#c27ba0", "#ffd966", "#76a5af"]
    # Loads in flight overlap: stack them in thin sub-rows of the TMA row.
    for i, (start, end, stage) in enumerate(loads):
        y = rows["TMA thread"] + 0.08 + 0.14 * (i % 6)
        ax.add_patch(Rectangle((start, y), end - start, 0.12, facecolor=stage_colors[stage], edgecolor="black",
                               linewidth=0.4))
        ax.text(end + 0.05, y + 0.06, f"kb {i} -> stage {stage}", va="center", fontsize=5)
    for wg, begin, end, kb in mmas:
        y = rows[f"consumer warpgroup {wg}"]
        ax.add_patch(Rectangle((begin, y + 0.15), end - begin, 0.7, facecolor="#cfe2f3", edgecolor="black",
                               linewidth=0.5))
        ax.text((begin + end) / 2, y + 0.5, f"kb {kb}\nstage {kb % stages}", ha="center", va="center", fontsize=6)
    for wg, begin, end in promotions:
        y = rows[f"consumer warpgroup {wg}"]
        ax.add_patch(Rectangle((begin, y + 0.15), end - begin, 0.7, facecolor="#ea9999", edgecolor="black",
                               linewidth=0.5))
    ax.set_xlim(-0.2, max(end for _, _, end in promotions) + 0.5)
    ax.set_ylim(-0.1, 3.05)
    ax.set_yticks([v + 0.5 for v in rows.values()])
    ax.set_yticklabels(list(rows.keys()), fontsize=8)
    ax.set_xlabel("time (schematic, not measured)")
    ax.set_title(f"Warp-specialized pipeline, {stages} stages: the TMA runs ahead while the stages are free; "
                 "the two warpgroups take turns on the tensor cores")
    ax.legend(handles=[Patch(color="#cfe2f3", label="4 x wgmma m64n128k32 = one K block of 128"),
                       Patch(color="#ea9999", label="wait, release the stage, promote: total += accum"),
                       Patch(color=stage_colors[0], label="TMA load of A and B tiles (colour = stage)")],
              loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


def main():
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    PIPELINE_DIR.mkdir(parents=True, exist_ok=True)
    draw_accumulator(OUT_DIR / "wgmma_accumulator_layout.png")
    draw_swizzle(OUT_DIR / "wgmma_sw128_layout.png")
    draw_pipeline(PIPELINE_DIR / "wgmma_pipeline.png")
    print(f"wrote {OUT_DIR}/wgmma_accumulator_layout.png, wgmma_sw128_layout.png "
          f"and {PIPELINE_DIR}/wgmma_pipeline.png")


if __name__ == "__main__":
    main()
