//===- support/Target.h - The targets a module is compiled for -------------------------------===//
//
// `--target=cpu|cuda` of every tool: which schedules apply (`schedule F for cuda`), which
// lowering runs (passes/Pipeline.h) and which backends may emit the result.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>

namespace tdsl {

enum class Target { CPU, CUDA };

/// The spelling of `--target` and of `schedule F for NAME`: "cpu" or "cuda".
inline const char *targetName(Target t) { return t == Target::CUDA ? "cuda" : "cpu"; }

/// The target a spelling names; nullopt for any other text.
inline std::optional<Target> parseTarget(const std::string &name) {
  if (name == "cpu")
    return Target::CPU;
  if (name == "cuda")
    return Target::CUDA;
  return std::nullopt;
}

} // namespace tdsl
