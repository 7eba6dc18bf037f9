//===- tools/tdsl-import/tdsl-import.cpp - Tdsl-import — ONNX models to TDSL (spec §12) -----===//

#include "tools/tdsl-import/Importer.h"

#include <iostream>

int main(int argc, char **argv) {
  tdsl::import::ImportOptions opts;
  if (std::optional<int> status =
          tdsl::import::parseCommandLine(argc, argv, opts, std::cout, std::cerr))
    return *status;
  return tdsl::import::runImporter(opts, std::cerr);
}
