//===- tools/tdsl-import/Importer.h - The ONNX importer (spec §12) ---------------------------===//
//
// `tdsl-import MODEL.onnx [-o OUT.tdsl] [--name GRAPH]`: an ONNX model (read, checked and
// shape-inferred by the official ONNX library) becomes a module that imports "nn" and holds one
// graph calling the standard library, with every initializer a `const` loaded from
// OUT.weights/NAME.npy. docs/importer.md lists the operators and attributes it accepts.

#pragma once

#include <iosfwd>
#include <optional>
#include <string>

namespace tdsl::import {

struct ImportOptions {
  std::string model;              // MODEL.onnx
  std::string output;             // OUT.tdsl; empty: MODEL with the extension .tdsl
  std::string graphName = "main"; // --name
};

/// Parses a tdsl-import command line. Returns std::nullopt to go on importing, or the exit
/// status to stop with (0 after --help, 2 on a bad command line, message on `err`).
std::optional<int> parseCommandLine(int argc, const char *const *argv, ImportOptions &opts,
                                    std::ostream &out, std::ostream &err);

/// Translates the model. Returns 0 when OUT.tdsl and its weights were written, 1 on an error
/// (an unreadable or invalid model, an unsupported operator or attribute: message on `err`,
/// nothing written).
int runImporter(const ImportOptions &opts, std::ostream &err);

} // namespace tdsl::import
