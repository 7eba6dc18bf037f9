//===- tune/Database.h - The tuning database --------------------------------------------------===//
//
// The database tdsl-tune writes and `tdslc --tuning-db` reads (spec §7, §12; docs/tuning.md):
// JSON lines, one record per measurement, keyed by a structural hash of the function (its
// printed IR before scheduling, -D constants bound) and by the target (CPU model, ISA features,
// thread count), so that a record measured on one machine never applies to another. Database is
// MetaSchedule's seam: the search reads and commits records through it, in memory
// (MemoryDatabase, for tests) or in a file (JsonDatabase).
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "passes/schedule/Sample.h"

#include <optional>
#include <string>
#include <vector>

namespace tdsl::tuning {

/// One measurement.
struct Record {
  std::string func;   ///< the function's name (for people; the key decides)
  std::string key;    ///< functionKey()
  std::string target; ///< targetKey()
  int generated = -1; ///< the generated design space's level, or -1: the function's own
  std::vector<schedule::Decision> decisions;
  std::string schedule; ///< the plain schedule (no sample_*), as -o writes it
  bool ok = false;      ///< ran and matched the unscheduled function
  double seconds = 0;   ///< median time per call (ok records)
  std::string error;    ///< why not ok
};

/// The structural hash of an unscheduled function: FNV-1a of its printed IR, 16 hex digits.
std::string functionKey(const ir::Func &func);
/// This machine with `threads` threads (0: OMP_NUM_THREADS, else the number of cores):
/// "cpu=MODEL;isa=avx2,fma,…;threads=T".
std::string targetKey(int threads = 0);

/// Every record of `file`; false, with `error` saying why, when it cannot be read or is not a
/// tuning database (a line that is not a record: "line 3 is not a tuning record"). Blank lines
/// are allowed; an empty file is an empty database.
bool readRecords(const std::string &file, std::vector<Record> &out, std::string &error);
/// What tells target key `recorded` from `here` ("threads=1, here threads=2"); empty when equal.
std::string targetDifference(const std::string &recorded, const std::string &here);
/// A record as one JSON line (no newline).
std::string toJson(const Record &r);
/// Appends `r` to `file`; false when it cannot be written.
bool appendRecord(const std::string &file, const Record &r);

/// One candidate's measurements (its records of one key and target with the same level and
/// decisions): a record of the median time (the lower middle one of an even count), the median
/// (of an even count, the mean of the middle two), and how many.
struct Measured {
  const Record *median = nullptr;
  double seconds = 0;
  size_t count = 0;
};
/// The ok candidates of `records` for `key` on `target`, fastest median first (ties: the
/// candidate measured first). A candidate measured more than once is ranked by its median, so
/// that one lucky measurement does not make it the best.
std::vector<Measured> measuredCandidates(const std::vector<Record> &records, const std::string &key,
                                         const std::string &target);
/// The record of the fastest candidate by median (measuredCandidates), or null.
const Record *best(const std::vector<Record> &records, const std::string &key,
                   const std::string &target);

/// Where the records of a tuning run are kept: every record there was when it opened, then
/// those committed, in order. Pointers into records() hold until the next commit().
class Database {
public:
  virtual ~Database() = default;
  const std::vector<Record> &records() const { return records_; }
  /// Keeps `r`; false when it cannot be stored (then it is not kept).
  virtual bool commit(const Record &r) = 0;

protected:
  std::vector<Record> records_;
};

/// Records in memory only.
class MemoryDatabase : public Database {
public:
  MemoryDatabase() = default;
  explicit MemoryDatabase(std::vector<Record> records) { records_ = std::move(records); }
  bool commit(const Record &r) override;
};

/// A JSON-lines file (readRecords, appendRecord): a file that is not a tuning database is
/// refused by open() and never written.
class JsonDatabase : public Database {
public:
  /// Reads `file` (a missing one is an empty database, created by the first commit); false,
  /// with `error`, when it is not a tuning database or cannot be read.
  bool open(const std::string &file, std::string &error);
  bool commit(const Record &r) override;
  const std::string &file() const { return file_; }

private:
  std::string file_;
};
} // namespace tdsl::tuning
