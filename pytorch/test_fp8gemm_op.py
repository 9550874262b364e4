"""Tests of torch.ops.fp8gemm.mm on a GPU (pytest): against an FP64 computation in torch and
against torch._scaled_mm, every scale granularity, bad inputs, and CUDA-graph capture.

    FP8GEMM_TORCH_LIB=build/pytorch/libfp8gemm_torch.so python3 -m pytest pytorch/test_fp8gemm_op.py

Skipped where torch has no CUDA device or the library is not built.
"""
import math
import os

import pytest
import torch

LIB = os.environ.get("FP8GEMM_TORCH_LIB", os.path.join(os.path.dirname(__file__), "..", "build", "pytorch",
                                                       "libfp8gemm_torch.so"))
if not torch.cuda.is_available():
    pytest.skip("no CUDA device for torch", allow_module_level=True)
if not os.path.exists(LIB):
    pytest.skip(f"{LIB} not built (configure with PyTorch: pytorch/CMakeLists.txt)", allow_module_level=True)
torch.ops.load_library(LIB)
mm = torch.ops.fp8gemm.mm

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
# The suite's shapes: the ladder's, the decode shape, ragged M, N and K (rows still 16-byte aligned).
SHAPES = [(4096, 4096, 4096), (64, 2112, 7168), (255, 1000, 1008), (37, 1000, 1008), (128, 2048, 8192)]


def quantize(x, dtype, rows_per_scale, cols_per_scale):
    """x (R x K, float32) as FP8 codes and float32 dequantization scales, one per block of
    rows_per_scale x cols_per_scale (the whole matrix: per tensor)."""
    r, k = x.shape
    rb, cb = min(rows_per_scale, r), min(cols_per_scale, k)
    blocks = x.new_zeros(math.ceil(r / rb), math.ceil(k / cb))
    padded = torch.nn.functional.pad(x.abs(), (0, blocks.shape[1] * cb - k, 0, blocks.shape[0] * rb - r))
    amax = padded.reshape(blocks.shape[0], rb, blocks.shape[1], cb).amax(dim=(1, 3)).clamp(min=1e-12)
    scales = amax / torch.finfo(dtype).max
    expanded = scales.repeat_interleave(rb, 0)[:r].repeat_interleave(cb, 1)[:, :k]
    return (x / expanded).to(dtype), scales


def dequantized(codes, scales, rows_per_scale, cols_per_scale):
    r, k = codes.shape
    rb, cb = min(rows_per_scale, r), min(cols_per_scale, k)
    expanded = scales.double().repeat_interleave(rb, 0)[:r].repeat_interleave(cb, 1)[:, :k]
    return codes.double() * expanded


# granularity name -> (A's block of rows x cols, B's, the scales' shapes as the operator takes them)
GRANULARITIES = {
    "tensor": ((1 << 30, 1 << 30), (1 << 30, 1 << 30)),
    "row": ((1, 1 << 30), (1, 1 << 30)),
    "block": ((1, 128), (128, 128)),
}


# docs/tolerances.md's bounds of the promoted accumulation with FP32 output (every K of the suite
# is past the promotion interval of 128): per element, a coefficient of S = sum |a_k b_k| of the
# dequantized operands; over the matrix, rho = ||y - reference|| / ||reference||.
PROMOTED_ELEMENT_BOUND = 1.64e-2
PROMOTED_RHO_BOUND = 1.38e-3
GELU_ERF_MAX_SLOPE = 1.129  # max of d/dx x * Phi(x): an error in x moves GELU(x) at most this much


def problem(m, n, k, granularity, seed=1):
    """FP8 operands quantized at a granularity, their scales shaped as torch._scaled_mm takes them,
    the FP64 product of the dequantized operands and S, the sum of |products| of each element."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=g)
    w = torch.randn(n, k, device="cuda", generator=g)  # B as N x K row-major: b = w.t()
    (ar, ac), (br, bc) = GRANULARITIES[granularity]
    qa, sa = quantize(a, E4M3, ar, ac)
    qw, sw = quantize(w, E4M3, br, bc)
    da, dw = dequantized(qa, sa, ar, ac), dequantized(qw, sw, br, bc)
    reference, magnitude = da @ dw.t(), da.abs() @ dw.abs().t()
    if granularity == "row":
        sa, sw = sa.reshape(m, 1), sw.reshape(1, n)  # torch._scaled_mm's row-wise shapes
    if granularity == "block":
        # torch._scaled_mm's blockwise tensors (cuBLASLt's layout): A's (M, K/128) M-contiguous; B's
        # indexed like b, (K/128 padded to a multiple of 4, N/128), K-contiguous.
        sa = sa.t().contiguous().t()
        sw = torch.nn.functional.pad(sw, (0, -sw.shape[1] % 4)).t()
    return qa, qw.t(), sa, sw, reference, magnitude


def assert_within_bounds(y, expected, magnitude, slope=1.0, product=None):
    """y within `slope` times the promoted bounds of the expected values (FP32 output); rho is
    taken relative to the product the bounds are about (the expected values themselves, or what
    went into an activation)."""
    error = (y.double() - expected).abs()
    worst = (error / magnitude.clamp(min=1e-30)).max().item()
    assert worst <= slope * PROMOTED_ELEMENT_BOUND, f"an element is off by {worst:.3g} of its S"
    rho = (error.norm() / (expected if product is None else product).norm()).item()
    assert rho <= slope * PROMOTED_RHO_BOUND, f"rho = {rho:.3g}"
    return rho


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("granularity", list(GRANULARITIES))
def test_matches_fp64(shape, granularity):
    m, n, k = shape
    a, b, sa, sb, reference, magnitude = problem(m, n, k, granularity)
    y = mm(a, b, sa, sb, out_dtype=torch.float32)
    assert y.shape == (m, n) and y.dtype == torch.float32
    assert_within_bounds(y, reference, magnitude)


@pytest.mark.parametrize("shape", SHAPES[:3] + SHAPES[4:], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("granularity", list(GRANULARITIES))
def test_matches_scaled_mm(shape, granularity):
    # The same tensors to both: a model swaps one call for the other.
    m, n, k = shape
    a, b, sa, sb, *_ = problem(m, n, k, granularity)
    if granularity == "tensor":
        sa, sb = sa.reshape(()), sb.reshape(())
    try:
        theirs = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16).float()
    except RuntimeError as refusal:  # a combination this torch or its cuBLASLt does not offer
        pytest.skip(f"torch._scaled_mm refuses {granularity} scales at {m}x{n}x{k}: {refusal}")
    ours = mm(a, b, sa, sb).float()
    # Both round to BF16: at most a few BF16 ulps apart.
    assert torch.allclose(ours, theirs, rtol=2 ** -6, atol=1e-3 * theirs.abs().max().item())


def test_bias_and_gelu():
    m, n, k = 64, 2112, 7168
    a, b, sa, sb, reference, magnitude = problem(m, n, k, "tensor")
    bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = mm(a, b, sa, sb, bias=bias, activation="gelu_erf", out_dtype=torch.float32)
    before = reference + bias.double()
    expected = torch.nn.functional.gelu(before, approximate="none")
    # The GEMM's bounds, through GELU's steepest slope (the bias is exact in FP32).
    assert_within_bounds(y, expected, magnitude, slope=GELU_ERF_MAX_SLOPE, product=before)


def test_wrong_dtype_is_refused():
    a, b, sa, sb, *_ = problem(128, 128, 128, "tensor")
    with pytest.raises(RuntimeError, match="float8_e4m3fn or torch.float8_e5m2"):
        mm(a.to(torch.bfloat16), b, sa, sb)


def test_wrong_device_is_refused():
    a, b, sa, sb, *_ = problem(128, 128, 128, "tensor")
    with pytest.raises(RuntimeError, match="must be a CUDA tensor"):
        mm(a.cpu(), b, sa, sb)


def test_row_major_b_is_refused():
    a, b, sa, sb, *_ = problem(128, 128, 128, "tensor")
    with pytest.raises(RuntimeError, match="column-major"):
        mm(a, b.contiguous(), sa, sb)


def test_misaligned_rows_are_refused_by_a_step_that_reads_them_in_place():
    # K = 100: rows of 100 bytes, not on 16-byte boundaries. Step 09 reads A and B in place
    # through the TMA, which needs them there; it refuses, naming the constraint.
    a, b, sa, sb, *_ = problem(64, 64, 100, "tensor")
    with pytest.raises(RuntimeError, match="16"):
        mm(a, b, sa, sb, step="09")


def test_misaligned_rows_run_on_the_last_step():
    # The last step takes rows anywhere (step 10 on: A and B copied to aligned rows first).
    m, n, k = 64, 64, 100
    a, b, sa, sb, reference, magnitude = problem(m, n, k, "tensor")
    y = mm(a, b, sa, sb, out_dtype=torch.float32)
    assert_within_bounds(y, reference, magnitude)


def test_wrong_scale_shape_is_refused():
    a, b, sa, sb, *_ = problem(128, 256, 512, "tensor")
    with pytest.raises(RuntimeError, match="scale_a has shape"):
        mm(a, b, torch.ones(3, 3, device="cuda"), sb)
    # B's blocks the other way round (N blocks x K blocks): refused, naming the shape it takes.
    with pytest.raises(RuntimeError, match=r"scale_b has shape .*\(4, 2\)"):
        mm(a, b, sa, torch.ones(2, 4, device="cuda"))


def test_cuda_graph_capture():
    m, n, k = 64, 2112, 7168
    a, b, sa, sb, *_ = problem(m, n, k, "tensor")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        expected = mm(a, b, sa, sb)  # warm-up on the capturing stream: one-time allocations happen here
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        captured = mm(a, b, sa, sb)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(captured, expected)


def test_readme_example_runs_as_written():
    """README.md's "Use it from your code" example, run as printed (the library path aside)."""
    readme = open(os.path.join(os.path.dirname(__file__), "..", "README.md")).read()
    section = readme[readme.index("## Use it from your code"):]
    example = section[section.index("```python") + len("```python"):]
    example = example[:example.index("```")]
    namespace = {}
    exec(example.replace('"build/pytorch/libfp8gemm_torch.so"', repr(LIB)), namespace)
    y = namespace["y"]
    assert y.shape == (4096, 2048) and y.dtype == torch.bfloat16 and torch.isfinite(y).all()


def test_the_benchmarks_driver_launches_time_the_same_gemm():
    """bench_fp8gemm_op.py's C++ timing of the library's launch (driver_launch_us) and its loop of
    launches (driver_back_to_back_us) run the GEMM mm runs: positive times, one per launch, and
    bad arguments refused with mm's messages."""
    a, b, sa, sb, *_ = problem(128, 256, 512, "tensor")
    flush = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
    times = torch.ops.fp8gemm.driver_launch_us(a, b, sa, sb, flush, 3)
    assert len(times) == 3 and all(0 < t < 1e6 for t in times)
    assert 0 < torch.ops.fp8gemm.driver_back_to_back_us(a, b, sa, sb, 5) < 1e6
    with pytest.raises(RuntimeError, match="column-major"):
        torch.ops.fp8gemm.driver_launch_us(a, b.contiguous(), sa, sb, flush, 1)
    with pytest.raises(RuntimeError, match="launches must be positive"):
        torch.ops.fp8gemm.driver_back_to_back_us(a, b, sa, sb, 0)
