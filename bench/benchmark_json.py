"""Reads results files of fp8gemm_bench and fp8gemm (Google Benchmark's JSON layout).

Shared by plot.py and make_table.py. A case is named `<contender>/<M>x<N>x<K>`, where the
contender is a step folder (`01_naive`) or a cuBLASLt mode (`cublaslt`, `cublaslt_fast`).
"""
import json
import statistics

CUBLASLT = "cublaslt"
CUBLASLT_FAST = "cublaslt_fast"
LADDER_SHAPE = "4096x4096x4096"
DECODE_SHAPE = "64x2112x7168"


def split_name(name):
    """('01_naive', '4096x4096x4096') from '01_naive/4096x4096x4096' (and any suffix after it)."""
    parts = name.split("/")
    if len(parts) < 2:
        raise ValueError(f"not a <contender>/<M>x<N>x<K> name: {name!r}")
    return parts[0], parts[1]


def load(paths):
    """TFLOP/s by (contender, shape) over all files, and the context of the first file.

    A case measured more than once (repetitions, several files) gives the median of its
    runs. Skipped cases and Google Benchmark's aggregate rows are left out. Shapes keep
    the order in which they first appear.
    """
    samples = {}
    context = None
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        if context is None:
            context = data.get("context", {})
        for entry in data.get("benchmarks", []):
            if entry.get("run_type", "iteration") != "iteration":
                continue
            if entry.get("error_occurred") or entry.get("skipped") or "TFLOPS" not in entry:
                continue
            key = split_name(entry.get("run_name", entry["name"]))
            samples.setdefault(key, []).append(float(entry["TFLOPS"]))
    results = {key: statistics.median(values) for key, values in samples.items()}
    return results, context or {}


def contenders(results):
    """The cuBLASLt modes first, then the steps in ladder order (folder names sort by number)."""
    names = {contender for contender, _ in results}
    baselines = [name for name in (CUBLASLT, CUBLASLT_FAST) if name in names]
    return baselines + sorted(names - {CUBLASLT, CUBLASLT_FAST})


def shapes(results):
    """Shapes in the order they first appear."""
    return list(dict.fromkeys(shape for _, shape in results))


def describe_context(context):
    """'NVIDIA H200, commit 1a2b3c' for titles and notes."""
    return f"{context.get('gpu', 'unknown GPU')}, commit {context.get('git_commit', 'unknown')}"
