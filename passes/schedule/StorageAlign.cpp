//===- passes/schedule/StorageAlign.cpp -------------------------------------------------------===//
//
// storage_align(block, buffer, axis, factor, offset): pads a stride.

#include "passes/schedule/Primitives.h"

#include "passes/schedule/BufferUtils.h"

namespace tdsl::schedule {

using namespace ir;

/// storage_align(Y, Y, 0, 32, 8) (TVM's storage_align): the stride of dimension `axis` of the
/// intermediate buffer Y becomes the smallest `k * factor + offset` not below its dense value,
/// so that rows start at staggered banks. Only the buffer's description changes (its `align`);
/// lowering lays it out.
///
///   alloc Y: f32[128, 128];   -->   alloc Y: f32[128, 128]   (align[0] = {32, 8})
///
/// Refused when the block does not write the buffer, for inputs and outputs, when `axis` is not
/// in [-rank, rank), when `factor` is not positive, and when `offset` is not in [0, factor).
void storageAlign(ScheduleState &s, const std::string &blockName, const Buffer &buffer,
                  int64_t axis, int64_t factor, int64_t offset) {
  // Step 1: check.
  const Block *block = s.block(blockName);
  requireWrites(block, buffer);
  requireAlloc(s, buffer, "storage_align");
  int64_t rank = static_cast<int64_t>(buffer.rank());
  if (axis < -rank || axis >= rank)
    throw ScheduleError("axis " + std::to_string(axis) + " is out of range: '" + buffer.name() +
                            "' has " + std::to_string(rank) + " dimension" + (rank == 1 ? "" : "s"),
                        buffer->loc, "'" + buffer.name() + "' declared here");
  if (axis < 0)
    axis += rank;
  if (factor <= 0)
    throw ScheduleError("factor " + std::to_string(factor) + " is not positive");
  if (offset < 0 || offset >= factor)
    throw ScheduleError("offset " + std::to_string(offset) + " is not in [0, " +
                        std::to_string(factor) + "), the range for factor " +
                        std::to_string(factor));
  // Step 2: rewrite.
  BufferSpec spec(buffer);
  spec.align.resize(static_cast<size_t>(rank));
  spec.align[static_cast<size_t>(axis)] = StorageAlign{factor, offset};
  // Step 3: replace.
  replaceBuffer(s, buffer, spec.make());
}

} // namespace tdsl::schedule
