//===- bench/ops/bench_ops.cpp - The nn library against oneDNN at model shapes ----------------===//
//
// bench_ops KERNEL_DIR [--threads=1,2] [--reps=N] [--ops=a,b] [--tuned=DIR] [--check-only]:
// times the standard library's nn functions (objects made by `tdslc stdlib/nn.tdsl --func F
// -D F.C=V ... --emit=obj -O3`, loaded from KERNEL_DIR/F[.V...].so) against the matching oneDNN
// primitive, in one process, alternating call by call:
//   conv       nn.conv2d<S, P> on ResNet-18's convolutions (7x7, 3x3, 1x1) / convolution
//   convpack   the same layers with nn.conv2d_packed<S, P, K, KV, WT>, the weight packed once by
//              nn.conv2d_pack_weight<KV> before timing (what graph.pack-weights and
//              graph.fold-calls do at compile time; untimed), oneDNN's side as in conv
//                                                                        / convolution
//   tunedconv  with --tuned=DIR only: the same layers with the copies of nn.conv2d_packed that
//              tdsl-tune tuned in ResNet-18 (DIR/TASK.so, made by bench/ops/tuned_convs.py from
//              the tuner's work folder and -o file)                     / convolution
//   dwconv     nn.conv2d_ext with groups = channels on MobileNetV2's 3x3 depthwise
//              convolutions                                              / grouped convolution
//   depthwise  the same layers as graph.pack-weights routes them: nn.conv2d_depthwise<1, 3>
//              (stride 1), else nn.conv2d_depthwise_strided<S, 1, 3>
//                                                                        / grouped convolution
//   linear     nn.linear on BERT-base's and ResNet-18's dense layers      / inner product
//   maxpool    nn.max_pool2d<3, 2, 1> (ResNet-18's stem pool)             / pooling (max)
//   avgpool    nn.avg_pool2d (a 3x3 s2 pool), the global pools of ResNet-18 and MobileNetV2
//              through nn.global_avg_pool2d (graph.pack-weights' route for avg_pool2d<7, 1, 0>
//              on 7 x 7), nn.mean on [C, H * W] (tdsl-import's GlobalAveragePool) and
//              nn.avg_pool2d<7, 1, 0> called directly
//                                                                        / pooling (avg, pad in)
//   softmax    nn.softmax on BERT-base's attention scores (12 heads x 128 rows x 128)
//                                                                        / softmax
//   layernorm  nn.layer_norm on 128 x 768                                / layer normalization
//   eltwise    nn.relu (ResNet-18's stem activation), nn.gelu (BERT's FFN)  / eltwise
// Both sides take and give plain formats (NCHW, OIHW, row-major matrices): where oneDNN works
// in its own formats (format_tag::any; nChw8c for pooling) the reorders to and from them are
// timed with it, every call (the weights too, as TDSL packs them every call). Prints the rate
// (median of the samples): GFLOP/s for convolutions and inner products, with the share of the
// measured FMA peak of one core x threads (the conv rows' format); GB/s of input + output for
// the others, marked "GB/s". The ratio is TDSL / oneDNN (> 1: TDSL is faster). --check-only
// compares the outputs (max relative difference) and times nothing.
//
//===--------------------------------------------------------------------------------------===//
#include <oneapi/dnnl/dnnl.hpp>

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The f32 FMA peak of one core (GFLOP/s): 12 independent AVX2 FMA chains, best of 5 runs (as
/// bench/bench_matmul.cpp measures it).
// 12 independent FMA chains of VEC (8 or 16 lanes) for `iters` rounds: GFLOP/s.
#define TDSL_OPS_FMA_PEAK(NAME, TARGET, VEC, LANES, FMADD, SET1)                                   \
  __attribute__((target(TARGET))) double NAME() {                                                  \
    double best = 0;                                                                               \
    float sink = 0;                                                                                \
    for (int run = 0; run < 5; ++run) {                                                            \
      VEC a = SET1(1.0f), b = SET1(0.999999f);                                                     \
      VEC c[12];                                                                                   \
      for (int i = 0; i < 12; ++i)                                                                 \
        c[i] = SET1(float(i));                                                                     \
      const int64_t iters = 2000000;                                                               \
      double t0 = seconds();                                                                       \
      /* Unrolled, so that the 12 chains live in registers (not in the array). */                  \
      for (int64_t i = 0; i < iters; ++i) {                                                        \
        _Pragma("GCC unroll 12") for (int j = 0; j < 12; ++j) c[j] = FMADD(c[j], b, a);            \
      }                                                                                            \
      double t = seconds() - t0;                                                                   \
      for (int j = 0; j < 12; ++j)                                                                 \
        sink += reinterpret_cast<const float *>(&c[j])[0];                                         \
      best = std::max(best, double(iters) * 12 * 2 * LANES / t * 1e-9);                            \
    }                                                                                              \
    if (sink == 12345.0f)                                                                          \
      std::printf(" ");                                                                            \
    return best;                                                                                   \
  }
TDSL_OPS_FMA_PEAK(fmaPeak256, "avx2,fma", __m256, 8, _mm256_fmadd_ps, _mm256_set1_ps)
TDSL_OPS_FMA_PEAK(fmaPeak512, "avx512f", __m512, 16, _mm512_fmadd_ps, _mm512_set1_ps)

/// The f32 FMA peak of one core at the widest vector width the CPU has.
double fmaPeak() { return __builtin_cpu_supports("avx512f") ? fmaPeak512() : fmaPeak256(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// The kernels, loaded once per file.
void *kernel(const std::string &dir, const std::string &file, const char *symbol) {
  static std::map<std::string, void *> loaded;
  std::string path = dir + "/" + file + ".so";
  void *&h = loaded[path];
  if (!h)
    h = dlopen(path.c_str(), RTLD_NOW);
  void *fn = h ? dlsym(h, symbol) : nullptr;
  if (!fn) {
    std::fprintf(stderr, "bench_ops: cannot load %s from %s: %s\n", symbol, path.c_str(),
                 dlerror());
    std::exit(1);
  }
  return fn;
}

void check(int32_t rc, const char *what) {
  if (rc != 0) {
    std::fprintf(stderr, "bench_ops: %s failed\n", what);
    std::exit(1);
  }
}

/// One oneDNN primitive with plain-format user memories; the arguments in `any` format get a
/// reorder from (inputs) or to (outputs) the user memory, run in every call.
struct OneDnn {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::primitive prim;
  std::unordered_map<int, dnnl::memory> args;
  std::vector<std::pair<dnnl::memory, dnnl::memory>> in, out; // (user, primitive) reorders

  dnnl::memory user(const dnnl::memory::dims &d, tag t, float *p) {
    return dnnl::memory({d, dt::f32, t}, eng, p);
  }
  /// Binds argument `arg` (the primitive wants `want`) to the user memory `u`.
  void bind(int arg, const dnnl::memory::desc &want, const dnnl::memory &u, bool output) {
    if (want == u.get_desc()) {
      args[arg] = u;
      return;
    }
    dnnl::memory m(want, eng);
    args[arg] = m;
    (output ? out : in).push_back({u, m});
  }
  void run() {
    for (auto &r : in)
      dnnl::reorder(r.first, r.second).execute(strm, r.first, r.second);
    prim.execute(strm, args);
    for (auto &r : out)
      dnnl::reorder(r.second, r.first).execute(strm, r.second, r.first);
    strm.wait();
  }
};

struct Options {
  std::string dir;
  std::string tuned; ///< --tuned=DIR: tdsl-tune's convolutions (tunedconv)
  std::vector<int> threads{1, 2};
  int reps = 20;
  bool checkOnly = false;
  std::vector<std::string> ops;
  double peak = 0;
  int failures = 0;
  int t = 1;
};

std::mt19937 rng(0);

std::vector<float> random(size_t n, float lo = -1, float hi = 1) {
  std::uniform_real_distribution<float> uni(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = uni(rng);
  return v;
}

/// Checks y against yref, then (unless --check-only) times tdsl and ref alternately and prints
/// a row. `work` is FLOPs when `flop`, else bytes.
void measure(Options &o, const std::string &name, const std::function<void()> &tdsl,
             const std::function<void()> &ref, const std::vector<float> &y,
             const std::vector<float> &yref, double work, bool flop) {
  tdsl();
  ref.operator()();
  double worst = 0;
  for (size_t i = 0; i < y.size(); ++i)
    worst = std::max(worst, std::fabs(double(y[i]) - yref[i]) / (1 + std::fabs(yref[i])));
  if (!(worst <= 1e-4)) {
    std::printf("MISMATCH %s (%d threads): max relative difference %g\n", name.c_str(), o.t, worst);
    ++o.failures;
  } else if (o.checkOnly) {
    std::printf("MATCH %s (%d threads)\n", name.c_str(), o.t);
  }
  if (o.checkOnly)
    return;
  // Calls per sample: enough for about a millisecond, so that short operators are not timed
  // at the clock's resolution; samples alternate between the two sides.
  double t0 = seconds();
  tdsl();
  ref();
  double once = std::max(seconds() - t0, 1e-7);
  int inner = std::max(1, int(2e-3 / once));
  std::vector<double> ta, tb;
  for (int rep = 0; rep < o.reps; ++rep) {
    double s0 = seconds();
    for (int i = 0; i < inner; ++i)
      tdsl();
    double s1 = seconds();
    for (int i = 0; i < inner; ++i)
      ref();
    double s2 = seconds();
    ta.push_back((s1 - s0) / inner);
    tb.push_back((s2 - s1) / inner);
  }
  double ga = work / median(ta) * 1e-9, gb = work / median(tb) * 1e-9;
  if (flop)
    std::printf("%-22s %10.1f %10.1f %7.2fx %8.0f%%\n", name.c_str(), ga, gb, ga / gb,
                100 * ga / (o.peak * o.t));
  else
    std::printf("%-22s %10.1f %10.1f %7.2fx %9s GB/s\n", name.c_str(), ga, gb, ga / gb, "-");
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// Convolutions

using ConvFn = int32_t (*)(const float *, const float *, float *, int64_t, int64_t, int64_t,
                           int64_t, int64_t, int64_t, int64_t);
// conv2d_ext has one shape variable more: CG, the input channels per group.
using ConvExtFn = int32_t (*)(const float *, const float *, float *, int64_t, int64_t, int64_t,
                              int64_t, int64_t, int64_t, int64_t, int64_t);

struct Conv {
  const char *name;
  int64_t c, h, k, r, s, p;
};

// ResNet-18's convolutions at batch 1: the 7x7 stem, the 3x3 and the 1x1 layers.
const Conv kResNet[] = {
    {"conv1 7x7 s2", 3, 224, 64, 7, 2, 3},         {"layer1 3x3", 64, 56, 64, 3, 1, 1},
    {"layer2.0 3x3 s2", 64, 56, 128, 3, 2, 1},     {"layer2 3x3", 128, 28, 128, 3, 1, 1},
    {"layer2 down 1x1 s2", 64, 56, 128, 1, 2, 0},  {"layer3.0 3x3 s2", 128, 28, 256, 3, 2, 1},
    {"layer3 3x3", 256, 14, 256, 3, 1, 1},         {"layer3 down 1x1 s2", 128, 28, 256, 1, 2, 0},
    {"layer4.0 3x3 s2", 256, 14, 512, 3, 2, 1},    {"layer4 3x3", 512, 7, 512, 3, 1, 1},
    {"layer4 down 1x1 s2", 256, 14, 512, 1, 2, 0},
};

// MobileNetV2's 3x3 depthwise convolutions at batch 1 (channels, size, stride), padding 1.
const Conv kMobileNet[] = {
    {"dw 32@112", 32, 112, 32, 3, 1, 1},     {"dw 96@112 s2", 96, 112, 96, 3, 2, 1},
    {"dw 144@56", 144, 56, 144, 3, 1, 1},    {"dw 144@56 s2", 144, 56, 144, 3, 2, 1},
    {"dw 192@28", 192, 28, 192, 3, 1, 1},    {"dw 192@28 s2", 192, 28, 192, 3, 2, 1},
    {"dw 384@14", 384, 14, 384, 3, 1, 1},    {"dw 576@14", 576, 14, 576, 3, 1, 1},
    {"dw 576@14 s2", 576, 14, 576, 3, 2, 1}, {"dw 960@7", 960, 7, 960, 3, 1, 1},
};

// conv2d_depthwise has no K (= C) and no R, Q (the constant KS).
using ConvDwFn = int32_t (*)(const float *, const float *, float *, int64_t, int64_t, int64_t,
                             int64_t);

// A tuned copy at static shapes takes no shape arguments.
using TunedConvFn = int32_t (*)(const float *, const float *, float *);
// conv2d_packed has the packed weight's block count KB in place of K.
using PackFn = int32_t (*)(const float *, float *, int64_t, int64_t, int64_t, int64_t);
// graph.pack-weights' channel block: --pack-block, by default the configure-time choice for the
// host (TDSL_OPS_PACK_BLOCK, bench/ops/CMakeLists.txt).
#ifndef TDSL_OPS_PACK_BLOCK
#define TDSL_OPS_PACK_BLOCK 8
#endif
int64_t kPackBlock = TDSL_OPS_PACK_BLOCK;

/// A convolution, depthwise when `depthwise` (groups = channels, weights [K, 1, R, R]: with
/// `packed`, nn.conv2d_depthwise[_strided], else nn.conv2d_ext); with `packed` and not `depthwise`,
/// nn.conv2d_packed on the weight packed once (untimed); with `tuned` too, the copy of it at the
/// layer's shapes that tdsl-tune tuned in a model (--tuned=DIR: DIR/TASK.so, TASK as the graph
/// names it, `nn_conv2d_packed_S_P_K_KV_WT_1xCxHxWxKBxRxR`, taking x, the packed weight, y).
void benchConv(Options &o, const Conv &l, bool depthwise, bool packed = false, bool tuned = false) {
  int64_t oh = (l.h + 2 * l.p - l.r) / l.s + 1, cg = depthwise ? 1 : l.c;
  int64_t kb = (l.k + kPackBlock - 1) / kPackBlock;
  std::string sp = std::to_string(l.s) + "." + std::to_string(l.p);
  bool dw3 = depthwise && packed;
  // graph.pack-weights' choice: conv2d_depthwise at stride 1, else conv2d_depthwise_strided.
  bool rows = l.s == 1;
  // Its register tile width for conv2d_packed (graph::convolutionTileWidth): 14 columns on
  // 32-channel blocks where 14 divides the output width and the window is not 1x1, else 7.
  int64_t wt = kPackBlock >= 32 && l.r > 1 && oh % 14 == 0 ? 14 : 7;
  std::string dwName = rows ? "conv2d_depthwise" : "conv2d_depthwise_strided";
  std::string file = dw3 ? dwName + (rows ? "" : "." + std::to_string(l.s)) + "." +
                               std::to_string(l.p) + "." + std::to_string(l.r)
                     : depthwise ? "conv2d_ext." + std::to_string(l.s) + "." + std::to_string(l.s) +
                                       ".1.1.1.1.1.1." + std::to_string(l.c)
                     : packed ? "conv2d_packed." + sp + "." + std::to_string(l.k) + "." +
                                    std::to_string(kPackBlock) + "." + std::to_string(wt)
                              : "conv2d." + sp;
  std::string task = "nn_conv2d_packed_" + std::to_string(l.s) + "_" + std::to_string(l.p) + "_" +
                     std::to_string(l.k) + "_" + std::to_string(kPackBlock) + "_" +
                     std::to_string(wt) + "_1x" + std::to_string(l.c) + "x" + std::to_string(l.h) +
                     "x" + std::to_string(l.h) + "x" + std::to_string(kb) + "x" +
                     std::to_string(l.r) + "x" + std::to_string(l.r);
  void *fn = tuned ? kernel(o.tuned, task, task.c_str())
                   : kernel(o.dir, file,
                            dw3         ? dwName.c_str()
                            : depthwise ? "conv2d_ext"
                            : packed    ? "conv2d_packed"
                                        : "conv2d");
  std::vector<float> x = random(l.c * l.h * l.h), w = random(l.k * cg * l.r * l.r),
                     y(l.k * oh * oh), yref(y.size());
  std::vector<float> wp;
  if (packed && !depthwise) {
    wp.resize(kb * kPackBlock * l.c * l.r * l.r);
    auto pack = reinterpret_cast<PackFn>(
        kernel(o.dir, "conv2d_pack_weight." + std::to_string(kPackBlock), "conv2d_pack_weight"));
    check(pack(w.data(), wp.data(), l.k, l.c, l.r, l.r), "conv2d_pack_weight");
  }
  OneDnn ref;
  dnnl::memory::dims xd{1, l.c, l.h, l.h}, yd{1, l.k, oh, oh};
  dnnl::memory::dims wd =
      depthwise ? dnnl::memory::dims{l.c, 1, 1, l.r, l.r} : dnnl::memory::dims{l.k, l.c, l.r, l.r};
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                    dnnl::algorithm::convolution_direct, {xd, dt::f32, tag::any},
                                    {wd, dt::f32, tag::any}, {yd, dt::f32, tag::any}, {l.s, l.s},
                                    {l.p, l.p}, {l.p, l.p});
  dnnl::convolution_forward::primitive_desc pd(d, ref.eng);
  ref.bind(DNNL_ARG_SRC, pd.src_desc(), ref.user(xd, tag::nchw, x.data()), false);
  ref.bind(DNNL_ARG_WEIGHTS, pd.weights_desc(),
           ref.user(wd, depthwise ? tag::goihw : tag::oihw, w.data()), false);
  ref.bind(DNNL_ARG_DST, pd.dst_desc(), ref.user(yd, tag::nchw, yref.data()), true);
  ref.prim = dnnl::convolution_forward(pd);
  measure(
      o,
      dw3 && !rows ? std::string(l.name) + " (strided)"
      : tuned      ? std::string(l.name) + " tuned"
                   : std::string(l.name),
      [&] {
        check(tuned ? reinterpret_cast<TunedConvFn>(fn)(x.data(), wp.data(), y.data())
              : dw3 ? reinterpret_cast<ConvDwFn>(fn)(x.data(), w.data(), y.data(), 1, l.c, l.h, l.h)
              : depthwise ? reinterpret_cast<ConvExtFn>(fn)(x.data(), w.data(), y.data(), 1, l.c,
                                                            l.h, l.h, l.k, cg, l.r, l.r)
              : packed    ? reinterpret_cast<ConvFn>(fn)(x.data(), wp.data(), y.data(), 1, l.c, l.h,
                                                      l.h, kb, l.r, l.r)
                          : reinterpret_cast<ConvFn>(fn)(x.data(), w.data(), y.data(), 1, l.c, l.h,
                                                      l.h, l.k, l.r, l.r),
              "conv");
      },
      [&] { ref.run(); }, y, yref, 2.0 * l.k * cg * l.r * l.r * oh * oh, true);
}

// ---------------------------------------------------------------------------------------------
// Inner products

using LinearFn = int32_t (*)(const float *, const float *, const float *, float *, int64_t, int64_t,
                             int64_t);

struct Dense {
  const char *name;
  int64_t b, k, n;
};

const Dense kDense[] = {
    {"linear 128x768->768", 128, 768, 768},
    {"linear 128x768->3072", 128, 768, 3072},
    {"linear 128x3072->768", 128, 3072, 768},
    {"linear 1x512->1000", 1, 512, 1000},
};

void benchLinear(Options &o, const Dense &l) {
  // graph.pack-weights' choice: linear_gemv for one or two rows, else linear.
  const char *func = l.b <= 2 ? "linear_gemv" : "linear";
  auto fn = reinterpret_cast<LinearFn>(kernel(o.dir, func, func));
  std::vector<float> x = random(l.b * l.k), w = random(l.n * l.k), b = random(l.n), y(l.b * l.n),
                     yref(y.size());
  OneDnn ref;
  dnnl::memory::dims xd{l.b, l.k}, wd{l.n, l.k}, bd{l.n}, yd{l.b, l.n};
  dnnl::inner_product_forward::desc d(dnnl::prop_kind::forward_inference, {xd, dt::f32, tag::any},
                                      {wd, dt::f32, tag::any}, {bd, dt::f32, tag::any},
                                      {yd, dt::f32, tag::any});
  dnnl::inner_product_forward::primitive_desc pd(d, ref.eng);
  ref.bind(DNNL_ARG_SRC, pd.src_desc(), ref.user(xd, tag::nc, x.data()), false);
  ref.bind(DNNL_ARG_WEIGHTS, pd.weights_desc(), ref.user(wd, tag::oi, w.data()), false);
  ref.bind(DNNL_ARG_BIAS, pd.bias_desc(), ref.user(bd, tag::x, b.data()), false);
  ref.bind(DNNL_ARG_DST, pd.dst_desc(), ref.user(yd, tag::nc, yref.data()), true);
  ref.prim = dnnl::inner_product_forward(pd);
  measure(
      o, l.name, [&] { check(fn(x.data(), w.data(), b.data(), y.data(), l.b, l.k, l.n), func); },
      [&] { ref.run(); }, y, yref, 2.0 * l.b * l.k * l.n, true);
}

// ---------------------------------------------------------------------------------------------
// Pooling

using PoolFn = int32_t (*)(const float *, float *, int64_t, int64_t, int64_t, int64_t);
using RowFn = int32_t (*)(const float *, float *, int64_t, int64_t);

/// Which kernel a pooling row calls.
enum class PoolKernel {
  Pool,   // nn.max_pool2d<K, S, P> or nn.avg_pool2d<K, S, P> as written
  Global, // nn.global_avg_pool2d: where graph.pack-weights sends avg_pool2d<7, 1, 0> on 7 x 7
  Mean,   // nn.mean on [C, H * W]: how tdsl-import runs GlobalAveragePool
};

struct Pool {
  const char *name;
  bool max;
  int64_t c, h, k, s, p;
  PoolKernel kernel = PoolKernel::Pool;
};

const Pool kPools[] = {
    {"maxpool 3x3 s2 64@112", true, 64, 112, 3, 2, 1},
    {"avgpool 3x3 s2 64@112", false, 64, 112, 3, 2, 1},
    {"avgpool global 512@7", false, 512, 7, 7, 1, 0, PoolKernel::Global},
    {"avgpool global 1280@7", false, 1280, 7, 7, 1, 0, PoolKernel::Global},
    {"nn.mean global 512@7", false, 512, 7, 7, 1, 0, PoolKernel::Mean},
    {"nn.mean global 1280@7", false, 1280, 7, 7, 1, 0, PoolKernel::Mean},
    {"avg_pool2d 7x7 512@7", false, 512, 7, 7, 1, 0},
    {"avg_pool2d 7x7 1280@7", false, 1280, 7, 7, 1, 0},
};

/// oneDNN pools blocked data (nChw8c, its AVX2 kernels; on NCHW it takes a simple reference
/// loop), the reorders from and to NCHW counted.
void benchPool(Options &o, const Pool &l) {
  std::string f = l.max ? "max_pool2d" : "avg_pool2d";
  PoolFn fn = nullptr;
  RowFn mean = nullptr;
  if (l.kernel == PoolKernel::Mean)
    mean = reinterpret_cast<RowFn>(kernel(o.dir, "mean", "mean"));
  else if (l.kernel == PoolKernel::Global)
    fn = reinterpret_cast<PoolFn>(kernel(o.dir, "global_avg_pool2d", "global_avg_pool2d"));
  else
    fn = reinterpret_cast<PoolFn>(kernel(o.dir,
                                         f + "." + std::to_string(l.k) + "." + std::to_string(l.s) +
                                             "." + std::to_string(l.p),
                                         f.c_str()));
  int64_t oh = (l.h + 2 * l.p - l.k) / l.s + 1;
  std::vector<float> x = random(l.c * l.h * l.h), y(l.c * oh * oh), yref(y.size());
  OneDnn ref;
  dnnl::memory::dims xd{1, l.c, l.h, l.h}, yd{1, l.c, oh, oh};
  dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference,
                                l.max ? dnnl::algorithm::pooling_max
                                      : dnnl::algorithm::pooling_avg_include_padding,
                                {xd, dt::f32, tag::nChw8c}, {yd, dt::f32, tag::any}, {l.s, l.s},
                                {l.k, l.k}, {l.p, l.p}, {l.p, l.p});
  dnnl::pooling_forward::primitive_desc pd(d, ref.eng);
  ref.bind(DNNL_ARG_SRC, pd.src_desc(), ref.user(xd, tag::nchw, x.data()), false);
  ref.bind(DNNL_ARG_DST, pd.dst_desc(), ref.user(yd, tag::nchw, yref.data()), true);
  if (pd.workspace_desc().get_size())
    ref.args[DNNL_ARG_WORKSPACE] = dnnl::memory(pd.workspace_desc(), ref.eng);
  ref.prim = dnnl::pooling_forward(pd);
  measure(
      o, l.name,
      [&] {
        check(mean ? mean(x.data(), y.data(), l.c, l.h * l.h)
                   : fn(x.data(), y.data(), 1, l.c, l.h, l.h),
              "pool");
      },
      [&] { ref.run(); }, y, yref, 4.0 * (x.size() + y.size()), false);
}

// ---------------------------------------------------------------------------------------------
// Row-wise operators on [B, N]: softmax, layer norm, eltwise

using LayerNormFn = int32_t (*)(const float *, const float *, const float *, float, float *,
                                int64_t, int64_t);

void benchSoftmax(Options &o, const char *name, int64_t b, int64_t n) {
  auto fn = reinterpret_cast<RowFn>(kernel(o.dir, "softmax", "softmax"));
  std::vector<float> x = random(b * n, -4, 4), y(b * n), yref(y.size());
  OneDnn ref;
  dnnl::memory::dims xd{b, n};
  dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, {xd, dt::f32, tag::nc}, 1);
  dnnl::softmax_forward::primitive_desc pd(d, ref.eng);
  ref.bind(DNNL_ARG_SRC, pd.src_desc(), ref.user(xd, tag::nc, x.data()), false);
  ref.bind(DNNL_ARG_DST, pd.dst_desc(), ref.user(xd, tag::nc, yref.data()), true);
  ref.prim = dnnl::softmax_forward(pd);
  measure(
      o, name, [&] { check(fn(x.data(), y.data(), b, n), "softmax"); }, [&] { ref.run(); }, y, yref,
      8.0 * b * n, false);
}

void benchLayerNorm(Options &o, const char *name, int64_t b, int64_t n) {
  auto fn = reinterpret_cast<LayerNormFn>(kernel(o.dir, "layer_norm", "layer_norm"));
  const float eps = 1e-5f;
  std::vector<float> x = random(b * n, -2, 2), g = random(n), be = random(n), y(b * n),
                     yref(y.size());
  OneDnn ref;
  dnnl::memory::dims xd{b, n}, cd{n};
  dnnl::layer_normalization_forward::desc d(
      dnnl::prop_kind::forward_inference, {xd, dt::f32, tag::ab}, eps,
      dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift);
  dnnl::layer_normalization_forward::primitive_desc pd(d, ref.eng);
  ref.bind(DNNL_ARG_SRC, pd.src_desc(), ref.user(xd, tag::ab, x.data()), false);
  ref.bind(DNNL_ARG_DST, pd.dst_desc(), ref.user(xd, tag::ab, yref.data()), true);
  ref.args[DNNL_ARG_SCALE] = ref.user(cd, tag::a, g.data());
  ref.args[DNNL_ARG_SHIFT] = ref.user(cd, tag::a, be.data());
  if (pd.mean_desc().get_size()) {
    ref.args[DNNL_ARG_MEAN] = dnnl::memory(pd.mean_desc(), ref.eng);
    ref.args[DNNL_ARG_VARIANCE] = dnnl::memory(pd.variance_desc(), ref.eng);
  }
  ref.prim = dnnl::layer_normalization_forward(pd);
  measure(
      o, name, [&] { check(fn(x.data(), g.data(), be.data(), eps, y.data(), b, n), "layer_norm"); },
      [&] { ref.run(); }, y, yref, 8.0 * b * n, false);
}

void benchEltwise(Options &o, const char *name, const char *func, dnnl::algorithm alg, int64_t b,
                  int64_t n) {
  auto fn = reinterpret_cast<RowFn>(kernel(o.dir, func, func));
  std::vector<float> x = random(b * n, -4, 4), y(b * n), yref(y.size());
  OneDnn ref;
  dnnl::memory::dims xd{b, n};
  dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, alg, {xd, dt::f32, tag::nc},
                                0.0f, 0.0f);
  dnnl::eltwise_forward::primitive_desc pd(d, ref.eng);
  ref.bind(DNNL_ARG_SRC, pd.src_desc(), ref.user(xd, tag::nc, x.data()), false);
  ref.bind(DNNL_ARG_DST, pd.dst_desc(), ref.user(xd, tag::nc, yref.data()), true);
  ref.prim = dnnl::eltwise_forward(pd);
  measure(
      o, name, [&] { check(fn(x.data(), y.data(), b, n), func); }, [&] { ref.run(); }, y, yref,
      8.0 * b * n, false);
}

bool selected(const Options &o, const char *op) {
  return o.ops.empty() || std::find(o.ops.begin(), o.ops.end(), op) != o.ops.end();
}

std::vector<std::string> splitList(const char *p) {
  std::vector<std::string> v;
  std::string cur;
  for (; *p; ++p) {
    if (*p == ',') {
      v.push_back(cur);
      cur.clear();
    } else {
      cur += *p;
    }
  }
  if (!cur.empty())
    v.push_back(cur);
  return v;
}

} // namespace

int main(int argc, char **argv) {
  const char *usage =
      "usage: bench_ops KERNEL_DIR [--threads=1,2] [--reps=N] "
      "[--ops=conv,convpack,tunedconv,dwconv,depthwise,linear,maxpool,avgpool,softmax,layernorm,"
      "eltwise] [--pack-block=KV] [--tuned=DIR] [--check-only]\n";
  if (argc < 2) {
    std::fprintf(stderr, "%s", usage);
    return 2;
  }
  Options o;
  o.dir = argv[1];
  const char *known[] = {"conv",    "convpack", "tunedconv", "dwconv",    "depthwise", "linear",
                         "maxpool", "avgpool",  "softmax",   "layernorm", "eltwise"};
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--threads=", 0) == 0) {
      o.threads.clear();
      for (const std::string &t : splitList(a.c_str() + 10))
        o.threads.push_back(std::max(1, std::atoi(t.c_str())));
    } else if (a.rfind("--reps=", 0) == 0) {
      o.reps = std::max(1, std::atoi(a.c_str() + 7));
    } else if (a.rfind("--ops=", 0) == 0) {
      o.ops = splitList(a.c_str() + 6);
      for (const std::string &op : o.ops)
        if (std::none_of(std::begin(known), std::end(known),
                         [&](const char *k) { return op == k; })) {
          std::fprintf(stderr, "bench_ops: unknown operator %s\n%s", op.c_str(), usage);
          return 2;
        }
    } else if (a.rfind("--pack-block=", 0) == 0) {
      kPackBlock = std::max(1, std::atoi(a.c_str() + 13));
    } else if (a.rfind("--tuned=", 0) == 0) {
      o.tuned = a.substr(8);
    } else if (a == "--check-only") {
      o.checkOnly = true;
    } else {
      std::fprintf(stderr, "bench_ops: unknown option %s\n%s", a.c_str(), usage);
      return 2;
    }
  }
  if (o.tuned.empty() && std::find(o.ops.begin(), o.ops.end(), "tunedconv") != o.ops.end()) {
    std::fprintf(stderr, "bench_ops: --ops=tunedconv needs --tuned=DIR\n%s", usage);
    return 2;
  }
  o.peak = o.checkOnly ? 0 : fmaPeak();
  if (!o.checkOnly)
    std::printf("measured f32 FMA peak of one core: %.1f GFLOP/s (%s)\n", o.peak,
                __builtin_cpu_supports("avx512f") ? "AVX-512" : "AVX2");
  for (int t : o.threads) {
    o.t = t;
    omp_set_num_threads(t);
    if (!o.checkOnly)
      std::printf("\n%d thread(s)\n%-22s %10s %10s %8s %9s\n", t, "layer", "TDSL", "oneDNN",
                  "ratio", "TDSL/peak");
    if (selected(o, "conv"))
      for (const Conv &l : kResNet)
        benchConv(o, l, false);
    if (selected(o, "convpack")) {
      if (!o.checkOnly)
        std::printf("nn.conv2d_packed (weights packed before timing):\n");
      for (const Conv &l : kResNet)
        benchConv(o, l, false, true);
    }
    // Only where asked for, with --tuned=DIR: the kernels come from a tuning run, not the build.
    if (!o.tuned.empty() && selected(o, "tunedconv")) {
      if (!o.checkOnly)
        std::printf("tdsl-tune's nn.conv2d_packed copies (from %s):\n", o.tuned.c_str());
      for (const Conv &l : kResNet)
        benchConv(o, l, false, true, true);
    }
    if (selected(o, "dwconv"))
      for (const Conv &l : kMobileNet)
        benchConv(o, l, true);
    if (selected(o, "depthwise")) {
      if (!o.checkOnly)
        std::printf("nn.conv2d_depthwise<1, 3> (strided: nn.conv2d_depthwise_strided<S, 1, 3>):\n");
      for (const Conv &l : kMobileNet)
        benchConv(o, l, true, true);
    }
    if (selected(o, "linear"))
      for (const Dense &l : kDense)
        benchLinear(o, l);
    for (const Pool &l : kPools)
      if (selected(o, l.max ? "maxpool" : "avgpool"))
        benchPool(o, l);
    if (selected(o, "softmax"))
      benchSoftmax(o, "softmax 12*128x128", 12 * 128, 128);
    if (selected(o, "layernorm"))
      benchLayerNorm(o, "layernorm 128x768", 128, 768);
    if (selected(o, "eltwise")) {
      benchEltwise(o, "relu 64x12544", "relu", dnnl::algorithm::eltwise_relu, 64, 112 * 112);
      benchEltwise(o, "gelu 128x3072", "gelu", dnnl::algorithm::eltwise_gelu_erf, 128, 3072);
    }
  }
  return o.failures ? 1 : 0;
}
