"""torch.ops.fp8gemm.mm against torch._scaled_mm through PyTorch, on the ladder's shapes: the
median time of a call, CUDA events around a launch, e4m3, per-tensor scales, BF16 out. The
binding's cost is this time minus fp8gemm_bench's for the same step and shape.

    FP8GEMM_TORCH_LIB=build/pytorch/libfp8gemm_torch.so python3 pytorch/bench_fp8gemm_op.py --out results.json
"""
import argparse
import json
import os
import statistics

import torch

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (64, 2112, 7168), (1024, 1024, 16384), (128, 7168, 16384)]


def median_us(call, repetitions=200):
    for _ in range(20):
        call()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repetitions):
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", default=os.environ.get("FP8GEMM_TORCH_LIB", "build/pytorch/libfp8gemm_torch.so"))
    parser.add_argument("--step", default="last")
    parser.add_argument("--out", help="JSON file for the results")
    args = parser.parse_args()
    torch.ops.load_library(args.lib)
    rows = []
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
        one = torch.ones((), device="cuda")
        ours = median_us(lambda: torch.ops.fp8gemm.mm(a, b, one, one, step=args.step))
        theirs = median_us(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
        flop = 2.0 * m * n * k
        rows.append({"shape": f"{m}x{n}x{k}", "fp8gemm_us": ours, "scaled_mm_us": theirs,
                     "fp8gemm_tflops": flop / ours * 1e-6, "scaled_mm_tflops": flop / theirs * 1e-6})
        print(f"{m}x{n}x{k}: fp8gemm.mm {ours:.1f} us, torch._scaled_mm {theirs:.1f} us")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "step": args.step,
                       "timing": "median of 200 calls, CUDA events around each, 20 warm-up calls",
                       "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
