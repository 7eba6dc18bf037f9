//===- test/fuzzers/FuzzNpy.cpp - libFuzzer harness: reading .npy files (runtime/Npy) ---------===//
//
// Any bytes as a .npy file (through an in-memory file, /proc/self/fd of a memfd): readNpy
// either returns a tensor whose byte count matches its dtype and shape, or an error message —
// never a crash, an exception or a huge allocation. A tensor read is written back and read
// again: same dtype, shape and bytes.

#include "runtime/Npy.h"

#include <cstdlib>
#include <iostream>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

using namespace tdsl;

namespace {

/// A memfd holding `data`, named by its /proc path; rewritten for each input.
struct MemFile {
  int fd = memfd_create("fuzz-npy", 0);
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  void write(const uint8_t *data, size_t size) {
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != ssize_t(size)) {
      std::cerr << "fuzz-npy: cannot write the memfd\n";
      std::abort();
    }
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static MemFile in, out;
  in.write(data, size);
  std::string error;
  std::optional<runtime::Tensor> t;
  try {
    t = runtime::readNpy(in.path, error);
  } catch (const std::exception &e) {
    std::cerr << "fuzz-npy: FAILURE: readNpy threw " << e.what() << "\n";
    std::abort();
  }
  if (!t) {
    if (error.empty()) {
      std::cerr << "fuzz-npy: FAILURE: refused without a message\n";
      std::abort();
    }
    return 0;
  }
  if (int64_t(t->bytes.size()) != t->numElements() * int64_t(t->dtype.storageBytes())) {
    std::cerr << "fuzz-npy: FAILURE: " << t->typeString() << " with " << t->bytes.size()
              << " bytes\n";
    std::abort();
  }
  std::string path = out.path;
  if (!runtime::writeNpy(path, *t, error)) {
    std::cerr << "fuzz-npy: FAILURE: cannot write back " << t->typeString() << ": " << error
              << "\n";
    std::abort();
  }
  std::optional<runtime::Tensor> back = runtime::readNpy(path, error);
  if (!back || back->dtype != t->dtype || back->shape != t->shape || back->bytes != t->bytes) {
    std::cerr << "fuzz-npy: FAILURE: " << t->typeString()
              << " does not read back: " << (back ? back->typeString() : error) << "\n";
    std::abort();
  }
  return 0;
}
