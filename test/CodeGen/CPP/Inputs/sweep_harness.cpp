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
    std::string arg = argv[i];
    if (arg.rfind("s:", 0) == 0) {
      scalars.push_back(std::strtod(arg.c_str() + 2, nullptr));
      continue;
    }
    arrays.emplace_back();
    if (!loadArgument(arg, arrays.back(), "sweep_harness"))
      return 2;
  }
  std::vector<DLTensor> t;
  for (Array &a : arrays)
    t.push_back(tensorOf(a));
  t.emplace_back(); // never read: keeps t.data() valid for a function without tensors
  scalars.push_back(0.0);
  if (int status = entry->call(t.data(), scalars.data())) {
    std::cerr << "sweep_harness: status " << status << ": " << tdsl_last_error() << "\n";
    return 1;
  }
  return writeResults(arrays, "sweep_harness") ? 0 : 2;
}
