//===- tools/tdsl-run/CheckGrad.cpp - tdsl-run --check-grad (spec §13) ------------------------===//

#include "tools/tdsl-run/CheckGrad.h"

#include "ir/Grad.h"
#include "ir/Utils.h"
#include "passes/grad/Grad.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <random>
#include <sstream>

namespace tdsl {

using runtime::Scalar;
using runtime::Tensor;

namespace {

/// `t` with its f32 elements as f64 (other dtypes as they are).
Tensor widened(const Tensor &t) {
  if (t.dtype != ir::DType::f32())
    return t;
  Tensor w(ir::DType::f64(), t.shape);
  for (int64_t i = 0; i < t.numElements(); ++i)
    w.store(i, Scalar::ofFloat(ir::DType::f64(), t.load(i).f));
  return w;
}

std::string number(double v) {
  std::ostringstream os;
  os << std::setprecision(3) << v;
  return os.str();
}

} // namespace

bool checkGrad(const ir::Module &plain, const ir::GradItem &item, const interp::ArgMap &nameArgs,
               const Defines &defines, uint64_t seed, std::ostream &out, bool &failed,
               std::string &error,
               const std::function<std::string(const SourceLoc &)> &locationText) {
  ir::Module wide = grad::promoteToF64(plain);
  ir::Func f = wide.lookup(item.func);
  if (!f) {
    error = "'" + item.func + "' is not in the module";
    return false;
  }
  interp::Interpreter interp(wide);
  if (locationText)
    interp.setLocationText(locationText);
  const std::vector<ir::FuncParam> &params = ir::calleeInputs(f);
  const std::vector<ir::Buffer> &results = ir::calleeOutputs(f);
  bool loss = ir::isLossForm(plain.lookup(item.func));
  interp::ArgMap base;
  for (const ir::FuncParam &p : params) {
    auto it = nameArgs.find(p.name());
    if (it == nameArgs.end()) {
      error = "no value for parameter '" + p.name() + "' of '" + item.func + "'";
      return false;
    }
    if (auto *t = std::get_if<Tensor>(&it->second))
      base[p.name()] = widened(*t);
    else {
      Scalar s = std::get<Scalar>(it->second);
      if (s.dtype == ir::DType::f32())
        s = Scalar::ofFloat(ir::DType::f64(), s.f);
      base[p.name()] = s;
    }
  }
  // φ: the loss, or Σ_r ⟨d_r, r⟩ with NAME's cotangent inputs.
  auto phi = [&](const interp::ArgMap &in, double &value) {
    interp::ArgMap args = in;
    if (!interp.run(f, args, defines, error))
      return false;
    value = 0;
    for (const ir::Buffer &r : results) {
      if (!r.dtype().isFloat())
        continue;
      const Tensor &t = std::get<Tensor>(args.at(r.name()));
      if (loss) {
        value = t.load(0).f;
        return true;
      }
      const Tensor &d = std::get<Tensor>(nameArgs.at("d_" + r.name()));
      for (int64_t i = 0; i < t.numElements(); ++i)
        value += t.load(i).f * d.load(i).f;
    }
    return true;
  };
  bool ok = true;
  for (size_t k = 0; k < item.wrt.size(); ++k) {
    const std::string &p = item.wrt[k];
    const Tensor &x = std::get<Tensor>(base.at(p));
    auto git = nameArgs.find("grad_" + p);
    if (git == nameArgs.end()) {
      error = "'" + item.name + "' computed no 'grad_" + p + "'";
      return false;
    }
    const Tensor &g = std::get<Tensor>(git->second);
    double scale = 1;
    for (int64_t i = 0; i < x.numElements(); ++i)
      scale = std::max(scale, std::fabs(x.load(i).f));
    double h = 1e-3 * scale, worst = 0;
    for (int dir = 0; dir < 3; ++dir) {
      std::mt19937_64 gen(seed * 1000003 + k * 7 + dir);
      std::normal_distribution<double> normal;
      std::vector<double> u(x.numElements());
      double norm = 0;
      for (double &v : u) {
        v = normal(gen);
        norm += v * v;
      }
      norm = std::sqrt(norm);
      if (norm == 0)
        norm = 1;
      double expected = 0;
      interp::ArgMap plus = base, minus = base;
      Tensor &xp = std::get<Tensor>(plus[p]), &xm = std::get<Tensor>(minus[p]);
      for (int64_t i = 0; i < x.numElements(); ++i) {
        u[i] /= norm;
        double xi = x.load(i).f;
        xp.store(i, Scalar::ofFloat(xp.dtype, xi + h * u[i]));
        xm.store(i, Scalar::ofFloat(xm.dtype, xi - h * u[i]));
        expected += g.load(i).f * u[i];
      }
      double fp, fm;
      if (!phi(plus, fp) || !phi(minus, fm))
        return false;
      double numeric = (fp - fm) / (2 * h);
      double rel =
          std::fabs(numeric - expected) / std::max({std::fabs(numeric), std::fabs(expected), 1e-6});
      worst = std::max(worst, rel);
    }
    bool good = worst <= 1e-2;
    ok &= good;
    out << "check-grad: '" << p << "': max relative error " << number(worst)
        << (good ? "" : " (above 1e-2)") << "\n";
  }
  out << "check-grad: " << (ok ? "OK" : "FAILED") << ": '" << item.name << "' against '"
      << item.func << "' (central differences in f64, 3 directions per parameter)\n";
  failed = !ok;
  return true;
}

} // namespace tdsl
