//===- test/CodeGen/CPP/Inputs/sweep_harness.cpp ----------------------------------------------===//
//
// The driver of the C++ sweep (sweep.py): one executable runs any function
// of one emitted translation unit. The table `tdsl_sweep_entries` (generated per unit by
// sweep.py) maps a source function name to a wrapper that calls its DLPack entry.
// Usage: sweep_harness FUNC ARG... where ARG is IN.npy, out:INIT.npy:RESULT.npy, or s:VALUE
// for a scalar input (passed as a double; the wrapper converts it). Exit 0 on success, 1 when
// the function returns non-zero (tdsl_last_error() printed), 2 on a usage error.

#define TDSL_HARNESS_NO_MAIN
#include "harness.cpp"

#include <cstdlib>

struct SweepEntry {
  const char *name;
  int (*call)(DLTensor *tensors, const double *scalars);
};
extern const SweepEntry tdsl_sweep_entries[];
extern "C" const char *tdsl_last_error(void);

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  const SweepEntry *entry = tdsl_sweep_entries;
  while (entry->name && std::strcmp(entry->name, argv[1]) != 0)
    ++entry;
  if (!entry->name) {
    std::cerr << "sweep_harness: no function '" << argv[1] << "'\n";
    return 2;
  }
  std::vector<Array> arrays;
  std::vector<double> scalars;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i], path = arg;
    if (arg.rfind("s:", 0) == 0) {
      scalars.push_back(std::strtod(arg.c_str() + 2, nullptr));
      continue;
    }
    Array a;
    if (arg.rfind("out:", 0) == 0) {
      size_t colon = arg.find(':', 4);
      path = arg.substr(4, colon - 4);
      a.resultPath = arg.substr(colon + 1);
    }
    a.path = path;
    if (!readNpy(path, a)) {
      std::cerr << "sweep_harness: cannot read '" << path << "'\n";
      return 2;
    }
    arrays.push_back(std::move(a));
  }
  std::vector<DLTensor> t(arrays.size() + 1);
  for (size_t i = 0; i < arrays.size(); ++i) {
    Array &a = arrays[i];
    t[i].data = a.bytes.data();
    t[i].device = DLDevice{kDLCPU, 0};
    t[i].ndim = static_cast<int32_t>(a.shape.size());
    t[i].dtype = dlType(a.descr);
    const std::string &name = a.path;
    if (name.size() > 9 && name.compare(name.size() - 9, 9, ".bf16.npy") == 0)
      t[i].dtype.code = kDLBfloat;
    t[i].shape = a.shape.data();
    t[i].strides = nullptr;
    t[i].byte_offset = 0;
  }
  scalars.push_back(0.0);
  if (int status = entry->call(t.data(), scalars.data())) {
    std::cerr << "sweep_harness: status " << status << ": " << tdsl_last_error() << "\n";
    return 1;
  }
  for (const Array &a : arrays)
    if (!a.resultPath.empty() && !writeNpy(a.resultPath, a)) {
      std::cerr << "sweep_harness: cannot write '" << a.resultPath << "'\n";
      return 2;
    }
  return 0;
}
