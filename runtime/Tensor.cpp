//===- runtime/Tensor.cpp - Host tensors and scalars --------------------------------------===//
#include "runtime/Tensor.h"

#include "runtime/Float16.h"

#include <cassert>
#include <cstring>
#include <new>
#include <stdexcept>

#if defined(__linux__)
#include <sys/sysinfo.h>
#endif

namespace tdsl::runtime {

using ir::DType;
using Code = DType::Code;

int64_t normaliseInt(DType dtype, uint64_t bits) {
  switch (dtype.code()) {
  case Code::Bool:
    return bits != 0;
  case Code::I8:
    return static_cast<int8_t>(bits);
  case Code::I16:
    return static_cast<int16_t>(bits);
  case Code::I32:
    return static_cast<int32_t>(bits);
  case Code::U8:
    return static_cast<uint8_t>(bits);
  case Code::U16:
    return static_cast<uint16_t>(bits);
  case Code::U32:
    return static_cast<uint32_t>(bits);
  default:
    return static_cast<int64_t>(bits);
  }
}

double roundToFloat(DType dtype, double value) {
  switch (dtype.code()) {
  case Code::F16:
    return f16ToDouble(f16FromDouble(value));
  case Code::BF16:
    return bf16ToDouble(bf16FromDouble(value));
  case Code::F32:
    return static_cast<float>(value);
  default:
    return value;
  }
}

Scalar Scalar::ofInt(DType dtype, int64_t value) {
  Scalar s;
  s.dtype = dtype;
  s.i = normaliseInt(dtype, static_cast<uint64_t>(value));
  return s;
}

Scalar Scalar::ofFloat(DType dtype, double value) {
  Scalar s;
  s.dtype = dtype;
  s.f = roundToFloat(dtype, value);
  return s;
}

double Scalar::toDouble() const {
  if (dtype.isFloat())
    return f;
  if (dtype.code() == Code::U64)
    return static_cast<double>(static_cast<uint64_t>(i));
  return static_cast<double>(i);
}

int64_t numElements(const std::vector<int64_t> &shape) {
  for (int64_t d : shape) // 0 whatever the others are, whose product need not fit
    if (d == 0)
      return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string typeString(DType dtype, const std::vector<int64_t> &shape) {
  std::string s = dtype.name() + "[";
  for (size_t d = 0; d < shape.size(); ++d)
    s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

namespace {
/// The bytes of a tensor, checked before anything is allocated: a size that cannot be had
/// throws std::bad_alloc as a failed allocation would (tdsl-run reports it as an error), also
/// under AddressSanitizer, whose allocator aborts on a failed `new` instead of throwing.
size_t checkedBytes(DType dtype, const std::vector<int64_t> &shape) {
  for (int64_t d : shape)
    if (d == 0)
      return 0;
  uint64_t bytes = dtype.storageBytes();
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
      throw std::length_error("tensor size overflows");
#if defined(__linux__)
  struct sysinfo info;
  if (sysinfo(&info) == 0 &&
      bytes / info.mem_unit > uint64_t(info.totalram) + uint64_t(info.totalswap))
    throw std::bad_alloc();
#endif
  return bytes;
}
} // namespace

Tensor::Tensor(DType dtype, std::vector<int64_t> shape)
    : dtype(dtype), shape(std::move(shape)), bytes(checkedBytes(dtype, this->shape)) {}

namespace {
template <typename T> T read(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> void write(uint8_t *p, T v) { std::memcpy(p, &v, sizeof(T)); }
} // namespace

Scalar Tensor::load(int64_t index) const {
  const uint8_t *p = bytes.data() + index * dtype.storageBytes();
  Scalar s;
  s.dtype = dtype;
  switch (dtype.code()) {
  case Code::Bool:
    s.i = *p != 0;
    break;
  case Code::I8:
    s.i = read<int8_t>(p);
    break;
  case Code::I16:
    s.i = read<int16_t>(p);
    break;
  case Code::I32:
    s.i = read<int32_t>(p);
    break;
  case Code::I64:
  case Code::U64:
    s.i = read<int64_t>(p);
    break;
  case Code::U8:
    s.i = read<uint8_t>(p);
    break;
  case Code::U16:
    s.i = read<uint16_t>(p);
    break;
  case Code::U32:
    s.i = read<uint32_t>(p);
    break;
  case Code::F16:
    s.f = f16ToDouble(read<uint16_t>(p));
    break;
  case Code::BF16:
    s.f = bf16ToDouble(read<uint16_t>(p));
    break;
  case Code::F32:
    s.f = read<float>(p);
    break;
  case Code::F64:
    s.f = read<double>(p);
    break;
  }
  return s;
}

void Tensor::store(int64_t index, const Scalar &value) {
  assert(value.dtype == dtype && "storing a scalar of another dtype");
  uint8_t *p = bytes.data() + index * dtype.storageBytes();
  switch (dtype.code()) {
  case Code::Bool:
  case Code::I8:
  case Code::U8:
    *p = static_cast<uint8_t>(value.i);
    break;
  case Code::I16:
  case Code::U16:
    write(p, static_cast<uint16_t>(value.i));
    break;
  case Code::I32:
  case Code::U32:
    write(p, static_cast<uint32_t>(value.i));
    break;
  case Code::I64:
  case Code::U64:
    write(p, value.i);
    break;
  case Code::F16:
    write(p, f16FromDouble(value.f));
    break;
  case Code::BF16:
    write(p, bf16FromDouble(value.f));
    break;
  case Code::F32:
    write(p, static_cast<float>(value.f));
    break;
  case Code::F64:
    write(p, value.f);
    break;
  }
}

} // namespace tdsl::runtime
