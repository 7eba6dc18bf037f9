//===- runtime/Profile.cpp - The timers of code compiled for --profile --------------------===//
#include "runtime/Profile.h"

#include <chrono>
#include <unordered_map>

namespace {

bool recording = false;
std::unordered_map<int32_t, int64_t> opened; // region -> begin time
std::vector<tdsl::runtime::ProfileEvent> events;

} // namespace

namespace tdsl::runtime {

int64_t profileNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void profileStart() {
  opened.clear();
  events.clear();
  events.reserve(4096);
  recording = true;
}

std::vector<ProfileEvent> profileStop() {
  recording = false;
  opened.clear();
  return std::move(events);
}

} // namespace tdsl::runtime

extern "C" void tdsl_profile_begin(int32_t region) {
  if (recording)
    opened[region] = tdsl::runtime::profileNow();
}

extern "C" void tdsl_profile_end(int32_t region) {
  if (!recording)
    return;
  int64_t now = tdsl::runtime::profileNow();
  auto it = opened.find(region);
  if (it != opened.end())
    events.push_back({region, it->second, now});
}
