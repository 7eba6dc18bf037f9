//===- test/fuzzers/ReplaySchedule.cpp --------------------------------------------------------===//
//
// ===- test/fuzzers/ReplaySchedule.cpp - FuzzSchedule.cpp for tdsl-fuzz-replay
// --------===//
//
// The harness under another entry name, so that one replay binary holds all three.

#define LLVMFuzzerTestOneInput tdslFuzzSchedule
#include "test/fuzzers/FuzzSchedule.cpp"
