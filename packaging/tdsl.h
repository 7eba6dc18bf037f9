//===- packaging/tdsl.h -----------------------------------------------------------------------===//
//
// ===- packaging/tdsl.h - The runtime interface of compiled TDSL code
// --------------------------===//
//
// Installed as <prefix>/include/tdsl.h. What every object compiled by tdslc shares (spec §10):
// the DLPack types of the `NAME_dlpack` entries and `tdsl_last_error()`, the message of the
// last failure of the calling thread. The per-file headers of `tdslc --emit=header` declare
// the functions themselves; this header is enough for code that only handles errors or
// builds DLTensors. C and C++.

#ifndef TDSL_H
#define TDSL_H

#include <stdint.h>

#include <dlpack/dlpack.h>

#define TDSL_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/// The message of the last non-zero status returned by a TDSL function on this thread. Read it
/// before the thread calls another TDSL function.
const char *tdsl_last_error(void);

#ifdef __cplusplus
}
#endif

#endif // TDSL_H
