"""Draws the figures of steps 02-04 and prints the shared-memory bank model
that the chapters' predictions come from.

  python3 docs/figures/tiles.py           writes the three PNGs below (needs matplotlib)
  python3 docs/figures/tiles.py --model   prints wavefronts per load and the
                                          totals for 4096^3 and 64x2112x7168

  steps/02_lds_tiling/tiling.png           block tile, BK slices, one thread's 8x8 outputs
  steps/03_bank_conflicts/banks.png        which banks one warp's B load hits, before and after
  steps/04_double_buffering/pipeline.png   one stage computed while the next is filled

The constants mirror the kernel files (BM, BN, BK, TM, TN and the thread
layouts); change both together.
"""
import pathlib
import sys
from collections import defaultdict

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent

BM, BN, BK, TM, TN = 128, 128, 64, 8, 8  # steps 02 and 03
THREADS_M, THREADS_N = BM // TM, BN // TN  # 16 x 16 = 256 threads
BANKS, BANK_BYTES = 32, 4
LANES = 32  # an NVIDIA warp; half an AMD wavefront


# -----------------------------------------------------------------------------
# The kernels' layouts
# -----------------------------------------------------------------------------

def thread_02(tid):
    """(ty, tx) of a thread in step 02: 16 threads along N, row-major."""
    return tid // THREADS_N, tid % THREADS_N


def thread_03(tid):
    """(ty, tx) in step 03: the 32 lanes of a warp form a 4 x 8 patch."""
    group, lane = divmod(tid, LANES)
    groups_n = THREADS_N // 8
    return (group // groups_n) * 4 + lane // 8, (group % groups_n) * 8 + lane % 8


def column_02(row, col):
    return col


def column_03(row, col):
    """Step 03's swizzle: 16-byte vectors XOR the row's bank line (mod 4)."""
    rows_per_line = BANKS * BANK_BYTES // BK
    vector = (col // 16) ^ ((row // rows_per_line) % (BK // 16))
    return vector * 16 + col % 16


STEPS = {"02": (thread_02, column_02), "03": (thread_03, column_03)}


# -----------------------------------------------------------------------------
# Bank model: a warp-wide access is served in wavefronts; within one, each
# bank delivers one 4-byte word (any number of lanes may read that word).
# Accesses wider than 4 bytes are split into phases of 128 bytes' worth of
# lanes (8 lanes for 16-byte accesses).
# -----------------------------------------------------------------------------

def wavefronts(addresses, width):
    lanes_per_phase = LANES if width <= 4 else 128 // width
    total = 0
    for start in range(0, len(addresses), lanes_per_phase):
        words_in_bank = defaultdict(set)
        for address in addresses[start:start + lanes_per_phase]:
            for w in range(max(width // 4, 1)):
                word = address // 4 + w
                words_in_bank[word % BANKS].add(word)
        total += max(len(words) for words in words_in_bank.values())
    return total


def load_addresses(layout, warp, word, index, operand):
    """Byte addresses (in the tile) of load `index` of word `word` by one warp:
    operand "A" reads rows ty + 16 * index, "B" rows tx + 16 * index."""
    thread, stride, column = layout
    out = []
    for lane in range(LANES):
        ty, tx = thread(warp * LANES + lane)
        row = (ty if operand == "A" else tx) + index * (THREADS_M if operand == "A" else THREADS_N)
        out.append(row * stride + column(row, 4 * word))
    return out


def b_load_addresses(step, warp, word, j):
    thread, column = STEPS[step]
    return load_addresses((thread, BK, column), warp, word, j, "B")


def store_wavefronts(layout, warp, pass_, width):
    """Wavefronts to store one pass of 16-byte vectors (thread t: vector t of
    the pass), as one 16-byte store, or as 16 / width narrower ones when the
    padded rows are not 16-byte aligned."""
    _, stride, column = layout
    total = 0
    for part in range(16 // width):
        addresses = []
        for lane in range(LANES):
            v = pass_ * THREADS_M * THREADS_N + warp * LANES + lane
            row, vector = divmod(v, BK // 16)
            addresses.append(row * stride + column(row, vector * 16) + part * width)
        total += wavefronts(addresses, width)
    return total


# The layouts the chapter of step 03 compares: (name, thread layout, row
# stride in bytes, column function, store width in bytes).
LAYOUTS = [
    ("step 02: 2x16 lanes, 64-byte rows", thread_02, 64, column_02, 16),
    ("2x16 lanes, rows padded to 68 bytes", thread_02, 68, column_02, 4),
    ("2x16 lanes, rows padded to 80 bytes", thread_02, 80, column_02, 16),
    ("4x8 lanes, rows padded to 80 bytes", thread_03, 80, column_02, 16),
    ("2x16 lanes, swizzled vectors", thread_02, 64, column_03, 16),
    ("step 03: 4x8 lanes, swizzled vectors", thread_03, 64, column_03, 16),
]


def average_wavefronts(layout, width):
    warps = THREADS_M * THREADS_N // LANES
    a = [wavefronts(load_addresses(layout, w, word, i, "A"), 4)
         for w in range(warps) for word in range(BK // 4) for i in range(TM)]
    b = [wavefronts(load_addresses(layout, w, word, j, "B"), 4)
         for w in range(warps) for word in range(BK // 4) for j in range(TN)]
    st = [store_wavefronts(layout, w, p, width) for w in range(warps) for p in range(2)]
    return sum(a) / len(a), sum(b) / len(b), sum(st) / len(st)


def model():
    warps = THREADS_M * THREADS_N // LANES
    print("Wavefronts per warp instruction: 4-byte loads of A and of B (ideal 1), and per pass of")
    print("16-byte vector stores (ideal 4: 512 bytes)")
    for name, thread, stride, column, width in LAYOUTS:
        a, b, st = average_wavefronts((thread, stride, column), width)
        stores = "1 x 16-byte" if width == 16 else f"{16 // width} x {width}-byte"
        print(f"  {name:40s} A {a:.1f}  B {b:.1f}  store {st:.1f} ({stores} per vector)")
    print("\nTotals (one launch): shared load instructions, load wavefronts, conflicts = wavefronts - instructions")
    for m, n, k in ((4096, 4096, 4096), (64, 2112, 7168)):
        blocks = -(-m // BM) * -(-n // BN)
        slices = -(-k // BK)
        for step, layout in (("02", LAYOUTS[0]), ("03", LAYOUTS[-1])):
            a, b, st = average_wavefronts(layout[1:4], layout[4])
            instructions = blocks * slices * warps * (BK // 4) * (TM + TN)
            waves = blocks * slices * warps * (BK // 4) * (TM * a + TN * b)
            store_waves = blocks * slices * warps * 2 * 2 * st  # A and B, 2 passes each
            print(f"  {m}x{n}x{k} step {step}: {instructions:,} loads, {int(waves):,} load wavefronts, "
                  f"{int(waves - instructions):,} conflicts; {int(store_waves):,} store wavefronts")


# -----------------------------------------------------------------------------
# Figures
# -----------------------------------------------------------------------------

def figures():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Rectangle

    def box(ax, x, y, w, h, color, text="", edge="black", alpha=1.0, fontsize=11, lw=1.0):
        ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor=edge, alpha=alpha, lw=lw))
        if text:
            ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize)

    def arrow(ax, a, b, **kw):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="->", mutation_scale=14, **kw))

    # ---- step 02: tiling ------------------------------------------------------
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.6), gridspec_kw={"width_ratios": [1.35, 1.0, 1.0]})
    ax = axes[0]
    ax.set_title("global memory: one block, one slice", fontsize=12)
    box(ax, 0, 0, 4, 4, "#eef3fa")
    box(ax, 0, 2.2, 4, 0.8, "#cfe2f3")
    box(ax, 1.6, 2.2, 0.5, 0.8, "#3d85c6", "BK", fontsize=9)
    ax.text(2, -0.3, "A: M x K (K contiguous)", ha="center", fontsize=10)
    ax.text(-0.1, 2.6, "BM", ha="right", va="center", fontsize=10)
    box(ax, 4.6, 0, 4, 4, "#fdf0e6")
    box(ax, 4.6, 1.0, 4, 0.8, "#f9cb9c")
    box(ax, 6.2, 1.0, 0.5, 0.8, "#e69138", "BK", fontsize=9)
    ax.text(6.6, -0.3, "B: N x K (K contiguous)", ha="center", fontsize=10)
    ax.text(4.5, 1.4, "BN", ha="right", va="center", fontsize=10)
    arrow(ax, (2.3, 3.3), (3.8, 3.3), color="gray")
    ax.text(3.05, 3.45, "k0 += BK", ha="center", fontsize=9, color="gray")
    ax.text(4.3, 4.5, "D tile (BM x BN) = sum over slices of A slice · B slice^T", ha="center", fontsize=10)
    ax.set_xlim(-0.8, 9)
    ax.set_ylim(-0.8, 5)
    ax.axis("off")

    ax = axes[1]
    ax.set_title("shared memory: the slice, K-major FP8", fontsize=12)
    rows_shown = 40  # of 128
    for name, x0, color, dark in (("a_tile", 0, "#cfe2f3", "#3d85c6"), ("b_tile", 3.4, "#f9cb9c", "#e69138")):
        box(ax, x0, 0, 2.6, rows_shown * 0.1, color)
        ax.text(x0 + 1.3, rows_shown * 0.1 + 0.15, f"{name}[128][64] (first 40 rows)", ha="center", fontsize=9)
        for r in range(rows_shown):
            if r % THREADS_M == 1 if name == "a_tile" else r % THREADS_N == 2:
                box(ax, x0, (rows_shown - 1 - r) * 0.1, 2.6, 0.1, dark, edge=dark)
                box(ax, x0, (rows_shown - 1 - r) * 0.1, 2.6 / 16, 0.1, "black", edge="black")
    ax.text(1.3, -0.35, "thread (ty=1, tx=2) reads rows\nty + 16i of A and tx + 16j of B:\n"
            "one 4-byte word = 4 k values per row", ha="center", va="top", fontsize=9)
    ax.text(4.7, -0.35, "black: the word of this step;\ndecoded once (FP8 -> FP32),\nused 8 times",
            ha="center", va="top", fontsize=9)
    ax.set_xlim(-0.3, 6.3)
    ax.set_ylim(-1.6, 4.6)
    ax.axis("off")

    ax = axes[2]
    ax.set_title("the D tile: thread (1, 2) owns 8 x 8 outputs", fontsize=12)
    box(ax, 0, 0, 128, 128, "#f3f8f1")
    for i in range(TM):
        for j in range(TN):
            box(ax, 2 + 16 * j, 128 - 2 - 16 * i - 1, 1, 1, "#38761d", edge="#38761d")
    ax.text(64, -6, "rows ty + 16i, columns tx + 16j: neighbouring threads\n"
            "own neighbouring columns (contiguous stores of D)", ha="center", va="top", fontsize=9)
    ax.set_xlim(-4, 132)
    ax.set_ylim(-26, 132)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout()
    fig.savefig(ROOT / "steps/02_lds_tiling/tiling.png", dpi=110)
    plt.close(fig)

    # ---- step 03: banks ------------------------------------------------------
    fig, axes = plt.subplots(1, 2, figsize=(16, 6.2))
    vector_colors = ["#cfe2f3", "#f9cb9c", "#d9ead3", "#fff2cc"]
    for ax, step, title in ((axes[0], "02", "step 02: rows as in memory, 16 lanes on 16 rows"),
                            (axes[1], "03", "step 03: swizzled vectors, 8 lanes on 8 rows")):
        _, column = STEPS[step]
        lines = 8  # bank lines shown: rows 0..15
        rows_per_line = BANKS * BANK_BYTES // BK
        for r in range(lines * rows_per_line):
            line, half = divmod(r, rows_per_line)
            for v in range(BK // 16):
                physical = column(r, v * 16) // 16
                x = half * (BK // 4) + physical * 4
                box(ax, x, lines - 1 - line, 4, 1, vector_colors[v], edge="white")
                ax.text(x + 2, lines - 1 - line + 0.5, f"r{r} k{16 * v}-{16 * v + 15}", ha="center", va="center",
                        fontsize=6.5)
        # One B load (word 0 of load j = 0) by warp 0: which words each lane reads.
        hits = defaultdict(int)
        for lane_address in sorted(set(b_load_addresses(step, 0, 0, 0))):
            word = lane_address // 4
            bank, line = word % BANKS, word // BANKS
            hits[bank] += 1
            ax.plot(bank + 0.5, lines - 1 - line + 0.5, "o", color="#cc0000", ms=9, mfc="none", mew=2)
        for bank, count in hits.items():
            box(ax, bank, -1.6, 1, 0.12 * count, "#cc0000", edge="#cc0000")
            ax.text(bank + 0.5, -1.6 + 0.12 * count + 0.05, str(count), ha="center", va="bottom", fontsize=8)
        ax.text(16, -2.0, "distinct words per bank for this load  ->  wavefronts = max = "
                f"{wavefronts(b_load_addresses(step, 0, 0, 0), 4)}", ha="center", va="top", fontsize=10)
        for b in range(0, BANKS + 1, 4):
            ax.text(b, lines + 0.15, str(b), ha="center", fontsize=8)
        ax.text(16, lines + 0.6, "bank", ha="center", fontsize=9)
        ax.set_title(title, fontsize=12)
        ax.set_xlim(-0.5, 32.5)
        ax.set_ylim(-2.6, lines + 1.2)
        ax.axis("off")
    fig.suptitle("B tile, first 16 rows (2 rows of 64 bytes per 128-byte bank line); circles: the 4-byte words "
                 "one warp's load of k = 0..3 reads", fontsize=11)
    fig.tight_layout()
    fig.savefig(ROOT / "steps/03_bank_conflicts/banks.png", dpi=110)
    plt.close(fig)

    # ---- step 04: pipeline ----------------------------------------------------
    fig, axes = plt.subplots(2, 1, figsize=(15, 5.8), gridspec_kw={"height_ratios": [1, 1.5]})
    ax = axes[0]
    ax.set_title("steps 02 and 03: load, wait, compute, wait (one buffer)", fontsize=12)
    t = 0
    for s in range(4):
        box(ax, t, 0.5, 1.2, 0.8, "#f4cccc", f"load {s}", fontsize=9)
        t += 1.2
        ax.axvline(t, color="black", lw=1)
        box(ax, t, 0.5, 2.6, 0.8, "#d9ead3", f"decode + FFMA {s}", fontsize=9)
        t += 2.6
        ax.axvline(t, color="black", lw=1)
    ax.set_xlim(0, 16)
    ax.set_ylim(0, 1.8)
    ax.axis("off")

    ax = axes[1]
    ax.set_title("step 04: the copy of slice t+1 runs under the FFMAs of slice t; stages alternate; "
                 "one barrier (|) per slice", fontsize=12)
    stage_colors = ["#cfe2f3", "#fff2cc"]
    t = 0
    rows = {"copy (cp.async / loads)": 2.1, "decode + store to stage": 1.1, "FFMA from stage": 0.1}
    for name, y in rows.items():
        ax.text(-0.2, y + 0.4, name, ha="right", va="center", fontsize=9)
    box(ax, t, 2.1, 1.2, 0.8, "#f4cccc", "copy 0", fontsize=9)
    box(ax, t + 1.2, 1.1, 0.6, 0.8, stage_colors[0], "st 0", fontsize=8)
    t += 1.8
    ax.axvline(t, color="black", lw=1)
    for s in range(4):
        if s < 3:
            box(ax, t, 2.1, 1.2, 0.8, "#f4cccc", f"copy {s + 1}", fontsize=9)
        box(ax, t, 0.1, 2.6, 0.8, stage_colors[s % 2], f"FFMA {s} (stage {s % 2})", fontsize=9)
        t += 2.6
        if s < 3:
            box(ax, t, 1.1, 0.6, 0.8, stage_colors[(s + 1) % 2], f"st {s + 1}", fontsize=8)
            t += 0.6
        ax.axvline(t, color="black", lw=1)
    ax.set_xlim(-3.2, 16)
    ax.set_ylim(0, 3.2)
    ax.axis("off")
    fig.tight_layout()
    fig.savefig(ROOT / "steps/04_double_buffering/pipeline.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    if "--model" in sys.argv:
        model()
    else:
        figures()
        print("wrote steps/02_lds_tiling/tiling.png, steps/03_bank_conflicts/banks.png, "
              "steps/04_double_buffering/pipeline.png")
