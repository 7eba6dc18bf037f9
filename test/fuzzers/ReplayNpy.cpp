//===- test/fuzzers/ReplayNpy.cpp -------------------------------------------------------------===//
//
// ===- test/fuzzers/ReplayNpy.cpp - FuzzNpy.cpp for tdsl-fuzz-replay
// --------===//
//
// The harness under another entry name, so that one replay binary holds all three.

#define LLVMFuzzerTestOneInput tdslFuzzNpy
#include "test/fuzzers/FuzzNpy.cpp"
