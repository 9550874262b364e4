"""torch.ops.fp8gemm.mm against torch._scaled_mm through PyTorch, on the ladder's shapes (e4m3,
per-tensor scales, BF16 out), measured the way fp8gemm_bench measures the C++ launch: the L2
flushed before every call (outside the timed events), CUDA events around the call alone, the
median of the calls. With --driver-json (fp8gemm_bench's JSON for the same step and shapes,
made in the same session) it also reports the binding's cost: this time minus the driver's.
It also reports the host time of a call (a loop of calls with no synchronization between
them, over the number of calls): what the binding adds on the CPU.

    FP8GEMM_TORCH_LIB=build/pytorch/libfp8gemm_torch.so python3 pytorch/bench_fp8gemm_op.py \\
        --step 09 --driver-json bench.json --out results.json
"""
import argparse
import json
import os
import statistics
import time

import torch

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (64, 2112, 7168), (1024, 1024, 16384), (128, 7168, 16384)]
L2_FLUSH_BYTES = 121 << 20  # 2 x the H200's 60 MiB L2 + 1 MiB, as fp8gemm_bench


def median_us(call, flush, repetitions=100):
    for _ in range(10):
        call()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repetitions):
        flush.zero_()
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)
    return statistics.median(times)


def host_us(call, calls=200):
    """CPU time of one call: a loop of calls, the GPU left to catch up afterwards."""
    torch.cuda.synchronize()
    begin = time.perf_counter()
    for _ in range(calls):
        call()
    elapsed = time.perf_counter() - begin
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def driver_us(path, step):
    """fp8gemm_bench's median per shape for the step (its plain case <step>/<M>x<N>x<K>)."""
    if not path:
        return {}
    with open(path) as f:
        runs = json.load(f)["benchmarks"]
    result = {}
    for run in runs:
        name = run.get("run_name", run["name"]).split("/")
        if len(name) == 2 and name[0].split("_")[0] == step and run.get("aggregate_name") == "median":
            unit = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[run["time_unit"]]
            result[name[1]] = run["real_time"] * unit
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", default=os.environ.get("FP8GEMM_TORCH_LIB", "build/pytorch/libfp8gemm_torch.so"))
    parser.add_argument("--step", default="last", help='"last" or a step\'s number ("09")')
    parser.add_argument("--driver-json", help="fp8gemm_bench's JSON for the same step and shapes")
    parser.add_argument("--out", help="JSON file for the results")
    args = parser.parse_args()
    torch.ops.load_library(args.lib)
    driver = driver_us(args.driver_json, args.step)
    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    rows = []
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
        one = torch.ones((), device="cuda")

        def ours():
            return torch.ops.fp8gemm.mm(a, b, one, one, step=args.step)

        def theirs():
            return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

        shape = f"{m}x{n}x{k}"
        row = {"shape": shape, "fp8gemm_us": median_us(ours, flush), "scaled_mm_us": median_us(theirs, flush),
               "fp8gemm_host_us": host_us(ours), "scaled_mm_host_us": host_us(theirs)}
        flop = 2.0 * m * n * k
        row["fp8gemm_tflops"] = flop / row["fp8gemm_us"] * 1e-6
        row["scaled_mm_tflops"] = flop / row["scaled_mm_us"] * 1e-6
        if shape in driver:
            row["driver_us"] = driver[shape]
            row["binding_us"] = row["fp8gemm_us"] - driver[shape]
        rows.append(row)
        print(shape + ": " + ", ".join(f"{key} {value:.2f}" for key, value in row.items() if key != "shape"))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "step": args.step,
                       "timing": "L2 flushed before each call (outside the events); median of 100 calls, CUDA "
                                 "events around each, 10 warm-up calls; host_us: CPU time per call over a loop "
                                 "of 200 calls without synchronization",
                       "driver_json": args.driver_json, "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
