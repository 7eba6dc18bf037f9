//===- tools/tdsl-lsp/Primitives.cpp - The schedule primitives of spec §7, for the editor -----===//
//
// Implementation of tools/tdsl-lsp/Primitives.h.

#include "tools/tdsl-lsp/Primitives.h"

#include "passes/schedule/Apply.h"

#include <algorithm>

namespace tdsl::lsp {

const std::vector<PrimitiveInfo> &schedulePrimitives() {
  static const std::vector<PrimitiveInfo> table = {
      {"loops", "loops(block)", "loops, outer first", "loop", "The loops above a block.",
       "loops(${1:block})", "b"},
      {"split", "split(loop, [f0, …, fn])", "n+1 loops", "loop",
       "At most one `_`; a factor that does not divide adds a `where`; refused when the factors' "
       "product is below the extent.",
       "split(${1:loop}, [${2:_}, ${3:4}])", "l*"},
      {"fuse", "fuse(l0, l1, …)", "loop", "loop", "Consecutive, perfectly nested loops.",
       "fuse(${1:l0}, ${2:l1})", "ll"},
      {"reorder", "reorder(l0, l1, …)", "", "",
       "Loops of one nest, in the given order; refused across a block boundary.",
       "reorder(${1:l0}, ${2:l1})", "ll"},
      {"tile", "tile(l0, l1, [f0, f1])", "4 loops", "loop",
       "Split both, then reorder to l0o, l1o, l0i, l1i; the factors are the inner extents.",
       "tile(${1:l0}, ${2:l1}, [${3:f0}, ${4:f1}])", "ll*"},
      {"parallel", "parallel(loop)", "", "",
       "Refused if a block under it binds the loop to a reduce axis or the iterations depend on "
       "each other.",
       "parallel(${1:loop})", "l"},
      {"vectorize", "vectorize(loop)", "", "", "Constant extent; spatial only.",
       "vectorize(${1:loop})", "l"},
      {"unroll", "unroll(loop)", "", "", "Full unroll of a constant extent.", "unroll(${1:loop})",
       "l"},
      {"bind", "bind(loop, \"threadIdx.x\")", "", "", "cuda target; spatial only.",
       "bind(${1:loop}, \"${2|threadIdx.x,threadIdx.y,threadIdx.z,blockIdx.x,blockIdx.y,"
       "blockIdx.z|}\")",
       "l*"},
      {"compute_at", "compute_at(block, loop)", "", "",
       "Moves a producer under a loop of its consumer, computing just the region needed there.",
       "compute_at(${1:block}, ${2:loop})", "bl"},
      {"reverse_compute_at", "reverse_compute_at(block, loop)", "", "",
       "Moves a consumer under a loop of its producer.",
       "reverse_compute_at(${1:block}, ${2:loop})", "bl"},
      {"compute_inline", "compute_inline(block)", "", "",
       "Inlines a producer without reduce axes into its consumers; its buffer disappears.",
       "compute_inline(${1:block})", "b"},
      {"reverse_compute_inline", "reverse_compute_inline(block)", "", "",
       "Inlines an element-wise consumer into its producer.", "reverse_compute_inline(${1:block})",
       "b"},
      {"cache_read", "cache_read(block, buffer, \"scope\")", "block", "block",
       "A copy of `buffer` in `scope` that `block` reads instead.",
       "cache_read(${1:block}, ${2:buffer}, \"${3|local,shared,global|}\")", "bf*"},
      {"cache_write", "cache_write(block, buffer, \"scope\")", "block", "block",
       "`block` writes a cache in `scope`, copied back after.",
       "cache_write(${1:block}, ${2:buffer}, \"${3|local,shared,global|}\")", "bf*"},
      {"decompose_reduction", "decompose_reduction(block, loop)", "block", "block",
       "Splits `init` into its own block placed above `loop`.",
       "decompose_reduction(${1:block}, ${2:loop})", "bl"},
      {"rfactor", "rfactor(loop, axis)", "block", "block",
       "Factors a reduction over `loop` into a partial-result block; `axis` is where the "
       "factored dimension goes in the partial-result buffer.",
       "rfactor(${1:loop}, ${2:0})", "l*"},
      {"set_scope", "set_scope(block, buffer, \"scope\")", "", "",
       "Changes where an intermediate buffer lives.",
       "set_scope(${1:block}, ${2:buffer}, \"${3|local,shared,global|}\")", "bf*"},
      {"storage_align", "storage_align(block, buffer, axis, factor, offset)", "", "",
       "Pads a dimension's stride.",
       "storage_align(${1:block}, ${2:buffer}, ${3:axis}, ${4:factor}, ${5:offset})", "bf***"},
      {"transform_layout", "transform_layout(block, buffer, (i, j) => (i / 16, j, i % 16))", "", "",
       "Re-lays out an intermediate buffer.",
       "transform_layout(${1:block}, ${2:buffer}, (${3:i, j}) => (${4:j, i}))", "bf*"},
      {"blockize", "blockize(loop)", "block", "block", "Makes the sub-tree under `loop` one block.",
       "blockize(${1:loop})", "l"},
      {"tensorize", "tensorize(loop, \"intrinsic\")", "", "",
       "Replaces the sub-tree by the micro-kernel of a declared `intrinsic NAME(DESC, IMPL);` "
       "whose description it matches (`import \"intrin\"` for the built-in CPU ones).",
       "tensorize(${1:loop}, \"${2:intrinsic}\")", "l*"},
      {"sample_perfect_tile", "sample_perfect_tile(loop, n[, max_innermost])", "n integers",
       "integer",
       "A decision: n factors whose product is the loop's extent (the innermost at most "
       "`max_innermost`).",
       "sample_perfect_tile(${1:loop}, ${2:2})", "l**"},
      {"sample_categorical", "sample_categorical([v0, …], [p0, …])", "an integer", "integer",
       "A decision: one of the values, with the given probabilities.",
       "sample_categorical([${1:v0, v1}], [${2:0.5, 0.5}])", "**"},
  };
  return table;
}

const PrimitiveInfo *findPrimitive(const std::string &name) {
  for (const PrimitiveInfo &p : schedulePrimitives())
    if (p.name == name)
      return &p;
  return nullptr;
}

bool primitiveImplemented(const std::string &name) {
  const std::vector<std::string> &known = schedulePrimitiveNames();
  return std::find(known.begin(), known.end(), name) != known.end();
}

} // namespace tdsl::lsp
