//===- runtime/Profile.h - The timers of code compiled for --profile (spec §9) ------------===//
//
// Code compiled with timed regions (passes/lower/Profile.h: `tdsl-run --profile`) calls
//
//   extern "C" void tdsl_profile_begin(int32_t region);
//   extern "C" void tdsl_profile_end(int32_t region);
//
// around each region; the program that runs it defines them (tdsl-run binds these to its JIT).
// Regions sit outside parallel loops, so the calls come from the thread that called the entry.
// While recording, each end adds one event (the region, its begin and end times); otherwise
// the calls do nothing.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <vector>

extern "C" void tdsl_profile_begin(int32_t region);
extern "C" void tdsl_profile_end(int32_t region);

namespace tdsl::runtime {

/// One run of a region: times in nanoseconds of a steady clock (profileNow()).
struct ProfileEvent {
  int32_t region = 0;
  int64_t begin = 0, end = 0;
};

/// Nanoseconds of the clock the events use.
int64_t profileNow();

/// Starts recording events (the earlier ones are dropped).
void profileStart();

/// Stops recording and returns the events since profileStart(), in the order they ended.
std::vector<ProfileEvent> profileStop();

} // namespace tdsl::runtime
