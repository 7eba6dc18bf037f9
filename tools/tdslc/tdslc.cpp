//===- tools/tdslc/tdslc.cpp - Tdslc — the TDSL compiler driver (spec §9) ---------------------===//

#include "tools/driver/Driver.h"

#include <iostream>

int main(int argc, char **argv) {
  tdsl::DriverOptions opts;
  if (std::optional<int> status = tdsl::parseCommandLine(argc, argv, opts, std::cout, std::cerr))
    return *status;
  return tdsl::runCompiler(opts, std::cout, std::cerr);
}
