//===- test/fuzzers/FuzzUtil.h - What the fuzz harnesses and the program generator share ------===//
//
// Compiling a text in-process, random inputs of exactly representable values, comparing
// outputs with a tolerance, and a chooser that reads the fuzzer's bytes.

#pragma once

#include "backends/interp/Interpreter.h"
#include "tools/driver/Driver.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>

namespace tdsl::fuzz {

/// Parses and checks `text` as the file `path` (imports resolve next to it); applies its
/// schedules unless `noSchedule`. Diagnostics go to `err`. With `lowered`, also runs the rest of
/// the module pipeline (the CPU target) into it. `graphPasses` false: graphs as checked,
/// neither fused nor planned (tdsl-run --check's reference).
inline std::optional<ir::Module> compileText(const std::string &path, const std::string &text,
                                             bool noSchedule, std::ostream &err,
                                             ir::LoweredModule *lowered = nullptr,
                                             bool graphPasses = true) {
  DriverOptions opts;
  opts.graphPasses = graphPasses;
  opts.input = path;
  opts.emit = EmitKind::IR;
  opts.stdlibDir = defaultStdlibDir();
  opts.noSchedule = noSchedule;
  opts.errorLimit = 0;
  Compilation c(opts, err);
  if (!c.parse(&text))
    return std::nullopt;
  std::optional<ir::Module> m = c.buildIR();
  if (m && lowered) {
    std::optional<ir::LoweredModule> l = c.lower(*m);
    if (!l)
      return std::nullopt;
    *lowered = std::move(*l);
  }
  return m;
}

/// Reads choices from the fuzzer's bytes: pick(n) in [0, n); past the end, 0.
class ByteChooser {
public:
  ByteChooser(const uint8_t *data, size_t size) : data_(data), size_(size) {}
  uint64_t pick(uint64_t n) {
    if (n <= 1)
      return 0;
    uint64_t v = 0;
    for (uint64_t range = 1; range < n && pos_ < size_; range <<= 8)
      v = (v << 8) | data_[pos_++];
    return v % n;
  }
  bool empty() const { return pos_ >= size_; }

private:
  const uint8_t *data_;
  size_t size_, pos_ = 0;
};

/// The value of a dimension: a constant or a shape variable of `shapes`; nullopt otherwise.
inline std::optional<int64_t> evalDim(const ir::Expr &e,
                                      const std::map<std::string, int64_t> &shapes) {
  if (const auto *imm = e.as<ir::IntImm>())
    return imm->value;
  if (const auto *ref = e.as<ir::VarRef>()) {
    auto it = shapes.find(ref->var.name());
    if (it != shapes.end())
      return it->second;
  }
  return std::nullopt;
}

/// Random inputs of `func`: floats are multiples of 1/8 in [-2, 2] (exact in every float
/// dtype, so that products and short sums are exact too), integers in [-8, 8] ([0, 8]
/// unsigned), random bools; shape variables take their values from `shapes`. `func` is a
/// PrimFunc or a GraphFunc.
inline interp::ArgMap randomInputs(interp::Interpreter &in, const ir::Func &func,
                                   const std::map<std::string, int64_t> &shapes, uint64_t seed,
                                   std::string &error) {
  std::mt19937_64 rng(seed);
  interp::ArgMap args;
  const auto *pf = func.as<ir::PrimFunc>();
  const auto *gf = func.as<ir::GraphFunc>();
  if (!pf && !gf) {
    error = "'" + func.name() + "' is neither a func nor a graph";
    return {};
  }
  auto value = [&](ir::DType t) {
    if (t.isBool())
      return runtime::Scalar::ofBool(rng() % 2);
    if (t.isFloat())
      return runtime::Scalar::ofFloat(t, double(int64_t(rng() % 33) - 16) / 8.0);
    if (t.isUInt())
      return runtime::Scalar::ofInt(t, int64_t(rng() % 9));
    return runtime::Scalar::ofInt(t, int64_t(rng() % 17) - 8);
  };
  for (const ir::FuncParam &p : pf ? pf->inputs : gf->inputs) {
    if (!p.isTensor()) {
      args[p.name()] = value(p.scalar.dtype());
      continue;
    }
    std::vector<int64_t> shape;
    for (const ir::Expr &d : p.buffer.shape()) {
      std::optional<int64_t> v = evalDim(d, shapes);
      if (!v) {
        error = "input '" + p.name() +
                "' has a dimension that is neither a constant nor a shape "
                "variable";
        return {};
      }
      shape.push_back(*v);
    }
    runtime::Tensor t(p.buffer.dtype(), shape);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.store(i, value(t.dtype));
    args[p.name()] = std::move(t);
  }
  // Outputs start zero-filled, with the shapes the inputs determine.
  std::optional<std::vector<interp::ParamInfo>> params = in.describe(func, args, {}, error);
  if (!params)
    return {};
  for (const interp::ParamInfo &p : *params)
    if (p.isOutput) {
      if (!p.shape) {
        error = "the shape of output '" + p.name + "' is not known";
        return {};
      }
      args[p.name] = runtime::Tensor(p.dtype, *p.shape);
    }
  return args;
}

/// Empty when the outputs of `func` in `got` match those in `want`: integers and bools
/// exactly, floats within `rtol` (relative, and as absolute below 1), NaN equal to NaN.
inline std::string compareOutputs(const interp::ArgMap &want, const interp::ArgMap &got,
                                  const ir::Func &func, double rtol) {
  for (const ir::Buffer &out : func.as<ir::PrimFunc>()->outputs) {
    const auto &x = std::get<runtime::Tensor>(want.at(out.name()));
    const auto &y = std::get<runtime::Tensor>(got.at(out.name()));
    if (x.shape != y.shape)
      return "output '" + out.name() + "' has shape " + y.typeString() + ", expected " +
             x.typeString();
    double tol = rtol;
    if (out.dtype() == ir::DType::f16() || out.dtype() == ir::DType::bf16())
      tol = std::max(rtol, out.dtype() == ir::DType::f16() ? 2e-3 : 1.6e-2);
    for (int64_t i = 0; i < x.numElements(); ++i) {
      runtime::Scalar p = x.load(i), q = y.load(i);
      bool same;
      if (out.dtype().isFloat()) {
        same =
            (std::isnan(p.f) && std::isnan(q.f)) || p.f == q.f ||
            std::fabs(p.f - q.f) <= tol * std::max(1.0, std::max(std::fabs(p.f), std::fabs(q.f)));
      } else {
        same = p.i == q.i;
      }
      if (!same) {
        std::ostringstream os;
        os.precision(17);
        os << "output '" << out.name() << "' differs at element " << i << ": expected "
           << p.toDouble() << ", got " << q.toDouble();
        return os.str();
      }
    }
  }
  return {};
}

} // namespace tdsl::fuzz
