//===- test/fuzzers/ReplayParse.cpp -----------------------------------------------------------===//
//
// ===- test/fuzzers/ReplayParse.cpp - FuzzParse.cpp for tdsl-fuzz-replay
// --------===//
//
// The harness under another entry name, so that one replay binary holds all three.

#define LLVMFuzzerTestOneInput tdslFuzzParse
#include "test/fuzzers/FuzzParse.cpp"
