"""Draws the operand layout every step uses (docs/layout.png).

A is M x K and B is N x K, both K-major (K contiguous); D is M x N row-major.
Run: python3 docs/figures/layout.py  (needs matplotlib)
"""
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle

OUT = pathlib.Path(__file__).resolve().parent.parent / "layout.png"


def matrix(ax, x, y, w, h, name, rows, cols, color):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor="black"))
    ax.text(x + w / 2, y + h / 2, name, ha="center", va="center", fontsize=20, weight="bold")
    ax.text(x - 0.15, y + h / 2, rows, ha="right", va="center", fontsize=12)
    ax.text(x + w / 2, y + h + 0.15, cols, ha="center", va="bottom", fontsize=12)
    # Memory order: one arrow along each of the first rows = contiguous bytes.
    for i in range(3):
        yy = y + h - 0.3 - i * 0.35
        ax.add_patch(FancyArrowPatch((x + 0.15, yy), (x + w - 0.15, yy), arrowstyle="->", mutation_scale=12))


fig, ax = plt.subplots(figsize=(11, 4))
matrix(ax, 0.6, 0.5, 2.4, 2.0, "A", "M", "K (contiguous)", "#cfe2f3")
matrix(ax, 4.0, 0.5, 2.4, 2.0, "B", "N", "K (contiguous)", "#f9cb9c")
matrix(ax, 7.6, 0.5, 2.4, 2.0, "D", "M", "N (contiguous)", "#d9ead3")
ax.text(3.5, 1.5, "·", fontsize=30, ha="center", va="center")
ax.text(7.0, 1.5, "→", fontsize=24, ha="center", va="center")
ax.text(
    5.3, -0.2,
    "D[m,n] = a_scale · b_scale · Σ_k A[m,k] · B[n,k]     A[m,k] = a[m·lda + k]   B[n,k] = b[n·ldb + k]   D[m,n] = d[m·ldd + n]",
    ha="center", fontsize=10)
ax.text(5.3, -0.6, "cuBLASLt (column-major) calls this \"TN\"; DeepGEMM calls it \"NT\". Same bytes.",
        ha="center", fontsize=10, style="italic")
ax.set_xlim(0, 10.4)
ax.set_ylim(-0.9, 3.0)
ax.axis("off")
fig.tight_layout()
fig.savefig(OUT, dpi=110)
print(f"wrote {OUT}")
