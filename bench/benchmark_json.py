"""Reads results files of fp8gemm_bench and fp8gemm (Google Benchmark's JSON layout).

Shared by plot.py and make_table.py. A case is named `<contender>/<M>x<N>x<K>` (an epilogue
variant adds `/<scales>/<epilogue>/<out>`, kept as part of the shape), where the
contender is a step folder (`01_naive`), a tensor-core step without promotion
(`05_matrix_cores_fast`) or a cuBLASLt mode (`cublaslt`, `cublaslt_fast`).

Which row stands for a case: its median aggregate (run_type "aggregate", aggregate_name
"median"), which is what the programs write since they run repetitions; in a file without
one for the case (written before, or run with one repetition), its iteration row. Skipped
cases (error_occurred, skipped) are left out. Nothing here computes a median: the numbers
are Google Benchmark's.
"""
import json

CUBLASLT = "cublaslt"
CUBLASLT_FAST = "cublaslt_fast"
BASELINES = (CUBLASLT, CUBLASLT_FAST)
FAST_SUFFIX = "_fast"
LADDER_SHAPE = "4096x4096x4096"
DECODE_SHAPE = "64x2112x7168"
# The grouped benchmark's layouts (fp8gemm_grouped_bench), the last part of its names:
# `<contender>/<G>x<M>x<N>x<K>/<layout>`, the layout kept in the shape.
GROUPED_LAYOUTS = ("contiguous", "masked")


def split_name(name):
    """('01_naive', '4096x4096x4096') from '01_naive/4096x4096x4096'. An epilogue variant
    (`<contender>/<M>x<N>x<K>/<scales>/<epilogue>/<out>`, fp8gemm_bench --epilogue_variants)
    keeps its suffix in the shape: ('07_fused_epilogue', '4096x4096x4096/block/bias_gelu/e4m3'),
    so that each variant is a case of its own; a grouped case keeps its layout the same way
    ('12_grouped_moe', '4x8192x4096x7168/contiguous'). Google Benchmark's own suffixes
    (`_median`, `/manual_time`...) are not part of `run_name`, which is what is passed here."""
    parts = name.split("/")
    if len(parts) < 2:
        raise ValueError(f"not a <contender>/<M>x<N>x<K> name: {name!r}")
    variant = [p for p in parts[2:5] if p and p != "manual_time"] if len(parts) >= 5 else []
    if len(parts) >= 3 and parts[2] in GROUPED_LAYOUTS:  # fp8gemm_grouped_bench: <G>x<M>x<N>x<K>/<layout>
        variant = [parts[2]]
    return parts[0], "/".join([parts[1]] + variant)


def case_rows(data):
    """{(contender, shape): row} of one parsed file, in the order the cases first appear.

    The row of a case is its median aggregate, else its first iteration row; skipped
    cases and rows without TFLOPS are left out.
    """
    rows = {}
    for entry in data.get("benchmarks", []):
        if entry.get("error_occurred") or entry.get("skipped") or "TFLOPS" not in entry:
            continue
        key = split_name(entry.get("run_name", entry["name"]))
        run_type = entry.get("run_type", "iteration")
        if run_type == "aggregate":
            if entry.get("aggregate_name") != "median":
                continue
            rows[key] = entry  # wins over an iteration row of the case
        elif run_type == "iteration" and key not in rows:
            rows[key] = entry
        # an iteration row after the case's first row, or after its median, adds nothing
    return rows


def refused_cases(paths):
    """{(contender, shape): message} of the cases that were reported skipped (a contender
    that refuses the case, e.g. cuBLASLt without an algorithm for an epilogue), over all
    files; the first file's message wins."""
    refused = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for entry in data.get("benchmarks", []):
            if entry.get("error_occurred") or entry.get("skipped"):
                key = split_name(entry.get("run_name", entry["name"]))
                refused.setdefault(key, entry.get("error_message", entry.get("skip_message", "skipped")))
    return refused


def load_rows(paths):
    """The row of each case over all files, and [(path, context)] of each file.

    A case in several files takes its row from the first file that has it.
    """
    rows = {}
    contexts = []
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        contexts.append((path, data.get("context", {})))
        for key, row in case_rows(data).items():
            rows.setdefault(key, row)
    return rows, contexts


def load(paths):
    """TFLOP/s by (contender, shape) over all files, and the context of the first file."""
    rows, contexts = load_rows(paths)
    results = {key: float(row["TFLOPS"]) for key, row in rows.items()}
    return results, (contexts[0][1] if contexts else {})


def cublaslt_baseline(shape):
    """The cuBLASLt contender a shape is measured against: `cublaslt` (default accumulation);
    for a grouped shape (`<G>x<M>x<N>x<K>/<layout>`) issue 12's baselines, the loop of cuBLASLt
    calls (`cublaslt_loop`) for the contiguous layout and that loop captured in a CUDA graph
    (`cublaslt_graph`) for the masked one."""
    layout = shape.rpartition("/")[2]
    if layout == "contiguous":
        return "cublaslt_loop"
    if layout == "masked":
        return "cublaslt_graph"
    return CUBLASLT


def pct_of_cublaslt(rows, contender, shape):
    """% of cuBLASLt on the shape (its cublaslt_baseline): the row's pct_of_cublaslt, which the
    programs compute from Google Benchmark's medians; for a row without it, the ratio of the
    TFLOP/s. None where either is missing."""
    row = rows.get((contender, shape))
    if row is None:
        return None
    if "pct_of_cublaslt" in row:
        return float(row["pct_of_cublaslt"])
    baseline = rows.get((cublaslt_baseline(shape), shape))
    if baseline is None or not float(baseline["TFLOPS"]):
        return None
    return 100.0 * float(row["TFLOPS"]) / float(baseline["TFLOPS"])


def contenders(results):
    """The cuBLASLt modes first, then the steps in ladder order (folder names sort by number;
    a step's `_fast` mode right after the step)."""
    names = {contender for contender, _ in results}
    baselines = [name for name in BASELINES if name in names]
    return baselines + sorted(names - set(BASELINES))


def is_fast_variant(contender, names):
    """True for `<step>_fast` when `<step>` is among `names`."""
    return contender.endswith(FAST_SUFFIX) and contender[: -len(FAST_SUFFIX)] in names


def steps(results):
    """The steps in ladder order, without the `_fast` modes of steps that are there too."""
    names = {contender for contender, _ in results}
    return [c for c in contenders(results) if c not in BASELINES and not is_fast_variant(c, names)]


def shapes(results):
    """Shapes in the order they first appear."""
    return list(dict.fromkeys(shape for _, shape in results))


def describe_context(context):
    """'NVIDIA H200, commit 1a2b3c' for titles and notes."""
    return f"{context.get('gpu', 'unknown GPU')}, commit {context.get('git_commit', 'unknown')}"
