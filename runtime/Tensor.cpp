//===- runtime/Tensor.cpp - Host tensors and scalars --------------------------------------===//
#include "runtime/Tensor.h"

#include "runtime/Float16.h"

#include <cassert>
#include <cstring>
#include <new>
#include <stdexcept>
#include <type_traits>

#if defined(__linux__)
#include <sys/sysinfo.h>
#endif

namespace tdsl::runtime {

using ir::DType;
using Code = DType::Code;

int64_t normaliseInt(DType dtype, uint64_t bits) {
  if (dtype.isBool())
    return bits != 0;
  if (dtype.isFloat())
    return static_cast<int64_t>(bits);
  // Truncated to the storage type, then sign- or zero-extended.
  int64_t value = 0;
  ir::withStorageType(dtype.code(), [&](auto zero) {
    value = static_cast<int64_t>(static_cast<decltype(zero)>(bits));
  });
  return value;
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
  if (dtype.isBool()) {
    s.i = *p != 0;
  } else if (dtype.code() == Code::F16) {
    s.f = f16ToDouble(read<uint16_t>(p));
  } else if (dtype.code() == Code::BF16) {
    s.f = bf16ToDouble(read<uint16_t>(p));
  } else {
    ir::withStorageType(dtype.code(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_floating_point_v<T>)
        s.f = read<T>(p);
      else
        s.i = static_cast<int64_t>(read<T>(p));
    });
  }
  return s;
}

void Tensor::store(int64_t index, const Scalar &value) {
  assert(value.dtype == dtype && "storing a scalar of another dtype");
  uint8_t *p = bytes.data() + index * dtype.storageBytes();
  if (dtype.code() == Code::F16) {
    write(p, f16FromDouble(value.f));
  } else if (dtype.code() == Code::BF16) {
    write(p, bf16FromDouble(value.f));
  } else {
    ir::withStorageType(dtype.code(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_floating_point_v<T>)
        write(p, static_cast<T>(value.f));
      else
        write(p, static_cast<T>(value.i));
    });
  }
}

} // namespace tdsl::runtime
