#!/usr/bin/env python3
"""Markdown tables from committed results files, so that numbers in the READMEs are
regenerated, never typed.

Usage:
  python3 bench/make_table.py RESULTS.json [MORE.json ...]    print the ladder table
  python3 bench/make_table.py --update FILE.md [FILE.md ...]  regenerate the marked blocks
  python3 bench/make_table.py --check FILE.md [FILE.md ...]   exit 1 if a block is out of date

A block in a markdown file is the text between a line (at the start of the line, outside
fenced code)

  <!-- table: KIND key=value key=value ... -->

and the next line `<!-- end table -->`; --update rewrites it, --check compares it with what
--update would write and shows the difference. Paths are relative to the repository root;
a value with spaces is quoted ("..."). Kinds and their keys:

  ladder    json=FILE[,FILE]
            every step at 4096x4096x4096 in ladder order, then cuBLASLt: TFLOP/s, % of
            cuBLASLt, TFLOP/s at 8192x8192x8192 and at 64x2112x7168
  shapes    json=FILE[,FILE] steps=STEP,STEP|all [shapes=MxNxK,...] [geomean=yes]
            a row per shape: each step's TFLOP/s and % of cuBLASLt, then cuBLASLt and
            cuBLASLt fast TFLOP/s; geomean=yes adds a last row, the geometric mean of each
            column over the shapes (of the % column: the geometric mean of the ratios)
  fast      json=FILE[,FILE] steps=STEP,STEP [shapes=MxNxK,...]
            a row per shape: each step with promotion and as `<step>_fast` (TFLOP/s, gain),
            then cuBLASLt and cuBLASLt fast
  sweep     json=FILE [shapes=MxNxK,...]
            a tile sweep (steps/04_double_buffering/sweep.cu): a row per tile with its
            threads, registers and shared memory, and per shape its blocks and TFLOP/s
  counters  csv=FILE [metrics=A,B,...] [steps=NN,...] [shapes=MxNxK,...]
            Nsight Compute counters (steps/profile_counters.sh, step,m,n,k,metric,unit,value):
            a row per metric, a column per step and shape. columns= is another name for
            metrics=; a CSV without metric and value columns prints its columns= as they are
  constraints json=FILE
            what each registered step accepts, from the registry's JSON (`fp8gemm --list=json`,
            committed as docs/steps.json): a row per step with its M, N, K rules, row
            alignment, formats, outputs, GPU, accumulation and must-run cases

  epilogue  json=FILE step=STEP [shapes=MxNxK,...]
            the epilogue variants (fp8gemm_bench --epilogue_variants): a row per shape and
            variant with the step's TFLOP/s, cuBLASLt's with the same epilogue, their ratio,
            the unfused baseline's TFLOP/s and the fused-to-unfused ratio; a case cuBLASLt
            refused says so (its reasons are listed under the table)
  builds    json=FILE,FILE labels=A,B step=STEP [shapes=...]
            one step measured in two builds (e.g. with a tunable changed), each file with its
            own cuBLASLt: a row per shape (or variant) with, per build, the step's TFLOP/s and
            % of that file's cuBLASLt (a grouped shape: of its cuBLASLt loop, masked: of the
            loop's CUDA graph), then the first build's speed over the second's (the second's
            time over the first's)
  ratios    json=FILE step=STEP pairs="A~B;C~D;..." [bars=X,Y,...]
            speed ratios between cases of one file: a row per pair with both TFLOP/s and
            A's over B's; a case is [contender@]<shape>[/<scales>/<epilogue>/<out>], the
            contender defaulting to step=; bars= adds the ratio each row must reach
            (- for none) and whether it does
  torch     json=FILE
            the PyTorch operator's benchmark (pytorch/bench_fp8gemm_op.py): a row per shape
            with the device time of the C++ driver's launch and of the operator in the same
            process, their paired difference beside the driver's against itself, back-to-back
            calls (C++ loop, operator, torch._scaled_mm), the operator and torch._scaled_mm in
            a CUDA graph, and the CPU time of a call (the operator, the library's launch in it,
            torch._scaled_mm)
  slices    json=FILE step=STEP [shapes=MxNxK,...]  (or csv=FILE [shapes=...])
            a step's time against the slice count forced (fp8gemm_bench --split_k_counts, the
            `splits` phase of bench/measure_h200.sh; csv= reads the older CSV of that phase,
            shape,run,ms,tflops,plan with run = cublaslt, auto or a slice count): a row per
            shape with the plan its heuristic chose, its time, the time at each slice count,
            the fastest of them and the heuristic's time over it, and cuBLASLt's
  calibration json=FILE [k=K,K,...]
            the tolerance's calibration (bench/results/h200/tolerance_calibration.json, from
            fp8gemm_calibrate): per accumulation, output type and K, the largest errors measured
            and the calibrated bounds common/check derives from them (margins read from
            common/check/reference.h)

A step is named by its folder (05_matrix_cores) or number (05); a step missing from the file
gives dashes and a warning. Every table ends with `Source: <file>, commit <commit>, <gpu>.`
from the file's context; for a file that records neither (sweep, counters), the keys commit=
and gpu= say what to print.

Exit status: 0 done (or, with --check, every block up to date); 1 a block is out of date
(--check); 2 a block or file cannot be read.

The plain form (RESULTS.json ...) prints the ladder table; --readme FILE writes it between
the older markers <!-- ladder-table:begin --> and <!-- ladder-table:end --> of FILE.
"""
import argparse
import csv
import difflib
import json
import math
import os
import re
import shlex
import sys

import benchmark_json
from benchmark_json import CUBLASLT, CUBLASLT_FAST, DECODE_SHAPE, LADDER_SHAPE

LARGE_SHAPE = "8192x8192x8192"
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = re.compile(r"^<!--\s*table:\s*(.*?)\s*-->\s*$")
END = re.compile(r"^<!--\s*end table\s*-->\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
DASH = "—"

# Nsight Compute metrics shown when a counters block names no columns: time, registers,
# occupancy, how busy issue, the FP32 pipe, DRAM and shared memory are, and bank conflicts.
DEFAULT_COUNTERS = [
    "gpu__time_duration.sum",
    "launch__registers_per_thread",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
]


class TableError(Exception):
    """A block that cannot be generated: says which and why."""


# -----------------------------------------------------------------------------
# Formatting
# -----------------------------------------------------------------------------

def tflops_text(value):
    if value is None:
        return DASH
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def percent_text(percent):
    if percent is None:
        return DASH
    return f"{percent:.1f} %" if percent >= 1 else f"{percent:.2f} %"


def count_text(value):
    """18074 -> '18,074'; 469812345 -> '469.8 M'."""
    magnitude = abs(value)
    if magnitude >= 1e5:
        for factor, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
            if magnitude >= factor:
                return f"{value / factor:.4g} {suffix}"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:.3g}"


def shape_text(shape):
    """'4096x4096x4096' -> '4096 × 4096 × 4096', as the chapters write shapes; an epilogue
    variant '4096x4096x4096/block/bias_gelu/e4m3' -> '4096 × 4096 × 4096, block, bias_gelu, e4m3'."""
    dims, *variant = shape.split("/")
    return ", ".join([dims.replace("x", " × ")] + variant)


def step_label(contender):
    """'05_matrix_cores' -> 'step 05', '05_matrix_cores_fast' -> 'step 05 fast', 'cublaslt' -> 'cuBLASLt'."""
    if contender == CUBLASLT:
        return "cuBLASLt"
    if contender == CUBLASLT_FAST:
        return "cuBLASLt fast"
    number = contender.split("_")[0]
    if not number.isdigit():
        return contender
    return f"step {number}" + (" fast" if contender.endswith(benchmark_json.FAST_SUFFIX) else "")


def markdown_table(header, rows, align):
    """`align`: one of 'l' or 'r' per column."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if a == "l" else "---:" for a in align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def source_line(files, contexts, keys):
    """'Source: <file>, commit <commit>, <gpu>.' (several files: each with its own, unless
    they agree)."""
    def described(context):
        commit = context.get("git_commit") or keys.get("commit") or "unknown"
        gpu = context.get("gpu") or keys.get("gpu") or "unknown GPU"
        return commit, gpu
    pairs = [described(context) for context in contexts]
    if len(set(pairs)) <= 1:
        commit, gpu = pairs[0] if pairs else ("unknown", "unknown GPU")
        return f"Source: {', '.join(files)}, commit {commit}, {gpu}."
    return "Source: " + "; ".join(f"{f}, commit {c}, {g}" for f, (c, g) in zip(files, pairs)) + "."


def warn(message):
    print(f"make_table.py: warning: {message}", file=sys.stderr)


# -----------------------------------------------------------------------------
# Reading the files a block names
# -----------------------------------------------------------------------------

def split_list(value):
    return [item.strip() for item in value.split(",") if item.strip()]


def repo_path(path, base=REPO_ROOT):
    """A block's path, relative to the repository root (the plain form: to the working directory)."""
    return path if os.path.isabs(path) else os.path.join(base, path)


def one_file(keys, key):
    files = split_list(keys.get(key, ""))
    if len(files) != 1:
        raise TableError(f"needs {key}=FILE (one file)")
    if not os.path.exists(repo_path(files[0])):
        raise TableError(f"no file {files[0]} (paths are relative to the repository root)")
    return files[0], repo_path(files[0])


def load_benchmark(keys, base=REPO_ROOT):
    """(rows, files, contexts) of the json= files of a block."""
    files = split_list(keys.get("json", ""))
    if not files:
        raise TableError("needs json=FILE")
    for f in files:
        if not os.path.exists(repo_path(f, base)):
            raise TableError(f"no file {f} (paths are relative to the repository root)")
    rows, contexts = benchmark_json.load_rows([repo_path(f, base) for f in files])
    if not rows:
        raise TableError(f"no measured case in {', '.join(files)}")
    return rows, files, [context for _, context in contexts]


def resolve_steps(keys, rows):
    """The steps= of a block as contender names ('all': every step of the file). A step the
    file lacks keeps its name (its cells show a dash) and draws a warning."""
    value = keys.get("steps", "")
    if not value:
        raise TableError("needs steps=STEP,STEP (folder names or numbers) or steps=all")
    tflops = {key: 0.0 for key in rows}
    if value == "all":
        return benchmark_json.steps(tflops)
    names = benchmark_json.contenders(tflops)
    resolved = []
    for key in split_list(value):
        matches = [key] if key in names else [
            n for n in benchmark_json.steps(tflops) if key.isdigit() and n.split("_")[0] == key.zfill(2)]
        if len(matches) != 1:
            warn(f"no step {key!r} in {keys.get('json')} (it has {', '.join(names)}): its cells show {DASH}")
            matches = [key]
        resolved.append(matches[0])
    return resolved


def selected_shapes(keys, available):
    if "shapes" not in keys:
        return available
    wanted = split_list(keys["shapes"])
    missing = [s for s in wanted if s not in available]
    if missing:
        raise TableError(f"shapes not in the file: {', '.join(missing)}")
    return wanted


def tflops_of(rows, contender, shape):
    row = rows.get((contender, shape))
    return None if row is None else float(row["TFLOPS"])


def real_time_us(row):
    """A case's time (Google Benchmark's real_time in its time_unit), in µs."""
    return float(row["real_time"]) * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[row.get("time_unit", "ms")]


# -----------------------------------------------------------------------------
# The kinds
# -----------------------------------------------------------------------------

def ladder_table(keys, base=REPO_ROOT):
    """Every step in ladder order, then cuBLASLt: TFLOP/s at 4096^3, % of cuBLASLt there,
    TFLOP/s at 8192^3 and at the decode shape."""
    rows, files, contexts = load_benchmark(keys, base)
    tflops = {key: float(row["TFLOPS"]) for key, row in rows.items()}
    names = benchmark_json.contenders(tflops)
    steps = benchmark_json.steps(tflops)
    baselines = [c for c in (CUBLASLT, CUBLASLT_FAST) if c in names]
    header = ["step", f"TFLOP/s at {LADDER_SHAPE}", "% of cuBLASLt", f"TFLOP/s at {LARGE_SHAPE}",
              f"TFLOP/s at {DECODE_SHAPE}"]
    body = []
    for contender in steps + baselines:
        body.append([contender, tflops_text(tflops.get((contender, LADDER_SHAPE))),
                     percent_text(benchmark_json.pct_of_cublaslt(rows, contender, LADDER_SHAPE)),
                     tflops_text(tflops.get((contender, LARGE_SHAPE))),
                     tflops_text(tflops.get((contender, DECODE_SHAPE)))])
    return markdown_table(header, body, "lrrrr") + ["", source_line(files, contexts, keys)]


def shapes_table(keys):
    """A row per shape: each step's TFLOP/s and % of cuBLASLt, then cuBLASLt's two modes."""
    rows, files, contexts = load_benchmark(keys)
    steps = resolve_steps(keys, rows)
    shapes = selected_shapes(keys, benchmark_json.shapes(rows))
    header = ["shape"]
    for step in steps:
        header += [f"{step_label(step)} TFLOP/s", f"{step_label(step)} % of cuBLASLt"]
    header += ["cuBLASLt TFLOP/s", "cuBLASLt fast TFLOP/s"]
    body = []
    for shape in shapes:
        row = [shape_text(shape)]
        for step in steps:
            row += [tflops_text(tflops_of(rows, step, shape)),
                    percent_text(benchmark_json.pct_of_cublaslt(rows, step, shape))]
        row += [tflops_text(tflops_of(rows, CUBLASLT, shape)), tflops_text(tflops_of(rows, CUBLASLT_FAST, shape))]
        body.append(row)
    if keys.get("geomean") == "yes":
        row = [f"geometric mean of {len(shapes)}"]
        for step in steps:
            row += [tflops_text(geometric_mean([tflops_of(rows, step, shape) for shape in shapes])),
                    percent_text(geometric_mean([benchmark_json.pct_of_cublaslt(rows, step, shape) for shape in shapes]))]
        row += [tflops_text(geometric_mean([tflops_of(rows, c, shape) for shape in shapes]))
                for c in (CUBLASLT, CUBLASLT_FAST)]
        body.append(row)
    return markdown_table(header, body, "l" + "r" * (len(header) - 1)) + ["", source_line(files, contexts, keys)]


def geometric_mean(values):
    """The geometric mean of positive values; None if any is missing (a dash in the table)."""
    if not values or any(v is None or v <= 0 for v in values):
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def fast_table(keys):
    """A row per shape: each step with promotion and as `<step>_fast`, the gain, then cuBLASLt."""
    rows, files, contexts = load_benchmark(keys)
    suffix = benchmark_json.FAST_SUFFIX
    steps = [s[: -len(suffix)] if s.endswith(suffix) else s for s in resolve_steps(keys, rows)]
    shapes = selected_shapes(keys, benchmark_json.shapes(rows))
    header = ["shape"]
    for step in steps:
        header += [f"{step_label(step)} TFLOP/s", f"{step_label(step + suffix)} TFLOP/s", "gain"]
    header += ["cuBLASLt TFLOP/s", "cuBLASLt fast TFLOP/s"]
    body = []
    for shape in shapes:
        row = [shape_text(shape)]
        for step in steps:
            promoted, fast = tflops_of(rows, step, shape), tflops_of(rows, step + suffix, shape)
            gain = DASH if promoted is None or fast is None or not promoted else f"{100.0 * (fast / promoted - 1):+.1f} %"
            row += [tflops_text(promoted), tflops_text(fast), gain]
        row += [tflops_text(tflops_of(rows, CUBLASLT, shape)), tflops_text(tflops_of(rows, CUBLASLT_FAST, shape))]
        body.append(row)
    return markdown_table(header, body, "l" + "r" * (len(header) - 1)) + ["", source_line(files, contexts, keys)]


def sweep_table(keys):
    """A row per tile: threads, registers, shared memory, and per shape the grid's blocks
    and TFLOP/s."""
    name, path = one_file(keys, "json")
    with open(path) as f:
        data = json.load(f)
    results = data.get("results", [])
    if not results:
        raise TableError(f"no results in {name}")
    shape_of = lambda r: f"{r['m']}x{r['n']}x{r['k']}"  # noqa: E731
    shapes = selected_shapes(keys, list(dict.fromkeys(shape_of(r) for r in results)))
    tiles = list(dict.fromkeys(r["tile"] for r in results))
    by_key = {(r["tile"], shape_of(r)): r for r in results}
    header = ["tile (BM x BN x BK / TM x TN)", "threads", "registers", "shared memory"]
    for shape in shapes:
        header += [f"blocks at {shape_text(shape)}", f"TFLOP/s at {shape_text(shape)}"]
    body = []
    for tile in tiles:
        first = next(r for r in results if r["tile"] == tile)
        row = [tile, str(first["threads"]), str(first["registers"]), f"{first['shared_bytes'] / 1024:.0f} KiB"]
        for shape in shapes:
            r = by_key.get((tile, shape))
            blocks = DASH if r is None else f"{-(-r['m'] // r['bm']) * -(-r['n'] // r['bn']):,}"
            row += [blocks, DASH if r is None else tflops_text(float(r["tflops"]))]
        body.append(row)
    context = {"gpu": data.get("gpu"), "git_commit": data.get("git_commit")}
    return markdown_table(header, body, "l" + "r" * (len(header) - 1)) + ["", source_line([name], [context], keys)]


def counter_text(value, unit):
    try:
        number = float(value)
    except ValueError:
        return value or DASH
    if unit == "%":
        return f"{number:.1f} %" if number >= 1 or number == 0 else f"{number:.2f} %"
    if unit == "ns":
        return f"{number / 1e6:.3g} ms" if number >= 1e6 else f"{number / 1e3:.4g} µs"
    if unit == "byte":
        for factor, suffix in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
            if number >= factor:
                return f"{number / factor:.1f} {suffix}"
        return f"{number:.0f} B"
    return count_text(number)


def counters_table(keys):
    """Nsight Compute counters: a row per metric, a column per step and shape (a CSV in the
    layout step,m,n,k,metric,unit,value); other CSVs: their columns= as they are."""
    name, path = one_file(keys, "csv")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames or []
        records = list(reader)
    chosen = keys.get("metrics", keys.get("columns"))
    source = ["", source_line([name], [{}], keys)]
    if not {"metric", "value"} <= set(fields):  # one column per quantity: print the chosen ones
        columns = split_list(chosen) if chosen else fields
        unknown = [c for c in columns if c not in fields]
        if unknown:
            raise TableError(f"no column {', '.join(unknown)} in {name} (it has {', '.join(fields)})")
        body = [[record[c] for c in columns] for record in records]
        return markdown_table(columns, body, "l" * len(columns)) + source

    metrics = split_list(chosen) if chosen else DEFAULT_COUNTERS
    known = {record["metric"] for record in records}
    for metric in metrics:
        if metric not in known:
            if chosen:
                raise TableError(f"no metric {metric} in {name}")
            warn(f"no metric {metric} in {name}: its row shows {DASH}")
    step_filter = [s.zfill(2) if s.isdigit() else s for s in split_list(keys.get("steps", ""))]
    values, units, runs = {}, {}, []
    for record in records:
        step = record.get("step", "")
        shape = "x".join(record.get(d, "?") for d in ("m", "n", "k"))
        if step_filter and step not in step_filter:
            continue
        if (step, shape) not in runs:
            runs.append((step, shape))
        values[(step, shape, record["metric"])] = record["value"]
        units[record["metric"]] = record.get("unit", "")
    if step_filter:
        missing = [s for s in step_filter if s not in {step for step, _ in runs}]
        if missing:
            raise TableError(f"no step {', '.join(missing)} in {name}")
    shapes = selected_shapes(keys, list(dict.fromkeys(shape for _, shape in runs)))
    steps = list(dict.fromkeys(step for step, _ in runs))
    columns = [(step, shape) for shape in shapes for step in steps if (step, shape) in runs]
    header = ["counter"] + [shape_text(shape) if len(steps) == 1 else f"step {step}, {shape_text(shape)}"
                            for step, shape in columns]
    body = [[f"`{metric}`"] + [counter_text(values.get((step, shape, metric), ""), units.get(metric, ""))
                               for step, shape in columns] for metric in metrics]
    return markdown_table(header, body, "l" + "r" * len(columns)) + source


FORMAT_ORDER = ["e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz"]
OUTPUT_ORDER = ["bf16", "fp32", "e4m3", "e5m2"]
ACCUMULATION_TEXT = {
    "fp32": "FP32",
    "tensor_core_promoted": "tensor cores, into FP32 every 128 of K",
    "tensor_core_fast": "tensor cores",
}
MUST_RUN_SHAPES = ["4096x4096x4096", "64x2112x7168"]  # what every step must run (registry.h)


def must_run_text(step, formats, outputs, mixed):
    """'4096 × 4096 × 4096 and 64 × 2112 × 7168 with every format pair and output it accepts: 64 cases';
    other shapes, and those with fewer cases than the constraints accept, say how many they have."""
    cases = step.get("must_run", [])
    accepted = {(a, b, d) for a in formats for b in formats if mixed or a == b for d in outputs}
    by_shape = {}
    for c in cases:
        by_shape.setdefault(f"{c['m']}x{c['n']}x{c['k']}", set()).add((c["a_format"], c["b_format"], c["d_type"]))
    complete = [s for s in MUST_RUN_SHAPES if accepted and by_shape.get(s, set()) >= accepted]
    parts = []
    if complete:
        parts.append(" and ".join(shape_text(s) for s in complete) + " with every format pair and output it accepts")
    for shape, combos in by_shape.items():
        if shape not in complete:
            parts.append(f"{shape_text(shape)}: {len(combos)} case{'' if len(combos) == 1 else 's'}")
    if not parts:
        return DASH
    return "; ".join(parts) + f": {len(cases)} cases"


def constraints_table(keys):
    """What each registered step accepts, from the registry's JSON (fp8gemm --list=json)."""
    name, path = one_file(keys, "json")
    with open(path) as f:
        data = json.load(f)
    steps = data.get("steps")
    if not steps:
        raise TableError(f"no steps in {name}")
    if data.get("refused"):
        raise TableError(f"{name} records refused steps (two folders with one number?): {'; '.join(data['refused'])}")
    header = ["step", "M, N, K", "rows of A, B, D", "A / B formats", "D", "GPU", "sums in", "must run"]
    body = []
    for step in steps:
        c = step["constraints"]
        multiples = [f"{d} % {c[key]} == 0"
                     for d, key in (("M", "m_multiple"), ("N", "n_multiple"), ("K", "k_multiple")) if c[key] > 1]
        align = c["operand_alignment_bytes"]
        formats = [f for f in FORMAT_ORDER if f in c["formats"]]
        outputs = [d for d in OUTPUT_ORDER if d in c["outputs"]]
        pairs = "" if len(formats) < 2 else " (any pair)" if c["mixed_formats"] else " (A and B alike)"
        capability = step.get("required_compute_capability", 0)
        gpu = ("any CUDA GPU it is built for" if capability == 0
               else f"compute capability {capability // 10}.{capability % 10} only")
        body.append([
            step["folder"],
            "; ".join(multiples) if multiples else "any ≥ 1",
            f"{align}-byte aligned" if align > 1 else "any",
            ", ".join(formats) + pairs if formats else DASH,
            ", ".join(outputs) if outputs else DASH,
            gpu,
            ACCUMULATION_TEXT.get(step["accumulation"], step["accumulation"]),
            must_run_text(step, formats, outputs, c["mixed_formats"]),
        ])
    source = f"Source: {name}, the step registry as `build/bench/fp8gemm --list=json` prints it."
    return markdown_table(header, body, "l" * len(header)) + ["", source]


def calibration_table(keys):
    """A row per accumulation, output type and K: the largest errors correct kernels showed
    (fp8gemm_calibrate) and the calibrated bounds the checks derive from them."""
    import make_calibration
    name, path = one_file(keys, "json")
    context, runs = make_calibration.load(path)
    table = make_calibration.maxima(runs)
    margin = make_calibration.margins()
    floor = margin["kCalibratedFloorUnits"] * 2.0 ** -24
    ks = [int(k) for k in split_list(keys.get("k", "16,128,1024,7168,16384"))]
    header = ["accumulation", "D", "K", "runs", "largest excess norm", "bound (excess)",
              "largest element ratio", "bound (coefficient of S)", "largest \\|gain error\\|", "bound (gain)"]
    body = []
    for accumulation, output in dict.fromkeys(key[:2] for key in table):
        for k in ks:
            e = make_calibration.envelope(table, accumulation, output, k)
            if e is None:
                continue
            runs_at_k = table.get((accumulation, output, k), {}).get("runs", 0)
            body.append([accumulation.replace("_", " "), output, str(k), str(runs_at_k),
                         f"{e['excess_norm']:.3g}", f"{max(margin['kCalibratedNormMargin'] * e['excess_norm'], floor):.3g}",
                         f"{e['element_ratio']:.3g}",
                         f"{max(margin['kCalibratedElementMargin'] * e['element_ratio'], floor):.3g}",
                         f"{e['gain_error']:.3g}", f"{max(margin['kCalibratedGainMargin'] * e['gain_error'], floor):.3g}"])
    return markdown_table(header, body, "lllr" + "r" * 6) + ["", source_line([name], [context], keys)]



def variant_parts(shape):
    """('4096x4096x4096', 'block/bias_gelu/e4m3') of a variant's shape; ('...', '') for a plain one."""
    dims, _, variant = shape.partition("/")
    return dims, variant


def resolve_step(keys, rows):
    if "step" not in keys:
        raise TableError("needs step=STEP (a folder name or number)")
    return resolve_steps({"steps": keys["step"], "json": keys.get("json")}, rows)[0]


def ratio_text(numerator, denominator):
    return DASH if numerator is None or not denominator else f"{numerator / denominator:.2f}×"


def epilogue_table(keys):
    """A row per shape and epilogue variant: the step, cuBLASLt with the same epilogue, the
    unfused baseline, and the ratios."""
    rows, files, contexts = load_benchmark(keys)
    step = resolve_step(keys, rows)
    refused = benchmark_json.refused_cases([repo_path(f) for f in split_list(keys["json"])])
    shapes = [s for s in benchmark_json.shapes(rows) if "/" in s]
    if "shapes" in keys:
        wanted = split_list(keys["shapes"])
        shapes = [s for s in shapes if variant_parts(s)[0] in wanted]
        if not shapes:
            raise TableError(f"no variant of {', '.join(wanted)} in {keys['json']}")
    header = ["shape", "scales", "epilogue", "D", f"{step_label(step)} TFLOP/s", "cuBLASLt TFLOP/s",
              f"{step_label(step)} / cuBLASLt", "unfused TFLOP/s", "fused / unfused"]
    body, reasons = [], []
    for shape in shapes:
        dims, variant = variant_parts(shape)
        fused, cublaslt, unfused = (tflops_of(rows, c, shape) for c in (step, CUBLASLT, "unfused"))
        cublaslt_cell = tflops_text(cublaslt)
        if cublaslt is None and (CUBLASLT, shape) in refused:
            message = refused[(CUBLASLT, shape)]
            if message not in reasons:
                reasons.append(message)
            cublaslt_cell = f"refused ({reasons.index(message) + 1})"
        body.append([dims.replace("x", " × ")] + variant.split("/") +
                    [tflops_text(fused), cublaslt_cell, ratio_text(fused, cublaslt), tflops_text(unfused),
                     ratio_text(fused, unfused)])
    lines = markdown_table(header, body, "llllrrrrr") + [""]
    for i, reason in enumerate(reasons):
        lines += [f"({i + 1}) {reason}", ""]
    return lines + [source_line(files, contexts, keys)]


def builds_table(keys):
    """One step in two builds, each file beside its own cuBLASLt."""
    files = split_list(keys.get("json", ""))
    labels = split_list(keys.get("labels", ""))
    if len(files) != 2 or len(labels) != 2:
        raise TableError("needs json=FILE,FILE and labels=A,B (two builds)")
    loaded = [load_benchmark({"json": f}) for f in files]
    step = resolve_step(keys, loaded[0][0])
    shapes = selected_shapes(keys, [s for s in benchmark_json.shapes(loaded[0][0]) if (step, s) in loaded[0][0]])
    header = ["shape"]
    for label in labels:
        header += [f"{label} TFLOP/s", f"{label} % of cuBLASLt"]
    header += [f"{labels[0]} / {labels[1]}"]
    body = []
    for shape in shapes:
        row, speeds = [shape_text(shape)], []
        for rows, _, _ in loaded:
            speeds.append(tflops_of(rows, step, shape))
            row += [tflops_text(speeds[-1]), percent_text(benchmark_json.pct_of_cublaslt(rows, step, shape))]
        row.append(ratio_text(speeds[0], speeds[1]))
        body.append(row)
    contexts = [context for _, _, c in loaded for context in c]
    return markdown_table(header, body, "l" + "r" * (len(header) - 1)) + ["", source_line(files, contexts, keys)]


def ratios_table(keys):
    """Speed ratios between pairs of cases of one file, with the bar each must reach."""
    rows, files, contexts = load_benchmark(keys)
    step = resolve_step(keys, rows)
    pairs = [p.strip() for p in keys.get("pairs", "").split(";") if p.strip()]
    if not pairs:
        raise TableError('needs pairs="A~B;C~D" (cases as [contender@]shape)')
    bars = split_list(keys.get("bars", "")) if "bars" in keys else []
    if bars and len(bars) != len(pairs):
        raise TableError(f"bars= has {len(bars)} values for {len(pairs)} pairs")

    def case(text):
        contender, _, shape = text.rpartition("@")
        contender = resolve_steps({"steps": contender, "json": keys.get("json")}, rows)[0] if contender else step
        if (contender, shape) not in rows:
            raise TableError(f"no case {contender}/{shape} in {keys['json']}")
        return contender, shape, tflops_of(rows, contender, shape)

    def label(contender, shape):
        return f"{step_label(contender)}, {shape_text(shape)}"

    header = ["A", "B", "A TFLOP/s", "B TFLOP/s", "A / B"] + (["bar", "met"] if bars else [])
    body = []
    for i, pair in enumerate(pairs):
        if "~" not in pair:
            raise TableError(f"a pair is A~B, got {pair!r}")
        (ca, sa, ta), (cb, sb, tb) = (case(x.strip()) for x in pair.split("~", 1))
        row = [label(ca, sa), label(cb, sb), tflops_text(ta), tflops_text(tb), ratio_text(ta, tb)]
        if bars:
            bar = bars[i]
            row += ([DASH, DASH] if bar == "-" else
                    [f"≥ {float(bar):.2f}×", "yes" if ta / tb >= float(bar) - 1e-9 else "**no**"])
        body.append(row)
    return markdown_table(header, body, "ll" + "r" * (len(header) - 2)) + ["", source_line(files, contexts, keys)]

def split_k_table(keys):
    """A row per shape for a split-K step: its time (the step's own choice of tile, slices and
    form, from the case's label), % of cuBLASLt, GB/s and % of the measured HBM copy bandwidth,
    then the time unsplit and in each reduction form forced (fp8gemm_bench --split_k_variants),
    and cuBLASLt's."""
    rows, files, contexts = load_benchmark(keys)
    step = resolve_steps(keys, rows)[0]
    shapes = selected_shapes(keys, benchmark_json.shapes(rows))

    def micros(contender, shape):
        row = rows.get((contender, shape))
        if row is None:
            return DASH
        return f"{real_time_us(row):.1f}"

    def choice(shape):
        label = rows.get((step, shape), {}).get("label", "")
        if not label.startswith("split_k "):
            return DASH
        slices = label.split()[1]
        tile = re.search(r"tiles of (\d+) x (\d+)", label)
        form = "workspace" if "in a workspace" in label else "cluster" if "in a cluster" in label else ""
        return (f"{tile.group(1)}×{tile.group(2)}, " if tile else "") + f"{slices}" + (f" {form}" if form else "")

    def counter(shape, name, digits):
        row = rows.get((step, shape))
        return DASH if row is None or name not in row else f"{float(row[name]):.{digits}f}"

    header = [
        "shape", f"{step_label(step)} µs", "tile, slices, form", "% of cuBLASLt", "GB/s", "% of HBM copy",
        "unsplit µs", "cluster µs", "workspace µs", "cuBLASLt µs"]
    body = []
    for shape in shapes:
        body.append([
            shape_text(shape), micros(step, shape), choice(shape),
            percent_text(benchmark_json.pct_of_cublaslt(rows, step, shape)), counter(shape, "GBps", 0),
            counter(shape, "pct_of_hbm_copy", 1), micros(step + "_split1", shape), micros(step + "_cluster", shape),
            micros(step + "_workspace", shape), micros(CUBLASLT, shape)])
    return markdown_table(header, body, "l" + "r" * (len(header) - 1)) + ["", source_line(files, contexts, keys)]


def slices_records(keys):
    """The slice sweep as (times, plans, shapes, forced runs, source line): times[(shape, run)]
    in µs with run = cublaslt, auto or a slice count. From fp8gemm_bench --split_k_counts
    (json= and step=: the step's own case is auto, its plan the case's label, <step>_split<S>
    the forced counts, all beside cuBLASLt in one run), or from the older CSV of the `splits`
    phase (csv=: one fp8gemm process per time)."""
    times, plans = {}, {}
    if "json" in keys:
        rows, files, contexts = load_benchmark(keys)
        step = resolve_step(keys, rows)
        for (contender, shape), row in rows.items():
            forced = re.fullmatch(re.escape(step) + r"_split(\d+)", contender)
            run = "auto" if contender == step else "cublaslt" if contender == CUBLASLT else (
                forced.group(1) if forced else None)
            if run is None:
                continue
            times[(shape, run)] = real_time_us(row)
            if run == "auto":
                plans[shape] = row.get("label", "")
        shapes = selected_shapes(keys, benchmark_json.shapes(rows))
        forced = sorted({run for (_, run) in times if run.isdigit()}, key=int)
        return times, plans, shapes, forced, source_line(files, contexts, keys)
    name, path = one_file(keys, "csv")
    with open(path, newline="") as f:
        records = list(csv.DictReader(f))
    if not records or not {"shape", "run", "ms", "plan"} <= set(records[0]):
        raise TableError(f"{name}: expected the columns shape,run,ms,tflops,plan")
    for r in records:
        if r["ms"]:
            times[(r["shape"], r["run"])] = float(r["ms"]) * 1000.0
        plans[r["shape"]] = r["plan"]
    shapes = list(dict.fromkeys(r["shape"] for r in records))
    if keys.get("shapes"):
        shapes = [s for s in split_list(keys["shapes"]) if s in shapes]
    forced = [run for run in dict.fromkeys(r["run"] for r in records) if run.isdigit()]
    return times, plans, shapes, forced, source_line([name], [{}], keys)


def slices_table(keys):
    """A row per shape: the heuristic's plan and time, the time at each forced slice count,
    the heuristic's time over the fastest forced one, and cuBLASLt's time."""
    times, plans, shapes, forced, source = slices_records(keys)

    def plan_text(plan):
        tile = re.search(r"tiles of (\d+) x (\d+)", plan)
        slices = re.match(r"split_k (\d+)", plan)
        return (f"{tile.group(1)}×{tile.group(2)}" if tile else "?") + (f", {slices.group(1)}" if slices else "")

    def micros(shape, run):
        t = times.get((shape, run))
        return DASH if t is None else f"{t:.1f}"

    header = ["shape", "heuristic: tile, slices", "heuristic µs"] + [f"{run} µs" for run in forced] + [
        "fastest forced", "heuristic / fastest", "cuBLASLt µs", "heuristic % of cuBLASLt"]
    body = []
    for shape in shapes:
        measured = [(times[(shape, run)], run) for run in forced if (shape, run) in times]
        auto, cublaslt = times.get((shape, "auto")), times.get((shape, "cublaslt"))
        fastest = min(measured) if measured else None
        body.append([shape_text(shape), plan_text(plans.get(shape, "")), micros(shape, "auto")] +
                    [micros(shape, run) for run in forced] +
                    [DASH if fastest is None else fastest[1],
                     DASH if fastest is None or auto is None else f"{auto / fastest[0]:.2f}×",
                     micros(shape, "cublaslt"),
                     DASH if auto is None or cublaslt is None else percent_text(100.0 * cublaslt / auto)])
    return markdown_table(header, body, "ll" + "r" * (len(header) - 2)) + ["", source]


def torch_table(keys):
    """The PyTorch operator against the C++ driver and torch._scaled_mm, from one run of
    pytorch/bench_fp8gemm_op.py (its JSON's fields are described in its docstring)."""
    name, path = one_file(keys, "json")
    with open(path) as f:
        results = json.load(f)

    def us(value, signed=False):
        return DASH if value is None else (f"{value:+.2f}" if signed else f"{value:.1f}")

    header = ["shape", "C++ driver µs", "operator µs", "operator − driver µs", "driver − driver µs",
              "back to back: C++ loop µs", "operator µs", "torch._scaled_mm µs", "CUDA graph: operator µs",
              "torch._scaled_mm µs", "CPU per call: operator µs", "its library launch µs", "torch._scaled_mm µs"]
    body = []
    for r in results["results"]:
        body.append([shape_text(r["shape"]), us(r.get("driver_us")), us(r.get("fp8gemm_us")),
                     us(r.get("binding_device_paired_us"), True), us(r.get("control_paired_us"), True),
                     us(r.get("driver_back_to_back_us")), us(r.get("fp8gemm_back_to_back_us")),
                     us(r.get("scaled_mm_back_to_back_us")), us(r.get("fp8gemm_graph_us")),
                     us(r.get("scaled_mm_graph_us")), us(r.get("call_host_mean_us")), us(r.get("launch_host_us")),
                     us(r.get("scaled_mm_call_host_us"))])
    context = {"git_commit": results.get("commit"), "gpu": f"{results.get('gpu')}, torch {results.get('torch')}"}
    return markdown_table(header, body, "l" + "r" * (len(header) - 1)) + ["", source_line([name], [context], keys)]


KINDS = {"ladder": ladder_table, "shapes": shapes_table, "fast": fast_table, "sweep": sweep_table,
         "counters": counters_table, "constraints": constraints_table, "calibration": calibration_table,
         "epilogue": epilogue_table, "builds": builds_table, "ratios": ratios_table,
         "splitk": split_k_table, "slices": slices_table, "torch": torch_table}


def generate(spec):
    """The lines of the block whose marker says `spec` ('KIND key=value ...')."""
    try:
        words = shlex.split(spec)
    except ValueError as e:
        raise TableError(f"cannot read the marker: {e}")
    if not words or words[0] not in KINDS:
        raise TableError(f"unknown kind {words[0] if words else ''!r} (kinds: {', '.join(KINDS)})")
    keys = {}
    for word in words[1:]:
        if "=" not in word:
            raise TableError(f"expected key=value, got {word!r}")
        key, value = word.split("=", 1)
        keys[key] = value
    return KINDS[words[0]](keys)


# -----------------------------------------------------------------------------
# Markdown files
# -----------------------------------------------------------------------------

def regenerate(text, name):
    """The file's text with every block regenerated, the list of blocks that changed as
    (line number, kind, old lines, new lines), and the number of blocks."""
    lines = text.split("\n")
    out, changed = [], []
    count = 0
    i = 0
    fenced = False  # inside a fenced code block: markers there are examples, not blocks
    while i < len(lines):
        if FENCE.match(lines[i]):
            fenced = not fenced
        begin = None if fenced else BEGIN.match(lines[i])
        if not begin:
            if fenced:
                out.append(lines[i])
                i += 1
                continue
            if END.match(lines[i]):
                raise TableError(f"{name}:{i + 1}: <!-- end table --> without a table marker before it")
            out.append(lines[i])
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if END.match(lines[j]) or BEGIN.match(lines[j])), None)
        if end is None or BEGIN.match(lines[end]):
            raise TableError(f"{name}:{i + 1}: no <!-- end table --> after this marker")
        try:
            new = generate(begin.group(1))
        except TableError as e:
            raise TableError(f"{name}:{i + 1}: {e}")
        count += 1
        old = lines[i + 1:end]
        if old != new:
            changed.append((i + 1, begin.group(1).split()[0], old, new))
        out += [lines[i]] + new + [lines[end]]
        i = end + 1
    return "\n".join(out), changed, count


def update_files(paths, check):
    stale = 0
    for path in paths:
        with open(path) as f:
            text = f.read()
        new_text, changed, blocks = regenerate(text, path)
        if check:
            for line, kind, old, new in changed:
                stale += 1
                print(f"{path}:{line}: the {kind} table is out of date (python3 bench/make_table.py --update {path}):")
                sys.stdout.writelines(difflib.unified_diff([l + "\n" for l in old], [l + "\n" for l in new],
                                                           "in the file", "generated", n=0))
            if not changed:
                print(f"{path}: {blocks} table(s) up to date")
        elif new_text != text:
            with open(path, "w") as f:
                f.write(new_text)
            print(f"{path}: {len(changed)} of {blocks} table(s) regenerated")
        else:
            print(f"{path}: {blocks} table(s), all up to date")
    return stale


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="results JSON files (ladder table), or markdown files with "
                                                 "--update / --check")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--update", action="store_true", help="regenerate the table blocks of the markdown files")
    mode.add_argument("--check", action="store_true", help="exit 1 if a table block differs from what "
                                                           "--update would write")
    mode.add_argument("--readme", help="write the ladder table between the ladder-table markers of this file")
    args = parser.parse_args()

    try:
        if args.update or args.check:
            stale = update_files(args.files, args.check)
            sys.exit(1 if stale else 0)
        table = "\n".join(ladder_table({"json": ",".join(args.files)}, base=os.getcwd()))
    except (TableError, OSError, ValueError, KeyError) as e:
        print(f"make_table.py: {e}", file=sys.stderr)
        sys.exit(2)
    if args.readme is None:
        print(table)
        return
    with open(args.readme) as f:
        text = f.read()
    pattern = re.compile(r"(<!-- ladder-table:begin -->\n).*?(<!-- ladder-table:end -->)", re.S)
    if not pattern.search(text):
        sys.exit(f"make_table.py: no ladder-table markers in {args.readme}")
    with open(args.readme, "w") as f:
        f.write(pattern.sub(lambda m: m.group(1) + table + "\n" + m.group(2), text))
    print(f"updated {args.readme}")


if __name__ == "__main__":
    main()
