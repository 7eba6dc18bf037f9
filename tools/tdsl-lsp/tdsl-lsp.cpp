//===- tools/tdsl-lsp/tdsl-lsp.cpp - The TDSL language server over stdio ----------------------===//
//
// `tdsl-lsp [--stdlib DIR] [-I DIR]...`: reads LSP messages on stdin and answers on stdout
// (tools/tdsl-lsp/Server.h). Exit status: 0 after `shutdown` then `exit`, 1 on `exit` without
// `shutdown` or when the input ends first, 2 for a bad command line.

#include "frontend/ModuleLoader.h"
#include "tools/tdsl-lsp/Server.h"

#include <iostream>

namespace {

const char *kUsage = R"(usage: tdsl-lsp [options]

The TDSL language server: the Language Server Protocol over stdin/stdout, for editors
(editors/vscode starts it). Diagnostics as you type, hover, go to definition, document
symbols and schedule-primitive completion.

  --stdlib DIR   standard library folder (default: $TDSL_STDLIB, or share/tdsl/stdlib next
                 to the binary)
  -I DIR         add DIR to the import search path (repeatable; also -IDIR)
  --help         print this help and exit
  --version      print the version and exit
)";

} // namespace

int main(int argc, char **argv) {
  tdsl::ImportOptions imports;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "--version") {
      std::cout << "tdsl-lsp 0.1.0 (TDSL language server)\n";
      return 0;
    }
    if ((a == "--stdlib" || a == "-I") && i + 1 < argc) {
      (a == "-I" ? imports.includeDirs.emplace_back(argv[++i]) : imports.stdlibDir = argv[++i]);
    } else if (a.rfind("--stdlib=", 0) == 0) {
      imports.stdlibDir = a.substr(9);
    } else if (a.rfind("-I", 0) == 0 && a.size() > 2) {
      imports.includeDirs.push_back(a.substr(2));
    } else if (a == "--stdio") {
      // What some clients pass to say the transport; stdio is the only one.
    } else {
      std::cerr << "tdsl-lsp: error: unknown or incomplete option '" << a
                << "' (see tdsl-lsp --help)\n";
      return 2;
    }
  }
  if (imports.stdlibDir.empty())
    imports.stdlibDir = tdsl::defaultStdlibDir();

  std::ios::sync_with_stdio(false);
  tdsl::lsp::Server server(std::move(imports), [](const tdsl::lsp::json &msg) {
    tdsl::lsp::writeMessage(std::cout,
                            msg.dump(-1, ' ', false, tdsl::lsp::json::error_handler_t::replace));
  });
  std::string body;
  while (!server.exited()) {
    tdsl::lsp::ReadStatus st = tdsl::lsp::readMessage(std::cin, body);
    if (st == tdsl::lsp::ReadStatus::Eof)
      return 1;
    if (st == tdsl::lsp::ReadStatus::BadHeader)
      server.transportError(body);
    else
      server.handle(body);
  }
  return server.exitCode();
}
