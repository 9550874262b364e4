#!/usr/bin/env python3
"""Plots results of fp8gemm_bench or fp8gemm.

Usage: python3 bench/plot.py RESULTS.json [MORE.json ...] --out-dir DIR

Writes DIR/ladder.png (TFLOP/s of every step at 4096^3 as bars, cuBLASLt as lines) and,
when the files hold more than one shape, DIR/shapes.png (TFLOP/s against shape; a step's
`_fast` mode dotted, in the step's colour) and DIR/roofline.png (every case at its arithmetic
intensity, 2MNK over the bytes of A, B and D, beneath the roofs of the datasheet's peak and of
the copy bandwidth the program measured, `hbm_copy_gbps` in the file's context). Each case's number is its median aggregate (or,
in files written before the programs ran repetitions, its only row): benchmark_json.py.
"""
import argparse
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

import benchmark_json  # noqa: E402
from benchmark_json import CUBLASLT, CUBLASLT_FAST, LADDER_SHAPE  # noqa: E402

BASELINE_STYLE = {CUBLASLT: ("black", "--"), CUBLASLT_FAST: ("dimgray", ":")}


def plot_ladder(results, context, path):
    """Bars for the steps at 4096^3, horizontal lines for cuBLASLt. False if nothing to plot."""
    steps = [c for c in benchmark_json.steps(results) if (c, LADDER_SHAPE) in results]
    baselines = [c for c in BASELINE_STYLE if (c, LADDER_SHAPE) in results]
    if not steps and not baselines:
        return False
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(steps) + 2.5), 4.8))
    values = [results[(step, LADDER_SHAPE)] for step in steps]
    bars = ax.bar(steps, values, color="tab:blue")
    ax.bar_label(bars, labels=[f"{v:.0f}" if v >= 100 else f"{v:.3g}" for v in values], padding=2)
    for name in baselines:
        color, style = BASELINE_STYLE[name]
        value = results[(name, LADDER_SHAPE)]
        ax.axhline(value, color=color, linestyle=style, label=f"{name}: {value:.0f} TFLOP/s")
    ax.set_yscale("log")
    ax.set_ylabel("TFLOP/s (log scale)")
    ax.set_title(f"FP8 GEMM {LADDER_SHAPE}, e4m3, BF16 out\n{benchmark_json.describe_context(context)}")
    ax.tick_params(axis="x", labelrotation=20)
    if baselines:
        ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return True


def plot_shapes(results, context, path):
    """One line per step and cuBLASLt mode across the shapes. False if fewer than two shapes."""
    shapes = benchmark_json.shapes(results)
    if len(shapes) < 2:
        return False
    fig, ax = plt.subplots(figsize=(max(8.0, 0.5 * len(shapes) + 3.0), 5.5))
    x = range(len(shapes))
    names = {contender for contender, _ in results}
    step_colors = {}  # a step's `_fast` mode is drawn in the step's colour
    for index, step in enumerate(benchmark_json.steps(results)):
        step_colors[step] = plt.get_cmap("tab10")(index % 10)
    for contender in benchmark_json.contenders(results):
        y = [results.get((contender, shape), math.nan) for shape in shapes]  # nan: a gap
        if contender in BASELINE_STYLE:
            color, style = BASELINE_STYLE[contender]
        elif benchmark_json.is_fast_variant(contender, names):
            color, style = step_colors[contender[: -len(benchmark_json.FAST_SUFFIX)]], ":"
        else:
            color, style = step_colors.get(contender), "-"
        ax.plot(x, y, marker="o", markersize=4, color=color, linestyle=style, label=contender)
    ax.set_xticks(list(x))
    ax.set_xticklabels(shapes, rotation=60, ha="right", fontsize=8)
    ax.set_xlabel("M x N x K")
    ax.set_yscale("log")
    ax.set_ylabel("TFLOP/s (log scale)")
    ax.set_title(f"FP8 GEMM by shape, e4m3, BF16 out — {benchmark_json.describe_context(context)}")
    ax.grid(True, which="major", axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return True


def arithmetic_intensity(shape):
    """FLOP per byte of a plain case '<M>x<N>x<K>' with e4m3 A and B and BF16 D (the roofline's x)."""
    m, n, k = (int(v) for v in shape.split("/")[0].split("x"))
    return 2.0 * m * n * k / (m * k + n * k + 2.0 * m * n)


def leading_number(text):
    """1979 from '1979 (dense FP8 ...)'; None when the text does not start with a number."""
    try:
        return float(str(text).split()[0])
    except (ValueError, IndexError):
        return None


def plot_roofline(results, context, path):
    """Every plain case beneath the compute and memory roofs. False without the measured
    copy bandwidth (older files) or without a plain case."""
    bandwidth = leading_number(context.get("hbm_copy_gbps", ""))
    peak = leading_number(context.get("peak_tflops", ""))
    cases = [(c, s) for (c, s) in results if "/" not in s]
    if not bandwidth or not peak or not cases:
        return False
    fig, ax = plt.subplots(figsize=(10.5, 5.5))
    intensities = [arithmetic_intensity(s) for _, s in cases]
    x = [min(intensities) / 2, max(intensities) * 2]
    ridge = peak * 1e3 / bandwidth  # FLOP per byte where the roofs meet
    roof_x = [x[0], ridge, x[1]] if x[0] < ridge < x[1] else x
    ax.plot(roof_x, [min(peak, v * bandwidth * 1e-3) for v in roof_x], color="black",
            label=f"roof: {peak:.0f} TFLOP/s, {bandwidth:.0f} GB/s (measured copy)")
    names = {contender for contender, _ in results}
    # One colour per plotted contender (the `_fast` modes are left out), the
    # baselines in their own; markers cycle too, so that no two steps look alike.
    shown = [c for c in benchmark_json.contenders(results) if not benchmark_json.is_fast_variant(c, names)]
    markers = "osD^vP*X"
    steps_shown = [c for c in shown if c not in BASELINE_STYLE]
    for contender in shown:
        points = [(arithmetic_intensity(s), results[(contender, s)]) for (c, s) in cases if c == contender]
        if not points:
            continue
        if contender in BASELINE_STYLE:
            color, marker = BASELINE_STYLE[contender][0], "_"
        else:
            index = steps_shown.index(contender)
            color, marker = plt.get_cmap("tab10")(index % 10), markers[index % len(markers)]
        ax.scatter([p[0] for p in points], [p[1] for p in points], color=color, marker=marker, label=contender,
                   s=36 if marker != "_" else 120, zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity: FLOP per byte of A, B and D")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"Roofline, e4m3, BF16 out — {benchmark_json.describe_context(context)}")
    ax.grid(True, which="both", alpha=0.2)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the points, never on them
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", help="JSON files written by fp8gemm_bench or fp8gemm")
    parser.add_argument("--out-dir", required=True, help="folder for the PNG files")
    args = parser.parse_args()

    results, context = benchmark_json.load(args.results)
    if not results:
        sys.exit("plot.py: no measured cases in " + ", ".join(args.results))
    os.makedirs(args.out_dir, exist_ok=True)
    why_not = {"ladder.png": f"the files hold no {LADDER_SHAPE} case",
               "shapes.png": "the files hold a single shape",
               "roofline.png": "the files record no hbm_copy_gbps (written before it was measured)"}
    for name, plot in (("ladder.png", plot_ladder), ("shapes.png", plot_shapes), ("roofline.png", plot_roofline)):
        path = os.path.join(args.out_dir, name)
        if plot(results, context, path):
            print(f"wrote {path}")
        else:
            print(f"no {name}: {why_not[name]}")


if __name__ == "__main__":
    main()
