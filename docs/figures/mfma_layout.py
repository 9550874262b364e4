"""Draws the lane layouts of the two FP8 MFMA instructions of step 05 (AMD).

Writes steps/05_matrix_cores/mfma_cdna3_16x16x32.png and
steps/05_matrix_cores/mfma_cdna4_16x16x128.png: which lane (and VGPR) holds
each element of A, of B (drawn as the GEMM stores it, N x K) and of D.

The formulas mirror common/cdna/mfma_layout.h (the C++ functions the kernel uses
and tests/test_mfma_layout.cpp checks); main() checks that these mirrors
cover every element exactly once before drawing.
Run: python3 docs/figures/mfma_layout.py  (needs matplotlib)
"""
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import Patch, Rectangle

OUT_DIR = pathlib.Path(__file__).resolve().parents[2] / "steps" / "05_matrix_cores"
GROUP_COLORS = ["#9fc5e8", "#f9cb9c", "#b6d7a8", "#d5a6bd"]  # lanes 0-15, 16-31, 32-47, 48-63


def lighter(hex_color, amount):
    rgb = [int(hex_color[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    return tuple(c + (1 - c) * amount for c in rgb)


# ---- mirrors of common/cdna/mfma_layout.h: (lane, byte) -> (row, k) of A ---------
def cdna3_a(lane, byte):  # v_mfma_f32_16x16x32_fp8_fp8: 8 bytes per lane, one run
    return lane % 16, 8 * (lane // 16) + byte


def cdna4_a(lane, byte):  # v_mfma_f32_16x16x128_f8f6f4: 32 bytes per lane, two runs of 16
    return lane % 16, 64 * (byte // 16) + 16 * (lane // 16) + byte % 16


def d_element(lane, reg):  # every 16x16 MFMA: D row 4 * (lane / 16) + reg, column lane % 16
    return 4 * (lane // 16) + reg, lane % 16


def owner_map(layout, k, operand_bytes):
    """{(row, k): (lane, byte)} for A; B stored N x K has the same map with j for i."""
    owners = {}
    for lane in range(64):
        for byte in range(operand_bytes):
            owners[layout(lane, byte)] = (lane, byte)
    assert len(owners) == 16 * k, "layout does not cover the tile exactly once"
    return owners


def draw_operand(ax, owners, k, run_bytes, title, row_name):
    """A 16 x k grid coloured by lane group, shaded by VGPR, one label per run."""
    for (row, col), (lane, byte) in owners.items():
        vgpr = byte // 4
        color = lighter(GROUP_COLORS[lane // 16], 0.45 if vgpr % 2 else 0.0)
        ax.add_patch(Rectangle((col, row), 1, 1, facecolor=color, edgecolor="white", linewidth=0.3))
    for (row, col), (lane, byte) in owners.items():
        if byte % run_bytes == 0:  # first byte of a run: outline the run, name its lane
            ax.add_patch(Rectangle((col, row), run_bytes, 1, fill=False, edgecolor="black", linewidth=0.6))
            ax.text(col + run_bytes / 2, row + 0.5, str(lane), ha="center", va="center", fontsize=6)
    ax.set_xlim(0, k)
    ax.set_ylim(16, 0)
    ax.set_xticks(range(0, k + 1, 8 if k <= 32 else 16))
    ax.set_yticks(range(0, 16, 2))
    ax.tick_params(labelsize=7)
    ax.set_xlabel("k (contiguous in memory)", fontsize=8)
    ax.set_ylabel(row_name, fontsize=8)
    ax.set_title(title, fontsize=9)


def draw_accumulator(ax):
    for lane in range(64):
        for reg in range(4):
            row, col = d_element(lane, reg)
            ax.add_patch(Rectangle((col, row), 1, 1, facecolor=lighter(GROUP_COLORS[lane // 16], 0.15 * reg),
                                   edgecolor="white", linewidth=0.5))
            ax.text(col + 0.5, row + 0.5, f"{lane}\nv{reg}", ha="center", va="center", fontsize=6)
    ax.set_xlim(0, 16)
    ax.set_ylim(16, 0)
    ax.set_xticks(range(0, 17, 4))
    ax.set_yticks(range(0, 16, 4))
    ax.tick_params(labelsize=7)
    ax.set_xlabel("column j", fontsize=8)
    ax.set_ylabel("row i", fontsize=8)
    ax.set_title("D (16 x 16, FP32): lane and accumulator VGPR\nof each element (the same for both instructions)",
                 fontsize=9)


def figure(path, name, layout, k, operand_bytes, run_bytes, note):
    owners = owner_map(layout, k, operand_bytes)
    operand_width = max(4.0, 0.1 * k)  # inches
    fig = plt.figure(figsize=(operand_width + 5.6, 7.2))
    grid = fig.add_gridspec(2, 2, width_ratios=[operand_width, 4.6])
    draw_operand(fig.add_subplot(grid[0, 0]), owners, k, run_bytes,
                 f"A (16 x {k}): the lane that holds\neach run of {run_bytes} consecutive k", "row i of A")
    draw_operand(fig.add_subplot(grid[1, 0]), owners, k, run_bytes,
                 "B as stored (N x K; row j = column j of the\ninstruction's B): the same lanes as A",
                 "row j of B")
    draw_accumulator(fig.add_subplot(grid[:, 1]))
    legend = [Patch(facecolor=GROUP_COLORS[g], label=f"lanes {16 * g}-{16 * g + 15}") for g in range(4)]
    legend.append(Patch(facecolor=lighter(GROUP_COLORS[0], 0.45), label="odd VGPR of the operand (lighter)"))
    fig.legend(handles=legend, loc="lower center", ncol=5, fontsize=8, frameon=False)
    fig.suptitle(f"{name}\n{note}", fontsize=11)
    fig.tight_layout(rect=(0, 0.04, 1, 0.94))
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")


def main():
    figure(OUT_DIR / "mfma_cdna3_16x16x32.png", "v_mfma_f32_16x16x32_fp8_fp8 (gfx942, CDNA3)", cdna3_a, 32, 8, 8,
           "each lane: 8 consecutive k of one row in 2 VGPRs (one 8-byte LDS read)")
    figure(OUT_DIR / "mfma_cdna4_16x16x128.png", "v_mfma_f32_16x16x128_f8f6f4, FP8 operands (gfx950, CDNA4)",
           cdna4_a, 128, 32, 16,
           "each lane: two runs of 16 consecutive k, 64 apart, in 8 VGPRs (VGPRs 0-3: k < 64, 4-7: k >= 64)")


if __name__ == "__main__":
    main()
