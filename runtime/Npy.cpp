//===- runtime/Npy.cpp - NumPy .npy files -------------------------------------------------===//
#include "runtime/Npy.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

namespace tdsl::runtime {

using ir::DType;
using Code = DType::Code;

namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct DescrEntry {
  Code code;
  const char *descr;
};
// bf16 is absent: it is written as <u2 and read back as u16.
const DescrEntry kDescrs[] = {{Code::Bool, "|b1"}, {Code::I8, "|i1"},  {Code::I16, "<i2"},
                              {Code::I32, "<i4"},  {Code::I64, "<i8"}, {Code::U8, "|u1"},
                              {Code::U16, "<u2"},  {Code::U32, "<u4"}, {Code::U64, "<u8"},
                              {Code::F16, "<f2"},  {Code::F32, "<f4"}, {Code::F64, "<f8"}};

/// The value of `key` in the header dict: the text from after `'key':` up to the next top-level
/// `,` or `}`. Returns false when the key is missing.
bool findValue(const std::string &header, const std::string &key, std::string &value) {
  size_t pos = header.find("'" + key + "'");
  if (pos == std::string::npos)
    return false;
  pos = header.find(':', pos);
  if (pos == std::string::npos)
    return false;
  ++pos;
  int depth = 0;
  size_t end = pos;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  value = header.substr(pos, end - pos);
  // Trim spaces.
  size_t b = value.find_first_not_of(" \t");
  size_t e = value.find_last_not_of(" \t");
  value = b == std::string::npos ? "" : value.substr(b, e - b + 1);
  return true;
}

/// A Python tuple of non-negative integers as NumPy writes it: `()`, `(3,)`, `(2, 3)`; spaces
/// around the items, a trailing comma, Python 2's `L` suffix. A missing comma (`(3 4)`), an
/// empty item (`(3,,4)`, `(,)`) or anything else is refused.
bool parseShape(const std::string &text, std::vector<int64_t> &shape) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    return false;
  std::string inner = text.substr(1, text.size() - 2);
  size_t i = 0;
  auto skipSpaces = [&] {
    while (i < inner.size() && inner[i] == ' ')
      ++i;
  };
  skipSpaces();
  while (i < inner.size()) {
    if (!std::isdigit(static_cast<unsigned char>(inner[i])))
      return false;
    int64_t v = 0;
    while (i < inner.size() && std::isdigit(static_cast<unsigned char>(inner[i]))) {
      v = v * 10 + (inner[i] - '0');
      if (v > (int64_t(1) << 48))
        return false;
      ++i;
    }
    if (i < inner.size() && inner[i] == 'L') // Python 2 longs
      ++i;
    shape.push_back(v);
    skipSpaces();
    if (i == inner.size())
      break;
    if (inner[i] != ',')
      return false;
    ++i;
    skipSpaces();
  }
  return true;
}

} // namespace

std::string npyDescr(DType dtype) {
  if (dtype.code() == Code::BF16)
    return "<u2";
  for (const DescrEntry &e : kDescrs)
    if (e.code == dtype.code())
      return e.descr;
  return "?";
}

std::optional<DType> dtypeFromNpyDescr(const std::string &descr) {
  if (descr.size() < 2)
    return std::nullopt;
  std::string body = descr;
  char order = body[0];
  if (order == '<' || order == '|' || order == '=')
    body = body.substr(1);
  else if (order == '>')
    body = body.substr(1); // allowed only for single-byte types, checked below
  else
    order = '=';
  for (const DescrEntry &e : kDescrs) {
    if (body != e.descr + 1)
      continue;
    if (order == '>' && DType(e.code).storageBytes() != 1)
      return std::nullopt;
    return DType(e.code);
  }
  return std::nullopt;
}

std::optional<Tensor> readNpy(const std::string &path, std::string &error) {
  // A directory opens as a stream on Linux; reading it fails (or throws) later.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = "cannot read '" + path + "': is a directory";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return std::nullopt;
  }
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto fail = [&](const std::string &why) -> std::optional<Tensor> {
    error = "'" + path + "' is not a supported .npy file: " + why;
    return std::nullopt;
  };
  if (data.size() < kMagicSize + 4 || data.compare(0, kMagicSize, kMagic, kMagicSize) != 0)
    return fail("bad magic string");
  int major = static_cast<uint8_t>(data[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<uint8_t>(data[8]) | static_cast<uint8_t>(data[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (data.size() < 12)
      return fail("truncated header");
    headerLen = 0;
    for (int b = 3; b >= 0; --b)
      headerLen = headerLen << 8 | static_cast<uint8_t>(data[8 + b]);
    headerStart = 12;
  } else {
    return fail("unknown version " + std::to_string(major));
  }
  if (data.size() < headerStart + headerLen)
    return fail("truncated header");
  std::string header = data.substr(headerStart, headerLen);

  std::string descr, fortran, shapeText;
  if (!findValue(header, "descr", descr) || !findValue(header, "fortran_order", fortran) ||
      !findValue(header, "shape", shapeText))
    return fail("incomplete header");
  if (descr.size() < 2 || (descr.front() != '\'' && descr.front() != '"'))
    return fail("unsupported descr " + descr);
  descr = descr.substr(1, descr.size() - 2);
  std::optional<DType> dtype = dtypeFromNpyDescr(descr);
  if (!dtype)
    return fail("unsupported dtype '" + descr + "'");
  if (fortran != "False")
    return fail("fortran order is not supported");
  std::vector<int64_t> shape;
  if (!parseShape(shapeText, shape))
    return fail("bad shape " + shapeText);

  // The data the shape asks for must be in the file before anything is allocated: a header
  // may declare any shape (dimensions up to 2^48 each, whose product overflows).
  size_t dataStart = headerStart + headerLen;
  size_t available = data.size() - dataStart;
  // A zero dimension does not excuse the others: their product (elements and bytes) must fit in
  // i64 too, or counts and strides computed from the shape overflow (tdsl-fuzz-npy found
  // (1, 4, 20, …, 0, 6024) passing, and numElements overflowing on it).
  uint64_t expected = static_cast<uint64_t>(dtype->storageBytes());
  bool empty = false;
  for (int64_t d : shape) {
    if (d == 0)
      empty = true;
    else if (__builtin_mul_overflow(expected, static_cast<uint64_t>(d), &expected) ||
             expected > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return fail("shape " + shapeText + " is too large");
  }
  if (empty)
    expected = 0;
  if (expected != available)
    return fail("expected " + std::to_string(expected) + " bytes of data for " +
                typeString(*dtype, shape) + ", found " + std::to_string(available));
  Tensor t(*dtype, shape);
  if (!t.bytes.empty()) // an empty vector's data() may be null, which memcpy may not take
    std::memcpy(t.bytes.data(), data.data() + dataStart, t.bytes.size());
  if (dtype->isBool())
    for (uint8_t &b : t.bytes)
      b = b != 0;
  return t;
}

bool writeNpy(const std::string &path, const Tensor &tensor, std::string &error) {
  std::string shape = "(";
  for (size_t d = 0; d < tensor.shape.size(); ++d)
    shape += std::to_string(tensor.shape[d]) + ", ";
  if (tensor.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (tensor.shape.size() == 1)
    shape.resize(shape.size() - 1); // "(3,)"
  shape += ")";
  std::string header = "{'descr': '" + npyDescr(tensor.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so that the data starts at a multiple of 64 bytes; end with a newline.
  size_t total = kMagicSize + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::ofstream out(path, std::ios::binary);
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  out.write(kMagic, kMagicSize);
  const char version[2] = {1, 0};
  out.write(version, 2);
  const char len[2] = {static_cast<char>(header.size() & 0xff),
                       static_cast<char>(header.size() >> 8)};
  out.write(len, 2);
  out << header;
  out.write(reinterpret_cast<const char *>(tensor.bytes.data()),
            static_cast<std::streamsize>(tensor.bytes.size()));
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

} // namespace tdsl::runtime
