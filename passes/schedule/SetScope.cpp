//===- passes/schedule/SetScope.cpp -----------------------------------------------------------===//
//
// set_scope(block, buffer, scope): where an intermediate buffer lives.

#include "passes/schedule/Primitives.h"

#include "passes/schedule/BufferUtils.h"

namespace tdsl::schedule {

using namespace ir;

/// set_scope(Y, Y, "local") (TVM's set_scope): the buffer Y, written by block Y, lives in the
/// given scope; every use refers to the new buffer.
///
///   alloc Y: f32[128, 128];              alloc Y: f32[128, 128] scope(local);
///   block Y(…) { Y[vi, vj] = …; }   -->  block Y(…) { Y[vi, vj] = …; }
///
/// Refused when the block does not write the buffer, and for inputs and outputs (their memory
/// belongs to the caller).
void setScope(ScheduleState &s, const std::string &blockName, const Buffer &buffer,
              MemScope scope) {
  // Step 1: check.
  const Block *block = s.block(blockName);
  requireWrites(block, buffer);
  requireAlloc(s, buffer, "set_scope");
  if (buffer.scope() == scope)
    return;
  // Step 2: rewrite.
  BufferSpec spec(buffer);
  spec.scope = scope;
  // Step 3: replace.
  replaceBuffer(s, buffer, spec.make());
}

} // namespace tdsl::schedule
