// Convolution on cuDNN (Note [GPU kernels]): cross-correlation as the CPU's im2col, groups via
// the group count, bias added and reduced by cuDNN (a bfloat16 layer's bias gradient by a kernel of
// ours). Descriptors and algorithms are a cached plan.
// Depthwise layers run their own kernels (Note [Depthwise convolution]).
#include <algorithm>
#include <vector>

#include "operator/common/pointwise_gpu.cuh"
#include "operator/convolution.h"

namespace cohort::op {
namespace {

// Algorithms needing more scratch than this are passed over for the next best.
constexpr size_t kMaxWorkspaceBytes = size_t{512} << 20;

struct ConvPlan : GpuPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t fwd{};
  cudnnConvolutionBwdDataAlgo_t bwd_data{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter{};
  size_t fwd_bytes = 0, bwd_data_bytes = 0, bwd_filter_bytes = 0;

  ~ConvPlan() override {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (bias) cudnnDestroyTensorDescriptor(bias);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
  }
};

// The first of cuDNN's heuristic ranking that runs and whose workspace (asked of cuDNN for the
// algorithm itself) fits; *bytes is that workspace. With `deterministic`, the first such of the
// algorithms that give the same bits on every run (cuDNN's backward-data algorithm 0 and
// backward-filter algorithms 0 and 3 add with atomics), and only where none is, any.
template <typename Perf, typename WorkspaceOf>
auto Choose(const std::vector<Perf>& perf, int count, bool deterministic, WorkspaceOf workspace_of,
            size_t* bytes, const char* what) -> decltype(perf[0].algo) {
  for (const bool any : {!deterministic, true}) {
    for (int i = 0; i < count; ++i) {
      size_t need = 0;
      if (perf[i].status == CUDNN_STATUS_SUCCESS &&
          (any || perf[i].determinism == CUDNN_DETERMINISTIC) &&
          workspace_of(perf[i].algo, &need) == CUDNN_STATUS_SUCCESS && need <= kMaxWorkspaceBytes) {
        *bytes = need;
        return perf[i].algo;
      }
    }
  }
  COHORT_CHECK(false) << "Convolution: cuDNN has no " << what << " algorithm within "
                      << (kMaxWorkspaceBytes >> 20) << " MiB of workspace";
  return perf[0].algo;  // not reached
}

void ChooseAlgorithms(cudnnHandle_t h, bool deterministic, ConvPlan& p) {
  int max_count = 0;
  CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max_count));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> fwd(max_count);
  int count = 0;
  CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, p.x, p.w, p.conv, p.y, max_count, &count,
                                                     fwd.data()));
  p.fwd = Choose(
      fwd, count, deterministic,
      [&](cudnnConvolutionFwdAlgo_t a, size_t* n) {
        return cudnnGetConvolutionForwardWorkspaceSize(h, p.x, p.w, p.conv, p.y, a, n);
      },
      &p.fwd_bytes, "forward");

  CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max_count));
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> data(max_count);
  CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, p.w, p.y, p.conv, p.x, max_count,
                                                          &count, data.data()));
  p.bwd_data = Choose(
      data, count, deterministic,
      [&](cudnnConvolutionBwdDataAlgo_t a, size_t* n) {
        return cudnnGetConvolutionBackwardDataWorkspaceSize(h, p.w, p.y, p.conv, p.x, a, n);
      },
      &p.bwd_data_bytes, "backward-data");

  CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max_count));
  std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> filter(max_count);
  CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, p.x, p.y, p.conv, p.w, max_count,
                                                            &count, filter.data()));
  p.bwd_filter = Choose(
      filter, count, deterministic,
      [&](cudnnConvolutionBwdFilterAlgo_t a, size_t* n) {
        return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, p.x, p.y, p.conv, p.w, a, n);
      },
      &p.bwd_filter_bytes, "backward-filter");
}

// The plan for data shape x, weight shape w (F, C/groups, kh, kw) and output shape y.
// bfloat16 and float16 layers (Notes [bfloat16 convolution], [float16 convolution]) have every
// tensor in their type and compute in float32 on the tensor cores.
std::unique_ptr<GpuPlan> MakePlan(const GpuResources::Impl& g, const Shape& x, const Shape& w,
                                  const Shape& y, const Shape& stride, const Shape& pad,
                                  const Shape& dilate, int64_t num_group, DType dtype) {
  const bool low = dtype != DType::kFloat32;
  const cudnnDataType_t type = dtype == DType::kBFloat16  ? CUDNN_DATA_BFLOAT16
                               : dtype == DType::kFloat16 ? CUDNN_DATA_HALF
                                                          : CUDNN_DATA_FLOAT;
  auto p = std::make_unique<ConvPlan>();
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->x));
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->y));
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->bias));
  CUDNN_CHECK(cudnnCreateFilterDescriptor(&p->w));
  CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&p->conv));
  SetTensor4d(p->x, x[0], x[1], x[2], x[3], type);
  SetTensor4d(p->y, y[0], y[1], y[2], y[3], type);
  SetTensor4d(p->bias, 1, y[1], 1, 1, type);
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(p->w, type, CUDNN_TENSOR_NCHW, static_cast<int>(w[0]),
                                         static_cast<int>(w[1]), static_cast<int>(w[2]),
                                         static_cast<int>(w[3])));
  // MXNet's convolution does not flip the kernel: cuDNN's cross-correlation.
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
      p->conv, static_cast<int>(pad[0]), static_cast<int>(pad[1]), static_cast<int>(stride[0]),
      static_cast<int>(stride[1]), static_cast<int>(dilate[0]), static_cast<int>(dilate[1]),
      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  // FMA math: float32 arithmetic throughout, as the CPU; TF32 tensor cores only when asked.
  CUDNN_CHECK(cudnnSetConvolutionMathType(
      p->conv, low ? CUDNN_TENSOR_OP_MATH : (g.tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH)));
  CUDNN_CHECK(cudnnSetConvolutionGroupCount(p->conv, static_cast<int>(num_group)));
  int n = 0, c = 0, h = 0, wd = 0;
  CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(p->conv, p->x, p->w, &n, &c, &h, &wd));
  COHORT_CHECK(n == y[0] && c == y[1] && h == y[2] && wd == y[3])
      << "Convolution: cuDNN computes output (" << n << "," << c << "," << h << "," << wd
      << ") for input " << x << ", the operator " << y;
  ChooseAlgorithms(g.cudnn, g.deterministic, *p);
  return p;
}

ConvPlan& PlanFor(GpuResources::Impl& g, uint64_t op, const Shape& x, const Shape& w,
                  const Shape& y, const Shape& stride, const Shape& pad, const Shape& dilate,
                  int64_t num_group, DType dtype) {
  return g.CachedPlan<ConvPlan>(op, x, static_cast<int>(dtype), [&] {
    return MakePlan(g, x, w, y, stride, pad, dilate, num_group, dtype);
  });
}

// A bfloat16 or float16 layer's bias gradient: cuDNN's cudnnConvolutionBackwardBias answers
// CUDNN_STATUS_NOT_SUPPORTED for bfloat16 (cuDNN 9 on an H100), so a block a channel sums dy over
// the samples and the plane in float32 and rounds once, as the CPU's layers.
template <typename T>
__global__ void HalfBiasGradKernel(const T* dy, T* db, int64_t batch, int64_t channels,
                                   int64_t plane, bool add) {
  const int64_t c = blockIdx.x;
  float sum = 0;
  for (int64_t i = threadIdx.x; i < batch * plane; i += blockDim.x) {
    sum += static_cast<float>(dy[(i / plane * channels + c) * plane + i % plane]);
  }
  sum = BlockAllReduce(sum, SumOp{});
  if (threadIdx.x == 0) db[c] = T((add ? static_cast<float>(db[c]) : 0.0f) + sum);
}

template <typename T>
void HalfBiasGrad(const GpuResources::Impl& g, const NDArray& dy, const NDArray& db, bool add) {
  const Shape& s = dy.shape();
  HalfBiasGradKernel<T><<<static_cast<unsigned>(s[1]), kCudaThreads, 0, g.stream>>>(
      static_cast<const T*>(dy.raw_data()), static_cast<T*>(db.raw_data()), s[0], s[1], s[2] * s[3],
      add);
  CUDA_CHECK(cudaGetLastError());
}

// The device data of a float32, bfloat16 or float16 array of a non-depthwise layer.
void* D(const NDArray& a) {
  COHORT_CHECK(a.ctx().is_gpu() && (a.dtype() == DType::kFloat32 || a.dtype() == DType::kBFloat16 ||
                                    a.dtype() == DType::kFloat16))
      << "Convolution on a GPU takes float32, bfloat16 or float16 arrays on a GPU, got "
      << a.dtype() << " on " << a.ctx();
  return a.raw_data();
}

}  // namespace

namespace {

// Note [Depthwise convolution]: one thread per output, per input gradient element and per
// weight tap, with the header's functions as on the CPU.
DepthwiseGeometry DepthwiseOf(const ConvolutionParam& p, const Shape& x, const Shape& y) {
  return {x[2],        x[3],        y[2],     y[3],     p.kernel[0], p.kernel[1],
          p.stride[0], p.stride[1], p.pad[0], p.pad[1], p.dilate[0], p.dilate[1]};
}

void DepthwiseForwardGpu(const OpContext& ctx, const ConvolutionParam& p, const NDArray& x,
                         const NDArray& w, const NDArray* b, const NDArray& y) {
  const DepthwiseGeometry g = DepthwiseOf(p, x.shape(), y.shape());
  const int64_t channels = x.shape()[1], taps = g.kh * g.kw, out_plane = g.out_h * g.out_w;
  const float* px = G(x);
  const float* pw = G(w);
  const float* pb = b ? G(*b) : nullptr;
  float* py = G(y);
  ForEach(Gpu(ctx), y.size(), [=] __device__(int64_t k) {
    const int64_t plane = k / out_plane, s = k % out_plane, c = plane % channels;
    const float v = DepthwiseOutput(g, px + plane * g.height * g.width, pw + c * taps, s / g.out_w,
                                    s % g.out_w);
    py[k] = pb ? v + pb[c] : v;
  });
}

void DepthwiseBackwardGpu(const OpContext& ctx, const ConvolutionParam& p, const NDArray& dy,
                          const NDArray& x, const NDArray& w, const std::vector<GradReq>& req,
                          const std::vector<NDArray>& grad) {
  GpuResources::Impl& gpu = Gpu(ctx);
  const DepthwiseGeometry g = DepthwiseOf(p, x.shape(), dy.shape());
  const int64_t batch = x.shape()[0], channels = x.shape()[1], taps = g.kh * g.kw;
  const int64_t in_plane = g.height * g.width, out_plane = g.out_h * g.out_w;
  const float* pdy = G(dy);
  const float* px = G(x);
  const float* pw = G(w);
  if (req[0] != GradReq::kNull) {
    const GradReq r = req[0];
    float* dx = G(grad[0]);
    ForEach(gpu, x.size(), [=] __device__(int64_t k) {
      const int64_t plane = k / in_plane, s = k % in_plane, c = plane % channels;
      AssignReq(
          r, dx, k,
          DepthwiseInputGrad(g, pdy + plane * out_plane, pw + c * taps, s / g.width, s % g.width));
    });
  }
  if (req[1] != GradReq::kNull) {  // a thread per (sample, channel, tap), then per (channel, tap)
    const GradReq r = req[1];
    float* dw = G(grad[1]);
    const int64_t cells = channels * taps;
    float* per_sample = static_cast<float*>(gpu.Workspace(batch * cells * sizeof(float)));
    ForEach(gpu, batch * cells, [=] __device__(int64_t k) {
      const int64_t n = k / cells, t = k % cells;
      per_sample[k] =
          DepthwiseWeightGrad(g, pdy, px, t / taps, t % taps / g.kw, t % g.kw, n, n + 1, channels);
    });
    ForEach(gpu, cells, [=] __device__(int64_t t) {
      AssignReq(r, dw, t, SumInOrder(per_sample + t, batch, cells));
    });
  }
  if (req.size() > 2 && req[2] != GradReq::kNull) {  // Σ over samples and the plane, in order
    const GradReq r = req[2];
    float* db = G(grad[2]);
    ForEach(gpu, channels, [=] __device__(int64_t c) {
      float sum = 0;
      for (int64_t n = 0; n < batch; ++n) {
        const float* dp = pdy + (n * channels + c) * out_plane;
        for (int64_t s = 0; s < out_plane; ++s) sum += dp[s];
      }
      AssignReq(r, db, c, sum);
    });
  }
}

}  // namespace

void ConvolutionForwardGpu(const OpContext& ctx, uint64_t op, const ConvolutionParam& param,
                           const NDArray& x, const NDArray& w, const NDArray* b, const NDArray& y) {
  if (param.IsDepthwise(x.shape()[1])) return DepthwiseForwardGpu(ctx, param, x, w, b, y);
  GpuResources::Impl& g = Gpu(ctx);
  ConvPlan& p = PlanFor(g, op, x.shape(), w.shape(), y.shape(), param.stride, param.pad,
                        param.dilate, param.num_group, x.dtype());
  const float one = 1, zero = 0;  // float blend factors for float32 and the half types alike
  void* scratch = g.Workspace(p.fwd_bytes);
  CUDNN_CHECK(cudnnConvolutionForward(g.cudnn, &one, p.x, D(x), p.w, D(w), p.conv, p.fwd, scratch,
                                      p.fwd_bytes, &zero, p.y, D(y)));
  if (b) CUDNN_CHECK(cudnnAddTensor(g.cudnn, &one, p.bias, D(*b), &one, p.y, D(y)));
}

void ConvolutionBackwardGpu(const OpContext& ctx, uint64_t op, const ConvolutionParam& param,
                            const NDArray& dy, const NDArray& x, const NDArray& w,
                            const std::vector<GradReq>& req, const std::vector<NDArray>& grad) {
  if (param.IsDepthwise(x.shape()[1])) return DepthwiseBackwardGpu(ctx, param, dy, x, w, req, grad);
  GpuResources::Impl& g = Gpu(ctx);
  ConvPlan& p = PlanFor(g, op, x.shape(), w.shape(), dy.shape(), param.stride, param.pad,
                        param.dilate, param.num_group, x.dtype());
  const bool data = req[0] != GradReq::kNull, filter = req[1] != GradReq::kNull;
  // One workspace for both: a second Workspace call could move the first one's buffer.
  const size_t bytes = std::max(data ? p.bwd_data_bytes : 0, filter ? p.bwd_filter_bytes : 0);
  void* scratch = g.Workspace(bytes);
  const float one = 1;
  if (data) {
    const float beta = BetaOf(req[0]);
    CUDNN_CHECK(cudnnConvolutionBackwardData(g.cudnn, &one, p.w, D(w), p.y, D(dy), p.conv,
                                             p.bwd_data, scratch, p.bwd_data_bytes, &beta, p.x,
                                             D(grad[0])));
  }
  if (filter) {
    const float beta = BetaOf(req[1]);
    CUDNN_CHECK(cudnnConvolutionBackwardFilter(g.cudnn, &one, p.x, D(x), p.y, D(dy), p.conv,
                                               p.bwd_filter, scratch, p.bwd_filter_bytes, &beta,
                                               p.w, D(grad[1])));
  }
  if (req.size() > 2 && req[2] != GradReq::kNull) {
    const float beta = BetaOf(req[2]);
    const bool add = req[2] == GradReq::kAdd;
    if (dy.dtype() == DType::kBFloat16) {
      HalfBiasGrad<bfloat16>(g, dy, grad[2], add);
    } else if (dy.dtype() == DType::kFloat16) {
      HalfBiasGrad<float16>(g, dy, grad[2], add);
    } else {
      CUDNN_CHECK(
          cudnnConvolutionBackwardBias(g.cudnn, &one, p.y, D(dy), &beta, p.bias, D(grad[2])));
    }
  }
}

}  // namespace cohort::op
