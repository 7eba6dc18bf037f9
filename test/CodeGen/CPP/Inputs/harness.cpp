//===- test/CodeGen/CPP/Inputs/harness.cpp ----------------------------------------------------===//
//
// A generic driver for functions emitted by `tdslc --emit=cpp`: loads one .npy
// file per tensor argument (inputs, then outputs with their initial contents), calls the
// function's DLPack entry through the TDSL_CALL(t) macro given on the command line, e.g.
// -DTDSL_HEADER='"mm.h"' '-DTDSL_CALL(t)=mm_dlpack(&t[0], &t[1], &t[2])'
// and writes the outputs back. Usage: harness IN.npy ... out:INIT.npy:RESULT.npy ...
// A file named *.bf16.npy holds bf16 bit patterns (<u2). Exit status 0 on success; on failure
// it prints tdsl_last_error().
// With TDSL_HARNESS_NO_MAIN defined it only provides the .npy helpers (sweep_harness.cpp).
// With TDSL_HARNESS_SPLIT defined it needs no header: main() calls the function through
// tdsl_harness_call(t) and tdsl_harness_error(), which a small shim compiled with the
// function's header defines (harness_split.py writes it): one object of this driver serves
// every function of a test.

#if defined(TDSL_HARNESS_NO_MAIN) || defined(TDSL_HARNESS_SPLIT)
#include <dlpack/dlpack.h>
#else
#include TDSL_HEADER
#endif
#ifdef TDSL_HARNESS_SPLIT
extern "C" int32_t tdsl_harness_call(DLTensor *t);
extern "C" const char *tdsl_harness_error(void);
#define TDSL_CALL(t) tdsl_harness_call((t).data())
#define tdsl_last_error tdsl_harness_error
#endif

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Array {
  std::string descr;
  std::vector<int64_t> shape;
  std::vector<char> bytes;
  std::string path;
  std::string resultPath; // empty for an input
};

DLDataType dlType(const std::string &descr) {
  char kind = descr[1];
  int bytes = std::stoi(descr.substr(2));
  uint8_t code = kind == 'f' ? kDLFloat : kind == 'i' ? kDLInt : kDLUInt;
  if (kind == 'b')
    code = kDLUInt;
  return DLDataType{code, static_cast<uint8_t>(bytes * 8), 1};
}

bool readNpy(const std::string &path, Array &a) {
  std::ifstream in(path, std::ios::binary);
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return false;
  uint32_t headerLen = 0;
  if (magic[6] == 1) {
    uint16_t n;
    in.read(reinterpret_cast<char *>(&n), 2);
    headerLen = n;
  } else {
    in.read(reinterpret_cast<char *>(&headerLen), 4);
  }
  std::string header(headerLen, '\0');
  in.read(&header[0], headerLen);
  auto field = [&](const char *key) {
    size_t k = header.find(key);
    return k == std::string::npos ? std::string() : header.substr(k + std::strlen(key));
  };
  std::string d = field("'descr': '");
  a.descr = d.substr(0, d.find('\''));
  if (field("'fortran_order': ").rfind("True", 0) == 0)
    return false;
  std::string s = field("'shape': (");
  s = s.substr(0, s.find(')'));
  std::stringstream ss(s);
  std::string item;
  int64_t count = 1;
  while (std::getline(ss, item, ','))
    if (item.find_first_not_of(' ') != std::string::npos) {
      a.shape.push_back(std::stoll(item));
      count *= a.shape.back();
    }
  a.bytes.resize(static_cast<size_t>(count * std::stoi(a.descr.substr(2))));
  return static_cast<bool>(in.read(a.bytes.data(), static_cast<std::streamsize>(a.bytes.size())));
}

bool writeNpy(const std::string &path, const Array &a) {
  std::string shape; // Python's tuple syntax: (), (5,), (2, 3)
  for (size_t i = 0; i < a.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(a.shape[i]);
  if (a.shape.size() == 1)
    shape += ",";
  std::string header =
      "{'descr': '" + a.descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  uint16_t n = static_cast<uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  out.write(reinterpret_cast<const char *>(&n), 2);
  out << header;
  out.write(a.bytes.data(), static_cast<std::streamsize>(a.bytes.size()));
  return static_cast<bool>(out);
}

/// Reads the array an argument names: IN.npy, or out:INIT.npy:RESULT.npy (read from INIT,
/// written back to RESULT). False, with a message from `tool`, when it cannot be read.
bool loadArgument(const std::string &arg, Array &a, const char *tool) {
  std::string path = arg;
  if (arg.rfind("out:", 0) == 0) {
    size_t colon = arg.find(':', 4);
    path = arg.substr(4, colon - 4);
    a.resultPath = arg.substr(colon + 1);
  }
  a.path = path;
  if (readNpy(path, a))
    return true;
  std::cerr << tool << ": cannot read '" << path << "'\n";
  return false;
}

/// A DLTensor over `a`'s bytes (compact, on the CPU); a file named *.bf16.npy holds bf16.
DLTensor tensorOf(Array &a) {
  DLTensor t{};
  t.data = a.bytes.data();
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int32_t>(a.shape.size());
  t.dtype = dlType(a.descr);
  const std::string &name = a.path;
  if (name.size() > 9 && name.compare(name.size() - 9, 9, ".bf16.npy") == 0)
    t.dtype.code = kDLBfloat;
  t.shape = a.shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  return t;
}

/// Writes every output argument back to its RESULT file.
bool writeResults(const std::vector<Array> &arrays, const char *tool) {
  for (const Array &a : arrays)
    if (!a.resultPath.empty() && !writeNpy(a.resultPath, a)) {
      std::cerr << tool << ": cannot write '" << a.resultPath << "'\n";
      return false;
    }
  return true;
}

} // namespace

#ifndef TDSL_HARNESS_NO_MAIN
int main(int argc, char **argv) {
  std::vector<Array> arrays(static_cast<size_t>(argc - 1));
  for (int i = 1; i < argc; ++i)
    if (!loadArgument(argv[i], arrays[static_cast<size_t>(i - 1)], "harness"))
      return 2;
  std::vector<DLTensor> t;
  for (Array &a : arrays)
    t.push_back(tensorOf(a));
  if (int32_t status = TDSL_CALL(t)) {
    std::cerr << "harness: status " << status << ": " << tdsl_last_error() << "\n";
    return 1;
  }
  return writeResults(arrays, "harness") ? 0 : 2;
}
#endif
