// oneDNN convolution: cached primitives, reorders between NCHW and oneDNN's layouts
// (Note [oneDNN convolution]).
#include "operator/dnnl_conv.h"

#include <omp.h>

#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "operator/common/gemm_lowp.h"

namespace cohort::op {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

const dnnl::engine& Engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// An array as the caller holds it (plain layout, pointer set per call) and as a primitive wants
// it: the same memory when the layouts agree, else a buffer of its own and a reorder.
class Operand {
 public:
  Operand(const memory::desc& plain, const memory::desc& wanted)
      : user_(plain, Engine(), DNNL_MEMORY_NONE) {
    if (wanted == plain) {
      inner_ = user_;
      return;
    }
    inner_ = memory(wanted, Engine());
    to_inner_.emplace(user_, inner_);
    to_user_.emplace(inner_, user_);
  }

  const memory& inner() const { return inner_; }
  // Before a primitive reads it.
  void In(dnnl::stream& stream, const void* data) {
    user_.set_data_handle(const_cast<void*>(data));
    if (to_inner_) to_inner_->execute(stream, user_, inner_);
  }
  // After a primitive wrote it.
  void Out(dnnl::stream& stream, float* data) {
    user_.set_data_handle(data);
    if (to_user_) to_user_->execute(stream, inner_, user_);
  }
  // Where a primitive writing it can write straight to the caller's array.
  void Bind(float* data) { user_.set_data_handle(data); }

 private:
  memory user_, inner_;
  std::optional<dnnl::reorder> to_inner_, to_user_;
};

memory::dims Dims(std::initializer_list<int64_t> v) { return memory::dims(v.begin(), v.end()); }

// The three primitives of one shape with their operands, made on first use.
struct Conv {
  explicit Conv(const DnnlConvShape& s) : shape(s), stream(Engine()) {
    // The inputs of each call in the layer's type, the results in float32. A bfloat16 layer
    // computes in bfloat16 where that pays on this CPU, else in float32: its inputs widen in the
    // reorders into the primitives' layouts (Note [bfloat16 convolution]).
    using dt = memory::data_type;
    const dt low = s.bfloat16 ? dt::bf16 : dt::f32;
    const dt compute = s.bfloat16 && BFloat16ProductsPayHere() ? dt::bf16 : dt::f32;
    const memory::dims src_dims = Dims({s.batch, s.in_channels, s.height, s.width});
    const memory::dims wei_dims = Dims({s.out_channels, s.in_channels, s.kh, s.kw});
    const memory::dims dst_dims = Dims({s.batch, s.out_channels, s.out_h, s.out_w});
    const memory::desc src(src_dims, low, Tag::nchw), src_f32(src_dims, dt::f32, Tag::nchw);
    const memory::desc wei(wei_dims, low, Tag::oihw), wei_f32(wei_dims, dt::f32, Tag::oihw);
    const memory::desc dst(dst_dims, low, Tag::nchw), dst_f32(dst_dims, dt::f32, Tag::nchw);
    auto any = [&](const memory::desc& d) {  // the results' type kept, the inputs' computed
      return memory::desc(d.dims(), d.data_type() == dt::f32 ? dt::f32 : compute, Tag::any);
    };
    const memory::dims strides = Dims({s.sh, s.sw}), pads = Dims({s.ph, s.pw});
    const memory::dims dilates = Dims({s.dh - 1, s.dw - 1});
    const dnnl::convolution_forward::primitive_desc fwd_pd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                        dnnl::algorithm::convolution_direct, any(src), any(wei),
                                        any(dst_f32), strides, dilates, pads, pads),
        Engine());
    fwd.emplace(fwd_pd);
    fwd_x.emplace(src, fwd_pd.src_desc());
    fwd_w.emplace(wei, fwd_pd.weights_desc());
    fwd_y.emplace(dst_f32, fwd_pd.dst_desc());

    const dnnl::convolution_backward_data::primitive_desc data_pd(
        dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, any(src_f32),
                                              any(wei), any(dst), strides, dilates, pads, pads),
        Engine(), fwd_pd);
    data.emplace(data_pd);
    data_dy.emplace(dst, data_pd.diff_dst_desc());
    data_w.emplace(wei, data_pd.weights_desc());
    data_dx.emplace(src_f32, data_pd.diff_src_desc());

    const dnnl::convolution_backward_weights::primitive_desc weights_pd(
        dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, any(src),
                                                 any(wei_f32), any(dst), strides, dilates, pads,
                                                 pads),
        Engine(), fwd_pd);
    weights.emplace(weights_pd);
    weights_x.emplace(src, weights_pd.src_desc());
    weights_dy.emplace(dst, weights_pd.diff_dst_desc());
    weights_dw.emplace(wei_f32, weights_pd.diff_weights_desc());
  }

  DnnlConvShape shape;
  dnnl::stream stream;
  std::optional<dnnl::convolution_forward> fwd;
  std::optional<dnnl::convolution_backward_data> data;
  std::optional<dnnl::convolution_backward_weights> weights;
  std::optional<Operand> fwd_x, fwd_w, fwd_y, data_dy, data_w, data_dx, weights_x, weights_dy,
      weights_dw;
};

// This thread's primitives for the shape (a few shapes per thread: a linear search).
Conv& ConvFor(const DnnlConvShape& s) {
  thread_local std::vector<std::unique_ptr<Conv>> cache;
  thread_local const bool one_thread = (omp_set_num_threads(1), true);  // Note [oneDNN convolution]
  (void)one_thread;
  for (const auto& conv : cache) {
    if (conv->shape == s) return *conv;
  }
  try {
    cache.push_back(std::make_unique<Conv>(s));
  } catch (const dnnl::error& e) {
    COHORT_THROW() << "oneDNN convolution " << s.in_channels << "->" << s.out_channels
                   << " channels, kernel " << s.kh << "x" << s.kw
                   << (s.bfloat16 ? " in bfloat16" : "") << ": " << e.what();
  }
  return *cache.back();
}

}  // namespace

bool DnnlConvSuits(int64_t in_channels, int64_t out_channels, int64_t groups) {
  return groups == 1 && in_channels % 16 == 0 && out_channels % 16 == 0;
}

void DnnlConvForward(const DnnlConvShape& s, const void* x, const void* w, float* y) {
  Conv& c = ConvFor(s);
  c.fwd_x->In(c.stream, x);
  c.fwd_w->In(c.stream, w);
  c.fwd_y->Bind(y);
  c.fwd->execute(c.stream, {{DNNL_ARG_SRC, c.fwd_x->inner()},
                            {DNNL_ARG_WEIGHTS, c.fwd_w->inner()},
                            {DNNL_ARG_DST, c.fwd_y->inner()}});
  c.fwd_y->Out(c.stream, y);
  c.stream.wait();
}

void DnnlConvBackwardData(const DnnlConvShape& s, const void* dy, const void* w, float* dx,
                          bool add) {
  COHORT_CHECK(!add || !s.bfloat16) << "oneDNN convolution: bfloat16 callers add themselves";
  Conv& c = ConvFor(s);
  c.data_dy->In(c.stream, dy);
  c.data_w->In(c.stream, w);
  // Accumulating needs the result apart from dx: this thread's buffer, added below.
  thread_local std::vector<float> sum;
  const int64_t n = s.batch * s.in_channels * s.height * s.width;
  if (add && static_cast<int64_t>(sum.size()) < n) sum.resize(n);
  float* out = add ? sum.data() : dx;
  c.data_dx->Bind(out);
  c.data->execute(c.stream, {{DNNL_ARG_DIFF_DST, c.data_dy->inner()},
                             {DNNL_ARG_WEIGHTS, c.data_w->inner()},
                             {DNNL_ARG_DIFF_SRC, c.data_dx->inner()}});
  c.data_dx->Out(c.stream, out);
  c.stream.wait();
  if (add) {
    for (int64_t i = 0; i < n; ++i) dx[i] += out[i];
  }
}

void DnnlConvBackwardWeights(const DnnlConvShape& s, const void* x, const void* dy, float* dw) {
  Conv& c = ConvFor(s);
  c.weights_x->In(c.stream, x);
  c.weights_dy->In(c.stream, dy);
  c.weights_dw->Bind(dw);
  c.weights->execute(c.stream, {{DNNL_ARG_SRC, c.weights_x->inner()},
                                {DNNL_ARG_DIFF_DST, c.weights_dy->inner()},
                                {DNNL_ARG_DIFF_WEIGHTS, c.weights_dw->inner()}});
  c.weights_dw->Out(c.stream, dw);
  c.stream.wait();
}

}  // namespace cohort::op
