//===- passes/lower/LowerGraph.h - Graphs to loop-level functions --------------------------===//
//
// A planned GraphFunc (passes/graph/Graph.h, graph.plan-memory) becomes a PrimFunc the backends
// emit like any lowered function, with the ABI of spec §10: its inputs, one output per result
// (named after the returned value), its shape variables. The body:
//
//   alloc arena: u64[(arena bytes + 7) / 8]           (absent when nothing is in the arena)
//   view h: f32[B * 128] = arena @ 0                  (each arena value at its offset)
//   view flat: f32[B * 16] = x @ 0                    (a reshape: a view of its source)
//   call_raw nn.linear(flat, w, b, h, B, 16, 128)     (raw entry: inputs, outputs, shape vars)
//   ...
//   for i in 0..B * 10 { out[i] = h2[i]; }            (only for a result not computed in place)
//
// Every buffer is flat (rank 1). A call whose status is non-zero ends the function with that
// status, the arena released (FuncCall in ir/IR.h).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <map>

namespace tdsl::lower {

/// The signature of graph `g` as a PrimFunc with an empty body: its inputs, one output buffer
/// per result (fresh buffers of the results' types, named after them), its shape variables.
/// What the DLPack entry validates.
ir::Func graphSignature(const ir::Func &g);

/// The flat buffer (rank 1, role Constant, named after the constant) of each graph constant of
/// `module`, by the constant's graph value: what lowered graphs name for it.
std::map<const ir::BufferNode *, ir::Buffer> flatConstants(const ir::Module &module);

/// Lowers graph `g` of `module` (planned by graph.plan-memory, or planned here). A graph
/// constant it uses is named by its buffer in `constants` (flatConstants).
///
/// Requires: a checked graph without open constants whose callees are concrete.
/// Guarantees: a PrimFunc without blocks, rank-1 buffers; inputs and outputs are the flat
/// forms of graphSignature(g)'s, position by position.
ir::Func lowerGraph(const ir::Func &g, const ir::Module &module,
                    const std::map<const ir::BufferNode *, ir::Buffer> &constants = {});

/// The graph constants graph `g` reads (call arguments, reshape sources, results).
std::vector<ir::Buffer> constantsUsed(const ir::GraphFunc &g);

/// The callees of the FuncCalls in `lowered` (lowered PrimFuncs), each once, in order of first
/// call: what a backend declares and a JIT must resolve.
std::vector<std::string> calledFunctions(const std::vector<ir::Func> &lowered);

} // namespace tdsl::lower
