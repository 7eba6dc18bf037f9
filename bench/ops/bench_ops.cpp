//===- bench/ops/bench_ops.cpp - nn.conv2d against oneDNN at ResNet-18 shapes -----------------===//
//
// bench_ops KERNEL_DIR [--threads=1,2] [--reps=N] [--check-only]: times the standard library's
// nn.conv2d (objects made by `tdslc stdlib/nn.tdsl --func conv2d -D conv2d.S=.. -D conv2d.P=..
// --emit=obj -O3`, loaded from KERNEL_DIR/conv2d.S.P.so) against oneDNN's convolution
// primitive on the 3x3 and 1x1 convolutions of ResNet-18 at batch 1, in one process,
// alternating call by call. Both sides take NCHW input and OIHW weights and give NCHW output:
// oneDNN picks its own formats (format_tag::any) and the reorders to and from them are timed
// with it, every call (the weights too, as TDSL packs them every call). Prints GFLOP/s (median
// of the calls), the ratio TDSL / oneDNN and the measured FMA peak of one core. --check-only
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
#include <random>
#include <string>
#include <vector>

namespace {

using ConvFn = int32_t (*)(const float *, const float *, float *, int64_t, int64_t, int64_t,
                           int64_t, int64_t, int64_t, int64_t);

struct Layer {
  const char *name;
  int64_t c, h, k, r, s, p;
};

// ResNet-18's 3x3 and 1x1 convolutions at batch 1 (the 7x7 stem is left out).
const Layer kLayers[] = {
    {"layer1 3x3", 64, 56, 64, 3, 1, 1},           {"layer2.0 3x3 s2", 64, 56, 128, 3, 2, 1},
    {"layer2 3x3", 128, 28, 128, 3, 1, 1},         {"layer2 down 1x1 s2", 64, 56, 128, 1, 2, 0},
    {"layer3.0 3x3 s2", 128, 28, 256, 3, 2, 1},    {"layer3 3x3", 256, 14, 256, 3, 1, 1},
    {"layer3 down 1x1 s2", 128, 28, 256, 1, 2, 0}, {"layer4.0 3x3 s2", 256, 14, 512, 3, 2, 1},
    {"layer4 3x3", 512, 7, 512, 3, 1, 1},          {"layer4 down 1x1 s2", 256, 14, 512, 1, 2, 0},
};

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The f32 FMA peak of one core (GFLOP/s): 12 independent AVX2 FMA chains, best of 5 runs (as
/// bench/bench_matmul.cpp measures it).
__attribute__((target("avx2,fma"))) double fmaPeak() {
  double best = 0;
  float sink = 0;
  for (int run = 0; run < 5; ++run) {
    __m256 a = _mm256_set1_ps(1.0f), b = _mm256_set1_ps(0.999999f);
    __m256 c[12];
    for (int i = 0; i < 12; ++i)
      c[i] = _mm256_set1_ps(float(i));
    const int64_t iters = 2000000;
    double t0 = seconds();
    // Unrolled, so that the 12 chains live in registers (not in the array).
    for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
      for (int j = 0; j < 12; ++j)
        c[j] = _mm256_fmadd_ps(c[j], b, a);
    }
    double t = seconds() - t0;
    for (int j = 0; j < 12; ++j)
      sink += reinterpret_cast<const float *>(&c[j])[0];
    best = std::max(best, double(iters) * 12 * 16 / t * 1e-9);
  }
  if (sink == 12345.0f)
    std::printf(" ");
  return best;
}

struct OneDnnConv {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::memory src, wei, dst, psrc, pwei, pdst;
  dnnl::convolution_forward conv;
  bool rsrc, rwei, rdst;

  OneDnnConv(const Layer &l, float *x, float *w, float *y) {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    int64_t oh = (l.h + 2 * l.p - l.r) / l.s + 1;
    dnnl::memory::dims xd{1, l.c, l.h, l.h}, wd{l.k, l.c, l.r, l.r}, yd{1, l.k, oh, oh};
    src = dnnl::memory({xd, dt::f32, tag::nchw}, eng, x);
    wei = dnnl::memory({wd, dt::f32, tag::oihw}, eng, w);
    dst = dnnl::memory({yd, dt::f32, tag::nchw}, eng, y);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                      dnnl::algorithm::convolution_direct, {xd, dt::f32, tag::any},
                                      {wd, dt::f32, tag::any}, {yd, dt::f32, tag::any}, {l.s, l.s},
                                      {l.p, l.p}, {l.p, l.p});
    dnnl::convolution_forward::primitive_desc pd(d, eng);
    rsrc = pd.src_desc() != src.get_desc();
    rwei = pd.weights_desc() != wei.get_desc();
    rdst = pd.dst_desc() != dst.get_desc();
    psrc = rsrc ? dnnl::memory(pd.src_desc(), eng) : src;
    pwei = rwei ? dnnl::memory(pd.weights_desc(), eng) : wei;
    pdst = rdst ? dnnl::memory(pd.dst_desc(), eng) : dst;
    conv = dnnl::convolution_forward(pd);
  }

  void run() {
    if (rsrc)
      dnnl::reorder(src, psrc).execute(strm, src, psrc);
    if (rwei)
      dnnl::reorder(wei, pwei).execute(strm, wei, pwei);
    conv.execute(strm, {{DNNL_ARG_SRC, psrc}, {DNNL_ARG_WEIGHTS, pwei}, {DNNL_ARG_DST, pdst}});
    if (rdst)
      dnnl::reorder(pdst, dst).execute(strm, pdst, dst);
    strm.wait();
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_ops KERNEL_DIR [--threads=1,2] [--reps=N] [--check-only]\n");
    return 2;
  }
  std::string dir = argv[1];
  std::vector<int> threads{1, 2};
  int reps = 20;
  bool checkOnly = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--threads=", 0) == 0) {
      threads.clear();
      for (const char *p = a.c_str() + 10; *p;) {
        threads.push_back(std::atoi(p));
        while (*p && *p != ',')
          ++p;
        if (*p)
          ++p;
      }
    } else if (a.rfind("--reps=", 0) == 0) {
      reps = std::max(1, std::atoi(a.c_str() + 7));
    } else if (a == "--check-only") {
      checkOnly = true;
    } else {
      std::fprintf(stderr, "bench_ops: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  double peak = checkOnly ? 0 : fmaPeak();
  if (!checkOnly)
    std::printf("measured f32 FMA peak of one core: %.1f GFLOP/s (AVX2)\n", peak);
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> uni(-1, 1);
  int failures = 0;
  for (int t : threads) {
    omp_set_num_threads(t);
    if (!checkOnly)
      std::printf("\n%d thread(s)\n%-22s %10s %10s %8s %9s\n", t, "layer", "TDSL", "oneDNN",
                  "ratio", "TDSL/peak");
    for (const Layer &l : kLayers) {
      std::string lib = dir + "/conv2d." + std::to_string(l.s) + "." + std::to_string(l.p) + ".so";
      void *h = dlopen(lib.c_str(), RTLD_NOW);
      auto fn = h ? reinterpret_cast<ConvFn>(dlsym(h, "conv2d")) : nullptr;
      if (!fn) {
        std::fprintf(stderr, "bench_ops: cannot load conv2d from %s: %s\n", lib.c_str(), dlerror());
        return 1;
      }
      int64_t oh = (l.h + 2 * l.p - l.r) / l.s + 1;
      std::vector<float> x(l.c * l.h * l.h), w(l.k * l.c * l.r * l.r), y(l.k * oh * oh),
          yref(y.size());
      for (float &v : x)
        v = uni(rng);
      for (float &v : w)
        v = uni(rng);
      OneDnnConv ref(l, x.data(), w.data(), yref.data());
      auto tdsl = [&] {
        if (fn(x.data(), w.data(), y.data(), 1, l.c, l.h, l.h, l.k, l.r, l.r) != 0) {
          std::fprintf(stderr, "bench_ops: conv2d failed\n");
          std::exit(1);
        }
      };
      tdsl();
      ref.run();
      double worst = 0;
      for (size_t i = 0; i < y.size(); ++i)
        worst = std::max(worst, std::fabs(double(y[i]) - yref[i]) / (1 + std::fabs(yref[i])));
      if (worst > 1e-4) {
        std::printf("MISMATCH %s (%d threads): max relative difference %g\n", l.name, t, worst);
        ++failures;
      } else if (checkOnly) {
        std::printf("MATCH %s (%d threads)\n", l.name, t);
      }
      if (checkOnly)
        continue;
      std::vector<double> ta, tb;
      for (int rep = 0; rep < reps; ++rep) {
        double t0 = seconds();
        tdsl();
        double t1 = seconds();
        ref.run();
        double t2 = seconds();
        ta.push_back(t1 - t0);
        tb.push_back(t2 - t1);
      }
      double flop = 2.0 * l.k * l.c * l.r * l.r * oh * oh;
      double ga = flop / median(ta) * 1e-9, gb = flop / median(tb) * 1e-9;
      std::printf("%-22s %10.1f %10.1f %7.2fx %8.0f%%\n", l.name, ga, gb, ga / gb,
                  100 * ga / (peak * t));
    }
  }
  return failures ? 1 : 0;
}
