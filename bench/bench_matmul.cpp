//===- bench/bench_matmul.cpp - TDSL's matmul against oneDNN and OpenBLAS --------------===//
//
// C = A·B, f32, row-major, N×N, in one process: oneDNN's dnnl_sgemm, OpenBLAS's cblas_sgemm
// and every TDSL kernel found in the kernel folder, at each size and thread count. Each result
// is checked once against cblas_sgemm; each run reports GFLOP/s (from the mean and the median
// wall time of a call, and from the CPU time of the working threads) and how many threads
// really worked (per-thread CPU clocks); a table with the ratios to both peers closes the run.
// docs/benchmarks.md describes the kernels, the routes and the results.
//
//   bench_matmul [--kernels=DIR] [--sizes=256,512,1024,2048] [--threads=1,2] [--check-only]
//                [--openblas-coretype=SkylakeX] [--csv=FILE] [--alternate=R [--block=S]]
//                [Google Benchmark flags]
// --alternate=R times the implementations of each size and thread count in turn instead, R
// rounds of a block of calls of about S seconds each (default 0.1), and reports the median over
// the rounds: on a shared machine the ratios are then measured under the same load.
// --csv=FILE also writes the closing table as CSV (name,size,threads,gflops,cpu_gflops,
// vs_onednn,vs_openblas,busy,peak_core; scripts/plot-bench.py draws it). The measured FMA peak
// of one core is printed first (and is the CSV's last column): the machine is shared and its
// peak varies from run to run.
//
// A TDSL kernel is a shared object `<func>.<route>.<N>.so` exporting the §10 raw entry
// `int32_t <func>(const float *A, const float *B, float *C)` of bench/matmul.tdsl compiled
// with -D N=<N> (bench/CMakeLists.txt builds them). Each is dlopen'ed with RTLD_LOCAL, so the
// same symbol comes from several objects.
//
// Threads: the program links LLVM's OpenMP runtime (libomp) ahead of oneDNN, whose libgomp
// calls (GOMP_*, omp_*) it then serves, as it serves the kernels built by g++ -fopenmp (libgomp
// ABI) and by Clang (GOMP_parallel too): one OpenMP runtime, so one omp_set_num_threads() applies
// to oneDNN and to every TDSL kernel. OpenBLAS (the pthread build) has its own pool, set by
// openblas_set_num_threads(). The program prints which library provides the OpenMP entry
// points, and re-executes itself with OPENBLAS_CORETYPE (SkylakeX, Haswell without AVX-512)
// (OpenBLAS reads it when it is loaded; its default picks an AVX2 kernel on Zen 4/5).
//===------------------------------------------------------------------------------------===//

#include <benchmark/benchmark.h>
#include <cblas.h>
#include <dlfcn.h>
#include <dnnl.h>
#include <immintrin.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#ifndef TDSL_BENCH_KERNEL_DIR
#define TDSL_BENCH_KERNEL_DIR "."
#endif

namespace {

using KernelFn = int32_t (*)(const float *, const float *, float *);

/// One implementation under test: a peer library or a TDSL kernel at one size.
struct Impl {
  std::string label; ///< what the table shows: "oneDNN", "tiled c++/g++", …
  bool peer = false;
  int64_t n = 0; ///< the size a TDSL kernel was compiled for (0: any size)
  KernelFn fn = nullptr;
};

/// A row of the final table: median wall seconds per call; CPU seconds per call of the threads
/// that did the work, divided by their number (the wall time on that many idle cores); those
/// threads.
struct Result {
  double seconds = 0;
  double cpuSeconds = 0;
  int busy = 0;
  bool valid = false;
};

/// How the threads of the process used the CPU between two snapshots.
struct ThreadUse {
  int busy = 0;       ///< threads with at least half the CPU time of the busiest
  double busyCpu = 0; ///< their CPU seconds, summed
};

struct Matrices {
  int64_t n;
  float *a, *b, *c, *ref;
};

std::vector<std::string> gOrder;                                  // labels, in registration order
std::map<std::tuple<int64_t, int, std::string>, Result> gResults; // (N, threads, label)
std::map<std::tuple<int64_t, int, std::string>, bool> gChecked;
int gFailures = 0;
double gPeak = 0; // measuredFmaPeak(), GFLOP/s of one core

float *allocMatrix(int64_t n) {
  size_t bytes = sizeof(float) * static_cast<size_t>(n * n);
  bytes = (bytes + 63) / 64 * 64;
  auto *p = static_cast<float *>(std::aligned_alloc(64, bytes));
  if (!p) {
    std::fprintf(stderr, "bench_matmul: out of memory for %lld×%lld\n", (long long)n, (long long)n);
    std::exit(1);
  }
  return p;
}

Matrices makeMatrices(int64_t n) {
  Matrices m{n, allocMatrix(n), allocMatrix(n), allocMatrix(n), allocMatrix(n)};
  std::mt19937 gen(42 + static_cast<unsigned>(n));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < n * n; ++i) {
    m.a[i] = dist(gen);
    m.b[i] = dist(gen);
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, m.a, n, m.b, n, 0.0f, m.ref,
              n);
  return m;
}

void setThreads(int threads) {
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}

/// Runs one call of `impl`; false on a failure status.
bool call(const Impl &impl, const Matrices &m) {
  int64_t n = m.n;
  if (impl.label == "oneDNN")
    return dnnl_sgemm('N', 'N', n, n, n, 1.0f, m.a, n, m.b, n, 0.0f, m.c, n) == dnnl_success;
  if (impl.label == "OpenBLAS") {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, m.a, n, m.b, n, 0.0f, m.c,
                n);
    return true;
  }
  return impl.fn(m.a, m.b, m.c) == 0;
}

/// max |C - ref| / max |ref| after one call on a C filled with NaN (so an element the kernel
/// does not write fails too).
double relativeError(const Impl &impl, const Matrices &m) {
  std::fill(m.c, m.c + m.n * m.n, std::nanf(""));
  if (!call(impl, m))
    return INFINITY;
  double maxDiff = 0, maxRef = 0;
  for (int64_t i = 0; i < m.n * m.n; ++i) {
    double d = std::fabs(double(m.c[i]) - double(m.ref[i]));
    if (!(d <= maxDiff))
      maxDiff = std::isnan(d) ? INFINITY : d;
    maxRef = std::max(maxRef, std::fabs(double(m.ref[i])));
  }
  return maxRef > 0 ? maxDiff / maxRef : maxDiff;
}

constexpr double kTolerance = 1e-5;

/// CPU seconds of each thread of the process, by thread id (Linux: a thread's CPU clock is
/// ((~tid) << 3) | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED).
std::map<long, double> threadCpuSeconds() {
  std::map<long, double> out;
  DIR *d = opendir("/proc/self/task");
  if (!d)
    return out;
  while (dirent *e = readdir(d)) {
    long tid = std::atol(e->d_name);
    if (tid <= 0)
      continue;
    timespec ts{};
    if (clock_gettime(static_cast<clockid_t>((~tid) << 3 | 6), &ts) == 0)
      out[tid] = ts.tv_sec + 1e-9 * ts.tv_nsec;
  }
  closedir(d);
  return out;
}

/// The threads that worked between two snapshots: those with at least half the CPU time of the
/// busiest one (an idle pool thread spinning for a moment after its last job stays below).
ThreadUse threadUse(const std::map<long, double> &before, const std::map<long, double> &after) {
  std::vector<double> used;
  for (const auto &[tid, t] : after) {
    auto it = before.find(tid);
    used.push_back(t - (it == before.end() ? 0.0 : it->second));
  }
  double most = used.empty() ? 0 : *std::max_element(used.begin(), used.end());
  ThreadUse out;
  for (double u : used)
    if (most > 0 && u >= 0.5 * most) {
      ++out.busy;
      out.busyCpu += u;
    }
  return out;
}

void runBenchmark(benchmark::State &state, const Impl &impl, const Matrices &m, int threads) {
  setThreads(threads);
  auto key = std::make_tuple(m.n, threads, impl.label);
  if (!gChecked[key]) {
    gChecked[key] = true;
    double err = relativeError(impl, m);
    if (!(err <= kTolerance)) {
      ++gFailures;
      std::fprintf(stderr, "bench_matmul: %s at N=%lld, %d threads: relative error %g > %g\n",
                   impl.label.c_str(), (long long)m.n, threads, err, kTolerance);
      state.SkipWithError("wrong result (see stderr)");
      return;
    }
  }
  call(impl, m); // warm-up: caches, thread pools, page faults of internal buffers
  std::vector<double> times;
  std::map<long, double> cpu0 = threadCpuSeconds();
  auto wall0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    call(impl, m);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  ThreadUse use = threadUse(cpu0, threadCpuSeconds());
  double flops = 2.0 * double(m.n) * double(m.n) * double(m.n);
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];
  double cpuPerCall = use.busyCpu / double(state.iterations()) / std::max(use.busy, 1);
  // Google Benchmark's rate counters divide by the main thread's CPU time: set them by hand.
  state.counters["GFLOP/s"] = flops * double(state.iterations()) / wall * 1e-9;
  state.counters["GFLOP/s(median)"] = flops / median * 1e-9;
  state.counters["GFLOP/s(cpu)"] = flops / cpuPerCall * 1e-9;
  state.counters["busy_threads"] = use.busy;
  // The last run of a benchmark is the measured one (earlier ones size the iteration count).
  gResults[key] = {median, cpuPerCall, use.busy, true};
}

/// --alternate=R: the implementations of one size and thread count timed in turn, R rounds; in
/// each round every implementation runs a block of calls of about `blockSeconds` (at least 2).
/// Each gets the median over the rounds of its block's median call time (and CPU time per
/// call of the busy threads), so load that comes and goes hits every implementation alike.
void runAlternating(const std::vector<const Impl *> &impls, const Matrices &m, int threads,
                    int rounds, double blockSeconds) {
  setThreads(threads);
  std::vector<const Impl *> ok;
  for (const Impl *impl : impls) {
    auto key = std::make_tuple(m.n, threads, impl->label);
    double err = relativeError(*impl, m);
    if (!(err <= kTolerance)) {
      ++gFailures;
      std::fprintf(stderr, "bench_matmul: %s at N=%lld, %d threads: relative error %g > %g\n",
                   impl->label.c_str(), (long long)m.n, threads, err, kTolerance);
      continue;
    }
    gChecked[key] = true;
    ok.push_back(impl);
  }
  // Calls per block from one timed warm-up call each.
  std::vector<int> calls;
  for (const Impl *impl : ok) {
    call(*impl, m);
    auto t0 = std::chrono::steady_clock::now();
    call(*impl, m);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    calls.push_back(std::max(2, int(blockSeconds / std::max(s, 1e-6))));
  }
  std::vector<std::vector<double>> wall(ok.size()), cpu(ok.size());
  std::vector<int> busy(ok.size(), 0);
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < ok.size(); ++i) {
      std::vector<double> times;
      std::map<long, double> cpu0 = threadCpuSeconds();
      for (int c = 0; c < calls[i]; ++c) {
        auto t0 = std::chrono::steady_clock::now();
        call(*ok[i], m);
        times.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      ThreadUse use = threadUse(cpu0, threadCpuSeconds());
      std::sort(times.begin(), times.end());
      wall[i].push_back(times[times.size() / 2]);
      cpu[i].push_back(use.busyCpu / calls[i] / std::max(use.busy, 1));
      busy[i] = std::max(busy[i], use.busy);
    }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  for (size_t i = 0; i < ok.size(); ++i)
    gResults[std::make_tuple(m.n, threads, ok[i]->label)] = {median(wall[i]), median(cpu[i]),
                                                             busy[i], true};
}

/// "a,b,c" → {a, b, c}
std::vector<int64_t> parseList(const std::string &s) {
  std::vector<int64_t> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t comma = s.find(',', pos);
    out.push_back(std::atoll(s.substr(pos, comma - pos).c_str()));
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return out;
}

/// "tiled c++/g++" for "matmul_tiled.cpp"; the func and route names stay visible.
std::string kernelLabel(const std::string &func, const std::string &route) {
  std::string f = func == "matmul"                ? "sched"
                  : func.rfind("matmul_", 0) == 0 ? func.substr(7)
                                                  : func;
  std::string r = route == "cpp"     ? "c++/g++"
                  : route == "clang" ? "obj/via=cpp"
                  : route == "llvm"  ? "obj/llvm"
                                     : route;
  return f + " " + r;
}

/// The TDSL kernels `<func>.<route>.<N>.so` in `dir`, sorted by label.
std::vector<Impl> loadKernels(const std::string &dir, const std::vector<int64_t> &sizes) {
  std::vector<Impl> out;
  DIR *d = opendir(dir.c_str());
  if (!d) {
    std::fprintf(stderr, "bench_matmul: cannot open kernel folder '%s'\n", dir.c_str());
    return out;
  }
  std::vector<std::string> names;
  while (dirent *e = readdir(d))
    names.push_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string &name : names) {
    if (name.size() < 4 || name.substr(name.size() - 3) != ".so")
      continue;
    std::string stem = name.substr(0, name.size() - 3);
    size_t dot2 = stem.rfind('.'),
           dot1 = dot2 == std::string::npos ? dot2 : stem.rfind('.', dot2 - 1);
    if (dot1 == std::string::npos)
      continue;
    std::string func = stem.substr(0, dot1), route = stem.substr(dot1 + 1, dot2 - dot1 - 1);
    int64_t n = std::atoll(stem.substr(dot2 + 1).c_str());
    if (std::find(sizes.begin(), sizes.end(), n) == sizes.end())
      continue;
    std::string path = dir + "/" + name;
    void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      std::fprintf(stderr, "bench_matmul: %s\n", dlerror());
      ++gFailures;
      continue;
    }
    auto fn = reinterpret_cast<KernelFn>(dlsym(h, func.c_str()));
    if (!fn) {
      std::fprintf(stderr, "bench_matmul: %s has no symbol '%s'\n", path.c_str(), func.c_str());
      ++gFailures;
      continue;
    }
    out.push_back({kernelLabel(func, route), false, n, fn});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Impl &a, const Impl &b) { return a.label < b.label; });
  return out;
}

/// Which loaded object provides `symbol` (to show that one OpenMP runtime serves everyone).
std::string providerOf(const char *symbol) {
  void *p = dlsym(RTLD_DEFAULT, symbol);
  Dl_info info{};
  if (!p || !dladdr(p, &info) || !info.dli_fname)
    return "(not found)";
  return info.dli_fname;
}

// The peak measurement's FMA chains, shared with bench/models/fma_peak.c.
#include "FmaChains.h"
TDSL_FMA_CHAINS(fmaFlops256, "avx2,fma", __m256, _mm256_fmadd_ps, _mm256_set1_ps)
TDSL_FMA_CHAINS(fmaFlops512, "avx512f", __m512, _mm512_fmadd_ps, _mm512_set1_ps)
#undef TDSL_FMA_CHAINS

/// The f32 FMA peak of one core, measured (GFLOP/s): the best of 5 runs of about 50 ms of
/// independent FMA chains at the widest width the CPU has; 0 without FMA. The machine is shared
/// and its peak varies from run to run, so it is printed beside every table.
double measuredFmaPeak() {
  bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512 && !__builtin_cpu_supports("fma"))
    return 0;
  float sink = 0;
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    auto start = std::chrono::steady_clock::now();
    double flop = avx512 ? fmaFlops512(2000000, &sink) : fmaFlops256(2000000, &sink);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, flop / s * 1e-9);
  }
  benchmark::DoNotOptimize(sink);
  return best;
}

void printEnvironment(const std::vector<Impl> &kernels) {
  const dnnl_version_t *v = dnnl_version();
  std::printf("oneDNN %d.%d.%d (cpu runtime %u), OpenBLAS core %s, OpenMP runtime %s"
              " (GOMP_parallel from %s), %d online CPUs\n",
              v->major, v->minor, v->patch, v->cpu_runtime, openblas_get_corename(),
              providerOf("omp_set_num_threads").c_str(), providerOf("GOMP_parallel").c_str(),
              static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  std::printf("measured f32 FMA peak of one core: %.1f GFLOP/s (%s)\n", gPeak,
              __builtin_cpu_supports("avx512f") ? "AVX-512" : "AVX2");
  std::printf("TDSL kernels:");
  for (const Impl &k : kernels)
    std::printf(" [%s N=%lld]", k.label.c_str(), (long long)k.n);
  std::printf("\n");
}

/// The closing table; with `csv` open, also one CSV row per result (ratios empty for peers).
void printTable(const std::vector<int64_t> &sizes, const std::vector<int64_t> &threads,
                std::FILE *csv) {
  if (csv)
    std::fprintf(csv, "name,size,threads,gflops,cpu_gflops,vs_onednn,vs_openblas,busy,peak_core\n");
  std::printf("\n%6s %3s  %-22s | %7s %9s %9s | %7s %9s %9s | %4s\n", "N", "thr", "implementation",
              "GFLOP/s", "/oneDNN", "/OpenBLAS", "cpu", "/oneDNN", "/OpenBLAS", "busy");
  for (int64_t n : sizes)
    for (int64_t t : threads) {
      auto find = [&](const std::string &label) -> const Result * {
        auto it = gResults.find({n, int(t), label});
        return it == gResults.end() || !it->second.valid ? nullptr : &it->second;
      };
      double gflop = 2.0 * double(n) * double(n) * double(n) * 1e-9;
      const Result *dnnl = find("oneDNN"), *blas = find("OpenBLAS");
      for (const std::string &label : gOrder) {
        const Result *r = find(label);
        if (!r)
          continue;
        bool peer = label == "oneDNN" || label == "OpenBLAS";
        auto ratio = [&](const Result *p, double Result::*field) {
          if (peer || !p)
            std::printf(" %9s", "");
          else
            std::printf(" %8.2fx", p->*field / r->*field);
        };
        std::printf("%6lld %3lld  %-22s | %7.1f", (long long)n, (long long)t, label.c_str(),
                    gflop / r->seconds);
        ratio(dnnl, &Result::seconds);
        ratio(blas, &Result::seconds);
        std::printf(" | %7.1f", gflop / r->cpuSeconds);
        ratio(dnnl, &Result::cpuSeconds);
        ratio(blas, &Result::cpuSeconds);
        std::printf(" | %4d\n", r->busy);
        if (!csv)
          continue;
        auto csvRatio = [&](const Result *p) {
          return peer || !p ? std::string() : std::to_string(p->seconds / r->seconds);
        };
        std::fprintf(csv, "%s,%lld,%lld,%.3f,%.3f,%s,%s,%d,%.1f\n", label.c_str(), (long long)n,
                     (long long)t, gflop / r->seconds, gflop / r->cpuSeconds,
                     csvRatio(dnnl).c_str(), csvRatio(blas).c_str(), r->busy, gPeak);
      }
    }
  std::printf(
      "GFLOP/s: from the median wall time of a call. cpu: from the CPU time per call of the "
      "busy threads over their number\n(the wall time on that many idle cores). /oneDNN, "
      "/OpenBLAS: TDSL's GFLOP/s over the peer's, same run. busy: threads\nwith at least "
      "half the CPU time of the busiest.\n");
}

} // namespace

int main(int argc, char **argv) {
  // OpenBLAS picks its kernel when it is loaded, from OPENBLAS_CORETYPE: set it and start again.
  // SkylakeX's kernels need AVX-512 (an illegal instruction elsewhere): Haswell's on AVX2 CPUs.
  std::string coreType = __builtin_cpu_supports("avx512f") ? "SkylakeX" : "Haswell";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--openblas-coretype=", 20) == 0)
      coreType = argv[i] + 20;
  const char *env = std::getenv("OPENBLAS_CORETYPE");
  if (!env || coreType != env) {
    setenv("OPENBLAS_CORETYPE", coreType.c_str(), 1);
    execv("/proc/self/exe", argv);
    std::perror("bench_matmul: re-executing with OPENBLAS_CORETYPE set");
    return 1;
  }
  std::string dir = TDSL_BENCH_KERNEL_DIR;
  std::vector<int64_t> sizes = {256, 512, 1024, 2048}, threads = {1, 2};
  bool checkOnly = false;
  int alternate = 0;         // --alternate=R: R alternating rounds instead of Google Benchmark
  double blockSeconds = 0.1; // --block=S: seconds per block of calls in a round
  std::string csvPath;
  std::vector<char *> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--kernels=", 0) == 0)
      dir = a.substr(10);
    else if (a.rfind("--sizes=", 0) == 0)
      sizes = parseList(a.substr(8));
    else if (a.rfind("--threads=", 0) == 0)
      threads = parseList(a.substr(10));
    else if (a == "--check-only")
      checkOnly = true;
    else if (a.rfind("--alternate=", 0) == 0)
      alternate = std::max(1, std::atoi(a.c_str() + 12));
    else if (a.rfind("--block=", 0) == 0)
      blockSeconds = std::atof(a.c_str() + 8);
    else if (a.rfind("--csv=", 0) == 0)
      csvPath = a.substr(6);
    else if (a.rfind("--openblas-coretype=", 0) == 0)
      continue;
    else
      rest.push_back(argv[i]);
  }
  int restc = static_cast<int>(rest.size());
  benchmark::Initialize(&restc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(restc, rest.data()))
    return 2;

  std::vector<Impl> kernels = loadKernels(dir, sizes);
  gPeak = measuredFmaPeak();
  printEnvironment(kernels);
  if (kernels.empty()) {
    std::fprintf(stderr, "bench_matmul: no TDSL kernel for these sizes in '%s'\n", dir.c_str());
    if (checkOnly)
      return 1;
  }

  std::vector<Impl> impls = {{"oneDNN", true, 0, nullptr}, {"OpenBLAS", true, 0, nullptr}};
  impls.insert(impls.end(), kernels.begin(), kernels.end());
  for (const Impl &impl : impls)
    if (std::find(gOrder.begin(), gOrder.end(), impl.label) == gOrder.end())
      gOrder.push_back(impl.label);

  std::vector<std::unique_ptr<Matrices>> mats;
  for (int64_t n : sizes) {
    mats.push_back(std::make_unique<Matrices>(makeMatrices(n)));
    const Matrices &m = *mats.back();
    for (int64_t t : threads) {
      if (alternate && !checkOnly) {
        std::vector<const Impl *> here;
        for (const Impl &impl : impls)
          if (impl.peer || impl.n == n)
            here.push_back(&impl);
        runAlternating(here, m, int(t), alternate, blockSeconds);
        continue;
      }
      for (const Impl &impl : impls) {
        if (!impl.peer && impl.n != n)
          continue;
        if (checkOnly) {
          setThreads(int(t));
          double err = relativeError(impl, m);
          bool ok = err <= kTolerance;
          gFailures += !ok;
          std::printf("check %-22s N=%lld threads=%lld: relative error %.3g %s\n",
                      impl.label.c_str(), (long long)n, (long long)t, err, ok ? "OK" : "FAIL");
          continue;
        }
        std::string name =
            "matmul/" + std::to_string(n) + "/threads:" + std::to_string(t) + "/" + impl.label;
        benchmark::RegisterBenchmark(
            name.c_str(), [impl, &m, t](benchmark::State &s) { runBenchmark(s, impl, m, int(t)); })
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
    }
  }
  if (!checkOnly) {
    if (!alternate)
      benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    std::FILE *csv = csvPath.empty() ? nullptr : std::fopen(csvPath.c_str(), "w");
    if (!csvPath.empty() && !csv) {
      std::fprintf(stderr, "bench_matmul: cannot write '%s'\n", csvPath.c_str());
      ++gFailures;
    }
    printTable(sizes, threads, csv);
    if (csv)
      std::fclose(csv);
  }
  for (const auto &m : mats) {
    std::free(m->a);
    std::free(m->b);
    std::free(m->c);
    std::free(m->ref);
  }
  if (gFailures)
    std::fprintf(stderr, "bench_matmul: %d failure(s)\n", gFailures);
  return gFailures ? 1 : 0;
}
