"""torch.ops.fp8gemm.mm against torch._scaled_mm through PyTorch, on the ladder's shapes, with
fp8gemm_bench's inputs (random normal A and B quantized per tensor to e4m3, per-tensor scales,
BF16 out) and its timing: the GPU kept busy (a spin, then the L2 flush) before every call,
outside the timed events, CUDA events around the call alone, the median of the calls. It also
reports the CPU time of a call (a loop of calls with no synchronization between them, over the
number of calls).

What the binding costs on the CPU, in this process: each of 100 calls timed on the CPU as
fp8gemm_bench times a launch (the L2 flush enqueued first, so the GPU is busy and the call never
waits for it), while the operator's own clock (torch.ops.fp8gemm.launch_clock) sums the time of
its C++ body and of the library's launch inside it over the same calls. Their means give:
  dispatch_us     the call from Python minus the C++ body: torch's dispatcher and Python
  binding_cpp_us  the C++ body minus the launch: the operator's checks and the output's allocation
  binding_host_us the call minus the launch: everything the operator adds to the C++ launch

What the binding costs on the GPU, in this process: each timed call of the operator from Python
is followed by one launch of the same GEMM timed by C++ code the way fp8gemm_bench times it
(torch.ops.fp8gemm.driver_launch_us: the flush, an event, the library's launch, an event), on the
same tensors, 100 pairs:
  fp8gemm_us, driver_us     the medians of the two
  binding_device_us         fp8gemm_us - driver_us
  binding_device_paired_us  the median of the 100 differences, call by call
  control_paired_us         the same for two launches of the driver in a row: the spread of one
                            launch against the next, the floor of what this can resolve

And back to back: about 20 ms of calls (back_to_back_calls, 20 to 200) with nothing between them
(no flush, no wait), CUDA events around them all, per call, the median of three rounds that
alternate the three: the operator from Python (fp8gemm_back_to_back_us), the library's launch
from a C++ loop (driver_back_to_back_us) and torch._scaled_mm (scaled_mm_back_to_back_us). Where
a call costs the CPU more than the kernel takes the GPU, the GPU waits for the CPU and these show
the CPU's cost per call; elsewhere the kernel's (binding_back_to_back_us: the operator's minus the
C++ loop's). The same calls captured in a CUDA graph and replayed (fp8gemm_graph_us,
scaled_mm_graph_us; graph_calls of them, their outputs within 2 GiB) take the CPU out.

With --driver-json (fp8gemm_bench's JSON for the same step and shapes, made in the same session)
it also compares with the C++ driver's own process: its device time minus the driver's for the
step's plain case (driver_json_us, binding_vs_driver_json_us), and the call's CPU time minus the
driver's launch_host_us (another process: noisier).

    FP8GEMM_TORCH_LIB=build/pytorch/libfp8gemm_torch.so python3 pytorch/bench_fp8gemm_op.py \
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
# Before each timed call, a kernel that spins this many GPU clock cycles (about 50 us at the
# H200's 1.98 GHz) ahead of the flush: the GPU stays busy while Python enqueues the call, so the
# events time the GEMM and not a CPU that the GPU waited for (the flush alone, about 40 us, did
# not always cover a call's CPU time: issue 13's run 8).
SPIN_CYCLES = 100_000


def busy_gpu(flush):
    """Makes the GPU busy before a timed call: the spin, then the L2 flush."""
    torch.cuda._sleep(SPIN_CYCLES)
    flush.zero_()


def median_us(call, flush, repetitions=100):
    for _ in range(10):
        call()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repetitions):
        busy_gpu(flush)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)
    return statistics.median(times)


def interleaved_us(call, driver_launch, flush, repetitions=100):
    """Device times of `repetitions` rounds of: a call (timed as median_us times one), then two
    driver_launch()es, each of which times a launch itself and returns [us]. The three lists, in
    order; the two of the driver give the spread of one launch against the next (the control)."""
    for _ in range(10):
        call()
        driver_launch()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ours, driver, control = [], [], []
    for _ in range(repetitions):
        busy_gpu(flush)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        ours.append(start.elapsed_time(stop) * 1e3)
        for times in (driver, control):
            torch.cuda._sleep(SPIN_CYCLES)  # the driver's launch then writes the flush itself
            (launch_us,) = driver_launch()
            times.append(launch_us)
    return ours, driver, control


def back_to_back_us(call, calls):
    """Device time per call of `calls` calls with nothing between them, events around them all."""
    for _ in range(3):
        call()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(calls):
        call()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) * 1e3 / calls


def graph_back_to_back_us(call, calls):
    """Device time per call of `calls` calls captured in one CUDA graph, replayed with events
    around the replay: what a model under CUDA graphs pays, the CPU out of the way."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            call()  # warm-up on the capturing stream
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        for _ in range(calls):
            call()
    graph.replay()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    graph.replay()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) * 1e3 / calls


def host_us(call, calls=200):
    """CPU time of one call: a loop of calls, the GPU left to catch up afterwards."""
    torch.cuda.synchronize()
    begin = time.perf_counter()
    for _ in range(calls):
        call()
    elapsed = time.perf_counter() - begin
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def call_times_us(call, flush, repetitions=100, before_timing=None):
    """The CPU time of each of `repetitions` calls (after 10 untimed ones, then before_timing()),
    timed as fp8gemm_bench times a launch: the L2 flush enqueued first, so that the GPU is busy
    while the call runs and the call never waits for it."""
    for _ in range(10):
        call()
    torch.cuda.synchronize()
    if before_timing is not None:
        before_timing()
    stop = torch.cuda.Event()
    times = []
    for _ in range(repetitions):
        flush.zero_()
        begin = time.perf_counter()
        call()
        times.append((time.perf_counter() - begin) * 1e6)
        stop.record()
        stop.synchronize()
    return times


def call_host_us(call, flush):
    """The median CPU time of one call (call_times_us)."""
    return statistics.median(call_times_us(call, flush))


def host_breakdown_us(call, flush, repetitions=100):
    """The CPU time of one call (call_times_us) and the operator's clock over the same calls:
    (median call, mean call, mean C++ body, mean library launch), in us."""
    times = call_times_us(call, flush, repetitions, before_timing=lambda: torch.ops.fp8gemm.launch_clock(True))
    calls, body_ns, launch_ns = torch.ops.fp8gemm.launch_clock(True)
    assert calls == repetitions, f"the operator's clock counted {calls} calls of {repetitions}"
    return statistics.median(times), statistics.mean(times), body_ns / calls * 1e-3, launch_ns / calls * 1e-3


def driver_results(path, step):
    """fp8gemm_bench's medians per shape for the step's plain case <step folder>/<M>x<N>x<K>: the
    device time (us) and the launch's CPU time (us)."""
    if not path:
        return {}
    with open(path) as f:
        results = json.load(f)
    runs = [run for run in results["benchmarks"] if run.get("aggregate_name") == "median"]
    names = {run["run_name"].split("/")[0] for run in runs}
    # The plain case is the shortest name of the step's ("09_persistent", not "09_persistent_fast").
    plain = min((name for name in names if name.split("_")[0] == step), key=len, default=None)
    result = {}
    for run in runs:
        contender, shape = run["run_name"].split("/")[:2]
        if contender == plain and run["run_name"].count("/") == 1:
            unit = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[run["time_unit"]]
            result[shape] = {"device_us": run["real_time"] * unit, "launch_host_us": run.get("launch_host_us")}
    result["commit"] = results["context"].get("git_commit")  # the library's, as the driver recorded it
    return result


def quantized_normal(rows, k):
    """fp8gemm_bench's operand: N(0, 1) quantized per tensor to e4m3 (its amax to 448), and the
    dequantization scale."""
    x = torch.randn(rows, k, device="cuda")
    scale = x.abs().max() / torch.finfo(torch.float8_e4m3fn).max
    return (x / scale).to(torch.float8_e4m3fn), scale.float()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", default=os.environ.get("FP8GEMM_TORCH_LIB", "build/pytorch/libfp8gemm_torch.so"))
    parser.add_argument("--step", default="last", help='"last" or a step\'s number ("09")')
    parser.add_argument("--driver-json", help="fp8gemm_bench's JSON for the same step and shapes")
    parser.add_argument("--out", help="JSON file for the results")
    args = parser.parse_args()
    torch.ops.load_library(args.lib)
    driver = driver_results(args.driver_json, args.step)
    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    rows = []
    for m, n, k in SHAPES:
        a, scale_a = quantized_normal(m, k)
        w, scale_b = quantized_normal(n, k)
        b = w.t()

        def ours():
            return torch.ops.fp8gemm.mm(a, b, scale_a, scale_b, step=args.step)

        def ours_overload():  # the overload itself, skipping torch.ops' resolution of it
            return torch.ops.fp8gemm.mm.default(a, b, scale_a, scale_b, step=args.step)

        def theirs():
            return torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)

        def driver_launch():  # one launch timed by C++ as fp8gemm_bench times it
            return torch.ops.fp8gemm.driver_launch_us(a, b, scale_a, scale_b, flush, 1, step=args.step)

        shape = f"{m}x{n}x{k}"
        ours_us, driver_us, control_us = interleaved_us(ours, driver_launch, flush)
        row = {"shape": shape, "fp8gemm_us": statistics.median(ours_us), "driver_us": statistics.median(driver_us)}
        row["binding_device_us"] = row["fp8gemm_us"] - row["driver_us"]
        row["binding_device_paired_us"] = statistics.median(x - y for x, y in zip(ours_us, driver_us))
        row["control_paired_us"] = statistics.median(x - y for x, y in zip(control_us, driver_us))
        row.update({"scaled_mm_us": median_us(theirs, flush), "fp8gemm_host_us": host_us(ours),
                    "scaled_mm_host_us": host_us(theirs)})
        # Back to back, about 20 ms of calls each time, three rounds alternating the three.
        calls = max(20, min(200, int(20000 / row["driver_us"])))
        row["back_to_back_calls"] = calls
        rounds = {"fp8gemm": [], "driver": [], "scaled_mm": []}
        for _ in range(3):
            rounds["fp8gemm"].append(back_to_back_us(ours, calls))
            torch.ops.fp8gemm.driver_back_to_back_us(a, b, scale_a, scale_b, 3, step=args.step)  # warm-up
            rounds["driver"].append(torch.ops.fp8gemm.driver_back_to_back_us(a, b, scale_a, scale_b, calls,
                                                                             step=args.step))
            rounds["scaled_mm"].append(back_to_back_us(theirs, calls))
        for name, values in rounds.items():
            row[f"{name}_back_to_back_us"] = statistics.median(values)
        row["binding_back_to_back_us"] = row["fp8gemm_back_to_back_us"] - row["driver_back_to_back_us"]
        graph_calls = max(10, min(200, (1 << 31) // (2 * m * n)))  # their outputs within 2 GiB
        row["graph_calls"] = graph_calls
        row["fp8gemm_graph_us"] = graph_back_to_back_us(ours, graph_calls)
        row["scaled_mm_graph_us"] = graph_back_to_back_us(theirs, graph_calls)
        call_median, call_mean, body, launch = host_breakdown_us(ours, flush)
        row.update({"call_host_us": call_median, "call_host_mean_us": call_mean, "body_host_us": body,
                    "launch_host_us": launch, "dispatch_us": call_mean - body, "binding_cpp_us": body - launch,
                    "binding_host_us": call_mean - launch})
        row["overload_call_host_us"] = call_host_us(ours_overload, flush)
        row["scaled_mm_call_host_us"] = call_host_us(theirs, flush)
        flop = 2.0 * m * n * k
        row["fp8gemm_tflops"] = flop / row["fp8gemm_us"] * 1e-6
        row["scaled_mm_tflops"] = flop / row["scaled_mm_us"] * 1e-6
        if shape in driver:
            row["driver_json_us"] = driver[shape]["device_us"]
            row["binding_vs_driver_json_us"] = row["fp8gemm_us"] - row["driver_json_us"]
            if driver[shape]["launch_host_us"] is not None:
                row["driver_launch_host_us"] = driver[shape]["launch_host_us"]
                row["binding_vs_driver_host_us"] = row["call_host_us"] - row["driver_launch_host_us"]
        rows.append(row)
        print(shape + ": " + ", ".join(f"{key} {value:.2f}" for key, value in row.items() if key != "shape"))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "step": args.step,
                       "commit": driver.get("commit"),
                       "timing": "L2 flushed before each call (outside the events); median of 100 calls, CUDA "
                                 "events around each, 10 warm-up calls; fp8gemm_us and driver_us interleaved call by "
                                 "call; host_us: CPU time per call over a loop of 200 calls without synchronization; "
                                 "back_to_back, call_host_us and the breakdown: see the docstring",
                       "driver_json": args.driver_json, "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
