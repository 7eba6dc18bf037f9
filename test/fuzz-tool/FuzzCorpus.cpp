//===- test/fuzz-tool/FuzzCorpus.cpp ----------------------------------------------------------===//
//
// `tdsl-fuzz-corpus`: feeds tdslc every .tdsl file of a corpus cut at every
// byte offset and with seeded random byte flips, and checks that each run ends with exit 0, or
// exit 1 and an `error:` diagnostic — never a signal, an abort, an exception or a time-out.
//
// tdsl-fuzz-corpus [--seed S] [--flips N] [--sample K] [--timeout SECS] [--jobs J]
// [--emit ast|ir] [--cut-stride K] [--full-cut-limit BYTES] [--tdslc PATH] [--repro-dir DIR]
// [--stdlib DIR] PATH... tdsl-fuzz-corpus --replay FILE --as PATH      (re-runs one saved case,
// in-process)
//
// Cases run in-process through tdsl::runCompiler (--emit=ast, or --emit=ir to run the checker
// and IR builder too) with the mutated text given as
// the source of the original file's path, so that its imports still resolve. Every K-th case
// (default 200) also runs the real tdslc binary on the mutated text written to a temporary
// file, with `-I <original folder>` for relative imports, checking the process-level guarantee.
// A watchdog aborts the run if one case takes longer than the time-out. A failing case is saved
// under --repro-dir with the command that replays it. With --jobs J (default: one per CPU, at
// most 8), J forked workers share the files (largest first); the cases and their outcome do not
// depend on J. --cut-stride K cuts at every K-th offset only (and at the end), for slower modes.
// Cutting an n-byte file at every offset parses n²/2 bytes, so a file larger than
// --full-cut-limit (default 8192 bytes; 0: none) — in practice a generated stress test — is cut
// at every offset of its first half-limit and last 256 bytes, and at 512 offsets in between.

#include "tools/driver/Driver.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <random>
#include <sstream>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct Config {
  uint64_t seed = 1;
  unsigned flips = 50;        // random-flip cases per file
  unsigned sample = 200;      // every sample-th case also runs the tdslc binary (0: never)
  unsigned timeoutSec = 10;   // per case
  unsigned jobs = 0;          // worker processes (0: one per CPU, at most 8)
  unsigned cutStride = 1;     // cut at every cutStride-th byte offset
  size_t fullCutLimit = 8192; // larger files are cut at sampled offsets in their middle
  tdsl::EmitKind emit = tdsl::EmitKind::AST; // --emit=ast|ir: how far each case is compiled
  std::string tdslc;                         // default: tdslc next to this executable
  std::string reproDir = ".";
  std::string stdlib; // default: tdsl::defaultStdlibDir()
  std::vector<std::string> roots;
  std::string replay, replayAs;
};

struct Case {
  const std::string *path = nullptr; // the corpus file the case derives from
  std::string what;                  // "cut at 17", "flips 3:0x00 9:0xc3"
  std::string text;
};

// ---- State the watchdog and the fatal-signal handler read --------------------------------------

std::mutex gMutex;
std::condition_variable gCv;
const Case *gCurrent = nullptr;                 // guarded by gMutex
std::chrono::steady_clock::time_point gStarted; // guarded by gMutex
bool gDone = false;                             // guarded by gMutex
// Pre-formatted for the signal handler (which may not allocate): the case and its text.
std::atomic<const char *> gSignalDesc{nullptr};
std::atomic<const char *> gSignalText{nullptr};
std::atomic<size_t> gSignalTextSize{0};
std::string gSignalReproPath; // set once before any case runs

uint64_t fnv1a(std::string_view s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hexByte(unsigned char c) {
  static const char *digits = "0123456789abcdef";
  return std::string("0x") + digits[c >> 4] + digits[c & 15];
}

std::string describe(const Case &c) { return c.what + " of " + *c.path; }

/// Saves a failing case and returns the lines that say how to replay it.
std::string saveRepro(const Config &cfg, const Case &c, unsigned index) {
  std::error_code ec;
  fs::create_directories(cfg.reproDir, ec);
  fs::path file = fs::path(cfg.reproDir) / ("fuzz-failure-" + std::to_string(index) + ".tdsl");
  std::ofstream out(file, std::ios::binary);
  out << c.text;
  if (!out)
    return "  (could not save the input to " + file.string() + ")\n";
  return "  input saved to " + file.string() + "\n  replay: tdsl-fuzz-corpus --replay " +
         file.string() + " --as " + *c.path + "\n";
}

void writeAll(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w <= 0)
      return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

/// On SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGABRT inside the compiler: say which case, save it, die
/// with the same signal. Only async-signal-safe calls.
extern "C" void onFatalSignal(int sig) {
  const char *head = "fuzz: FATAL: signal while compiling ";
  writeAll(2, head, std::strlen(head));
  if (const char *d = gSignalDesc.load())
    writeAll(2, d, std::strlen(d));
  writeAll(2, "\n", 1);
  if (const char *t = gSignalText.load()) {
    int fd = ::open(gSignalReproPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      writeAll(fd, t, gSignalTextSize.load());
      ::close(fd);
      const char *msg = "fuzz: input saved to ";
      writeAll(2, msg, std::strlen(msg));
      writeAll(2, gSignalReproPath.c_str(), gSignalReproPath.size());
      writeAll(2, "\n", 1);
    }
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

/// Aborts the whole run when one case exceeds the time-out.
void watchdog(const Config &cfg) {
  std::unique_lock<std::mutex> lock(gMutex);
  while (!gDone) {
    gCv.wait_for(lock, std::chrono::milliseconds(200));
    if (gDone || !gCurrent)
      continue;
    auto elapsed = std::chrono::steady_clock::now() - gStarted;
    if (elapsed < std::chrono::seconds(cfg.timeoutSec))
      continue;
    std::cerr << "fuzz: TIME-OUT: " << describe(*gCurrent) << " ran longer than " << cfg.timeoutSec
              << " s\n"
              << saveRepro(cfg, *gCurrent, 0);
    std::cerr.flush();
    std::_Exit(3);
  }
}

// ---- One case
// ------------------------------------------------------------------------------------

/// Checks one compiler outcome; returns the complaint, or "" when it is acceptable.
std::string judge(int rc, const std::string &diagnostics) {
  if (rc == 0)
    return "";
  if (rc == 1) {
    if (diagnostics.find("error:") != std::string::npos)
      return "";
    return "exit 1 without an 'error:' diagnostic";
  }
  return "exit status " + std::to_string(rc) + " (expected 0 or 1)";
}

/// Runs one case in-process; returns the complaint, or "".
std::string runInProcess(const Config &cfg, const Case &c) {
  tdsl::DriverOptions opts;
  opts.input = *c.path;
  opts.emit = cfg.emit;
  opts.color = "never";
  opts.stdlibDir = cfg.stdlib;
  std::ostringstream out, err;
  int rc;
  try {
    rc = tdsl::runCompiler(opts, out, err, &c.text);
  } catch (const std::exception &e) {
    return std::string("uncaught exception: ") + e.what();
  } catch (...) {
    return "uncaught exception of unknown type";
  }
  std::string complaint = judge(rc, err.str());
  if (!complaint.empty())
    complaint += "\n  stderr: " + err.str().substr(0, 2000);
  return complaint;
}

/// Runs the tdslc binary on the case's text written to `tmpDir`; returns the complaint, or "".
std::string runSubprocess(const Config &cfg, const Case &c, const fs::path &tmpDir) {
  fs::path input = tmpDir / fs::path(*c.path).filename();
  fs::path errFile = tmpDir / "stderr.txt";
  {
    std::ofstream f(input, std::ios::binary | std::ios::trunc);
    f << c.text;
  }
  std::vector<std::string> args = {cfg.tdslc,
                                   std::string("--emit=") + tdsl::emitKindName(cfg.emit),
                                   "--color=never",
                                   "-o",
                                   "/dev/null",
                                   "-I",
                                   fs::path(*c.path).parent_path().string(),
                                   "--stdlib",
                                   cfg.stdlib,
                                   input.string()};
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0)
    return std::string("fork failed: ") + std::strerror(errno);
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_RDWR);
    int errFd = ::open(errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (devnull < 0 || errFd < 0)
      ::_exit(126);
    ::dup2(devnull, 0);
    ::dup2(devnull, 1);
    ::dup2(errFd, 2);
    ::execv(argv[0], argv.data());
    dprintf(2, "exec: %s\n", std::strerror(errno));
    ::_exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(cfg.timeoutSec);
  int status = 0;
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid)
      break;
    if (r < 0 && errno != EINTR)
      return std::string("waitpid failed: ") + std::strerror(errno);
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return "tdslc ran longer than " + std::to_string(cfg.timeoutSec) + " s";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::ifstream ef(errFile, std::ios::binary);
  std::string diagnostics((std::istreambuf_iterator<char>(ef)), std::istreambuf_iterator<char>());
  if (WIFSIGNALED(status))
    return "tdslc was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")\n  stderr: " + diagnostics.substr(0, 2000);
  if (!WIFEXITED(status))
    return "tdslc ended abnormally";
  if (WEXITSTATUS(status) == 127 && diagnostics.rfind("exec: ", 0) == 0)
    return "could not execute " + cfg.tdslc + ": " + diagnostics;
  std::string complaint = judge(WEXITSTATUS(status), diagnostics);
  if (!complaint.empty())
    complaint = "tdslc binary: " + complaint + "\n  stderr: " + diagnostics.substr(0, 2000);
  return complaint;
}

// ---- Corpus and mutations --------------------------------------------------------------------

std::vector<std::string> collectCorpus(const std::vector<std::string> &roots) {
  std::vector<std::string> files;
  for (const std::string &root : roots) {
    std::error_code ec;
    if (fs::is_regular_file(root, ec)) {
      files.push_back(fs::path(root).lexically_normal().string());
      continue;
    }
    if (!fs::is_directory(root, ec)) {
      std::cerr << "tdsl-fuzz-corpus: error: '" << root << "' is neither a file nor a folder\n";
      std::exit(2);
    }
    for (auto it = fs::recursive_directory_iterator(
             root, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec)
        break;
      if (it->is_regular_file(ec) && it->path().extension() == ".tdsl")
        files.push_back(it->path().lexically_normal().string());
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

/// Bytes that tend to reach interesting lexer and parser states.
constexpr unsigned char kInteresting[] = {'\0', '\n', '"', '\\', '/',  '*',  '{',  '}',  '(',
                                          ')',  '[',  ']', ';',  ',',  '.',  '_',  '0',  'e',
                                          '<',  '>',  '=', 0x80, 0xc3, 0xe2, 0xf0, 0xff, 0x7f};

/// A deterministic generator of one file's flips: depends only on the seed and the file's
/// content, so adding files to the corpus does not change the cases of the others.
Case flipCase(const std::string &path, const std::string &text, std::mt19937_64 &rng) {
  Case c{&path, "flips", text};
  unsigned n = 1 + static_cast<unsigned>(rng() % 3);
  for (unsigned i = 0; i < n; ++i) {
    size_t at = static_cast<size_t>(rng() % text.size());
    unsigned char v;
    if (rng() % 2)
      v = kInteresting[rng() % sizeof(kInteresting)];
    else
      v = static_cast<unsigned char>(rng() % 256);
    if (v == static_cast<unsigned char>(c.text[at]))
      v ^= 0x80;
    c.text[at] = static_cast<char>(v);
    c.what += " " + std::to_string(at) + ":" + hexByte(v);
  }
  return c;
}

bool readFile(const std::string &path, std::string &text) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  text = ss.str();
  return true;
}

[[noreturn]] void usage(const std::string &msg) {
  std::cerr
      << "tdsl-fuzz-corpus: error: " << msg << "\n"
      << "usage: tdsl-fuzz-corpus [--seed S] [--flips N] [--sample K] [--timeout SECS] [--jobs J]\n"
      << "                        [--emit ast|ir] [--cut-stride K] [--full-cut-limit BYTES]\n"
      << "                        [--tdslc PATH] [--repro-dir DIR] [--stdlib DIR] PATH...\n"
      << "       tdsl-fuzz-corpus --replay FILE --as PATH\n";
  std::exit(2);
}

uint64_t parseNumber(const std::string &opt, const std::string &s) {
  try {
    size_t pos = 0;
    unsigned long long v = std::stoull(s, &pos, 0);
    if (pos == s.size() && s[0] != '-')
      return v;
  } catch (...) {
  }
  usage("invalid value '" + s + "' for " + opt);
}

Config parseArgs(int argc, char **argv) {
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage(a + " expects a value");
      return argv[++i];
    };
    if (a == "--seed")
      cfg.seed = parseNumber(a, value());
    else if (a == "--flips")
      cfg.flips = static_cast<unsigned>(parseNumber(a, value()));
    else if (a == "--sample")
      cfg.sample = static_cast<unsigned>(parseNumber(a, value()));
    else if (a == "--timeout")
      cfg.timeoutSec = static_cast<unsigned>(std::max<uint64_t>(1, parseNumber(a, value())));
    else if (a == "--cut-stride")
      cfg.cutStride = static_cast<unsigned>(std::max<uint64_t>(1, parseNumber(a, value())));
    else if (a == "--full-cut-limit")
      cfg.fullCutLimit = static_cast<size_t>(parseNumber(a, value()));
    else if (a == "--jobs")
      cfg.jobs = static_cast<unsigned>(std::clamp<uint64_t>(parseNumber(a, value()), 1, 64));
    else if (a == "--emit") {
      std::string e = value();
      if (e == "ast")
        cfg.emit = tdsl::EmitKind::AST;
      else if (e == "ir")
        cfg.emit = tdsl::EmitKind::IR;
      else
        usage("invalid value '" + e + "' for --emit; expected ast or ir");
    } else if (a == "--tdslc")
      cfg.tdslc = value();
    else if (a == "--repro-dir")
      cfg.reproDir = value();
    else if (a == "--stdlib")
      cfg.stdlib = value();
    else if (a == "--replay")
      cfg.replay = value();
    else if (a == "--as")
      cfg.replayAs = value();
    else if (a.size() > 1 && a[0] == '-')
      usage("unknown option '" + a + "'");
    else
      cfg.roots.push_back(a);
  }
  if (cfg.stdlib.empty())
    cfg.stdlib = tdsl::defaultStdlibDir();
  if (cfg.jobs == 0)
    cfg.jobs = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  if (cfg.tdslc.empty()) {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    cfg.tdslc = ec ? "tdslc" : (self.parent_path() / "tdslc").string();
  }
  if (!cfg.replay.empty()) {
    if (cfg.replayAs.empty())
      usage("--replay needs --as PATH (the file the case derives from)");
    return cfg;
  }
  if (cfg.roots.empty())
    usage("no corpus folder given");
  return cfg;
}

} // namespace

namespace {

/// Counters the workers share (anonymous shared memory).
struct Shared {
  std::atomic<unsigned> nextFile{0};
  std::atomic<unsigned long> cases{0}, processes{0}, failures{0};
};

struct CorpusFile {
  std::string path, text;
  unsigned long firstCase = 0; // global index of its first case: sampling and repro names
};

/// The byte offsets a file of `size` bytes is cut at: every `stride`-th, and the end; for a
/// file over `limit` bytes, only the head and the tail densely (see the banner).
std::vector<size_t> cutOffsets(size_t size, unsigned stride, size_t limit) {
  std::vector<size_t> cuts;
  bool sparse = limit != 0 && size > limit;
  size_t head = limit / 2, tail = size > 256 ? size - 256 : 0;
  size_t middleStep = std::max<size_t>(stride, (tail - std::min(head, tail)) / 512 + 1);
  for (size_t cut = 0; cut <= size;) {
    cuts.push_back(cut);
    cut += sparse && cut >= head && cut < tail ? middleStep : stride;
  }
  if (cuts.back() != size)
    cuts.push_back(size);
  return cuts;
}

/// One worker: takes files from the shared queue until it is empty. Returns its exit status.
int worker(const Config &cfg, const std::vector<CorpusFile> &files,
           const std::vector<unsigned> &order, Shared &shared, unsigned id) {
  std::error_code ec;
  gSignalReproPath =
      (fs::path(cfg.reproDir) / ("fuzz-failure-signal-" + std::to_string(id) + ".tdsl")).string();
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
    std::signal(sig, onFatalSignal);

  std::string tmpl = (fs::temp_directory_path(ec) / "tdsl-fuzz-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) {
    std::cerr << "tdsl-fuzz-corpus: error: cannot create a temporary folder: "
              << std::strerror(errno) << "\n";
    return 2;
  }
  fs::path tmpDir(tmpl);
  std::thread dog(watchdog, std::cref(cfg));
  std::string signalDesc;

  auto runCase = [&](const Case &c, unsigned long index) {
    shared.cases.fetch_add(1);
    signalDesc = describe(c);
    gSignalDesc.store(signalDesc.c_str());
    gSignalText.store(c.text.data());
    gSignalTextSize.store(c.text.size());
    {
      std::lock_guard<std::mutex> lock(gMutex);
      gCurrent = &c;
      gStarted = std::chrono::steady_clock::now();
    }
    std::string complaint = runInProcess(cfg, c);
    if (complaint.empty() && cfg.sample && (index + 1) % cfg.sample == 0) {
      shared.processes.fetch_add(1);
      complaint = runSubprocess(cfg, c, tmpDir);
    }
    {
      std::lock_guard<std::mutex> lock(gMutex);
      gCurrent = nullptr;
    }
    if (complaint.empty())
      return;
    shared.failures.fetch_add(1);
    std::string msg = "fuzz: FAIL: " + describe(c) + ": " + complaint + "\n" +
                      saveRepro(cfg, c, static_cast<unsigned>(index));
    writeAll(2, msg.data(), msg.size()); // one write: workers do not interleave lines
  };

  for (unsigned k; (k = shared.nextFile.fetch_add(1)) < order.size();) {
    const CorpusFile &f = files[order[k]];
    unsigned long index = f.firstCase;
    for (size_t cut : cutOffsets(f.text.size(), cfg.cutStride, cfg.fullCutLimit))
      runCase(Case{&f.path, "cut at " + std::to_string(cut), f.text.substr(0, cut)}, index++);
    if (f.text.empty())
      continue;
    std::mt19937_64 rng(fnv1a(f.text, cfg.seed * 0x9e3779b97f4a7c15ull + 1));
    for (unsigned i = 0; i < cfg.flips; ++i)
      runCase(flipCase(f.path, f.text, rng), index++);
  }

  {
    std::lock_guard<std::mutex> lock(gMutex);
    gDone = true;
  }
  gCv.notify_all();
  dog.join();
  fs::remove_all(tmpDir, ec);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Config cfg = parseArgs(argc, argv);

  if (!cfg.replay.empty()) {
    std::string text;
    if (!readFile(cfg.replay, text))
      usage("cannot read '" + cfg.replay + "'");
    tdsl::DriverOptions opts;
    opts.input = cfg.replayAs;
    opts.emit = cfg.emit;
    opts.stdlibDir = cfg.stdlib;
    int rc = tdsl::runCompiler(opts, std::cout, std::cerr, &text);
    std::cerr << "fuzz: replay exit status " << rc << "\n";
    return rc;
  }

  std::vector<CorpusFile> files;
  unsigned long totalCases = 0, sampled = 0;
  for (const std::string &path : collectCorpus(cfg.roots)) {
    CorpusFile f{path, "", totalCases};
    if (!readFile(path, f.text))
      usage("cannot read '" + path + "'");
    if (cfg.fullCutLimit && f.text.size() > cfg.fullCutLimit)
      ++sampled;
    totalCases += cutOffsets(f.text.size(), cfg.cutStride, cfg.fullCutLimit).size() +
                  (f.text.empty() ? 0 : cfg.flips);
    files.push_back(std::move(f));
  }
  if (files.empty())
    usage("no .tdsl file under the given paths");
  std::error_code ec;
  fs::create_directories(cfg.reproDir, ec);

  // The largest files first (their cuts cost quadratically), so the workers finish together.
  std::vector<unsigned> order(files.size());
  for (unsigned i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
    return files[a].text.size() > files[b].text.size();
  });

  void *mem =
      ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
    usage(std::string("mmap failed: ") + std::strerror(errno));
  Shared &shared = *new (mem) Shared();

  auto started = std::chrono::steady_clock::now();
  std::cout.flush();
  std::cerr.flush();
  std::vector<pid_t> workers;
  for (unsigned id = 0; id < std::min<size_t>(cfg.jobs, files.size()); ++id) {
    pid_t pid = ::fork();
    if (pid < 0)
      usage(std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
      int rc = worker(cfg, files, order, shared, id);
      std::cerr.flush();
      std::_Exit(rc);
    }
    workers.push_back(pid);
  }
  bool workerFailed = false;
  for (pid_t pid : workers) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
      continue;
    workerFailed = true;
    if (WIFSIGNALED(status))
      std::cerr << "fuzz: FAIL: a worker was killed by signal " << WTERMSIG(status) << " ("
                << strsignal(WTERMSIG(status)) << "); see the message above\n";
    else
      std::cerr << "fuzz: FAIL: a worker stopped with exit status " << WEXITSTATUS(status)
                << "; see the message above\n";
  }

  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  unsigned long cases = shared.cases.load(),
                failures = shared.failures.load() + (workerFailed ? 1 : 0);
  std::cerr << "fuzz: " << files.size() << " files (" << sampled << " over --full-cut-limit), "
            << shared.processes.load() << " runs of the tdslc binary, " << workers.size()
            << " workers, " << static_cast<unsigned long>(secs * 1000) << " ms\n";
  std::cout << "fuzz: " << cases << " cases, " << failures << " failures\n";
  if (!workerFailed && cases != totalCases) {
    std::cerr << "fuzz: internal error: ran " << cases << " cases of " << totalCases << "\n";
    return 1;
  }
  return failures ? 1 : 0;
}
