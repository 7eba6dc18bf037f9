//===- tools/tdsl-import/Importer.cpp - ONNX models to TDSL graphs (spec §12) ---------------===//
//
// The model is parsed, checked and shape-inferred by the ONNX library; then each node, in
// order, either folds (shape arithmetic on constants: Shape, Gather, Slice, Concat, Cast, …)
// or becomes calls of `nn` functions on views of its inputs (rank-N element-wise operators run
// on [B, N] views, per-axis ones on [A, N, C] views). Every output shape the importer computes
// is compared with ONNX's inferred one. Nothing is written until the whole model translated.
// docs/importer.md documents the mapping; docs/decisions.md the choices the spec leaves open.

#include "tools/tdsl-import/Importer.h"

#include "frontend/Parser.h"
#include "runtime/Npy.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace tdsl::import {
namespace {

//===--------------------------------------------------------------------------------------===//
// Names (§12): [A-Za-z0-9_] only, no leading digit or keyword, clashes numbered
//===--------------------------------------------------------------------------------------===//

/// Names an imported identifier may not spell: the grammar's keywords (§2, from the frontend's
/// lexer) and the names the generated module gives a meaning of its own — loop kinds, dtype
/// names, the standard library's module name and the view statement.
bool isReserved(const std::string &s) {
  static const std::set<std::string> names = {
      "serial", "parallel", "vectorized", "unrolled", "thread", "bool",   "i8",
      "i16",    "i32",      "i64",        "u8",       "u16",    "u32",    "u64",
      "f16",    "bf16",     "f32",        "f64",      "nn",     "reshape"};
  return tdsl::isKeyword(s) || names.count(s);
}

bool isIdentifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return !isReserved(s);
}

class Names {
public:
  static std::string sanitise(const std::string &name) {
    std::string s;
    for (char c : name)
      s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') && (c & 0x80) == 0 ? c : '_';
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) || isReserved(s))
      s = "v_" + s;
    return s;
  }

  /// A fresh name: `base` (sanitised) or, when taken, base_1, base_2, …
  std::string allocate(const std::string &base) {
    std::string s = sanitise(base);
    std::string name = s;
    for (int k = 1; taken.count(name); ++k)
      name = s + "_" + std::to_string(k);
    taken.insert(name);
    return name;
  }

private:
  std::set<std::string> taken;
};

//===--------------------------------------------------------------------------------------===//
// Dimensions: c * s1 * s2 * … (s the shape variables of symbolic input dimensions)
//===--------------------------------------------------------------------------------------===//

struct Dim {
  int64_t c = 1;
  std::vector<std::string> syms; // sorted

  static Dim of(int64_t v) {
    Dim d;
    d.c = v;
    return d;
  }
  static Dim sym(const std::string &s) {
    Dim d;
    d.syms.push_back(s);
    return d;
  }
  bool isConst() const { return syms.empty(); }
  bool operator==(const Dim &o) const { return c == o.c && syms == o.syms; }
  bool operator!=(const Dim &o) const { return !(*this == o); }
};

Dim operator*(Dim a, const Dim &b) {
  a.c *= b.c;
  a.syms.insert(a.syms.end(), b.syms.begin(), b.syms.end());
  std::sort(a.syms.begin(), a.syms.end());
  if (a.c == 0)
    a.syms.clear();
  return a;
}

/// a / b when it divides exactly.
std::optional<Dim> divide(const Dim &a, const Dim &b) {
  if (b.c == 0 || a.c % b.c != 0)
    return std::nullopt;
  Dim r = Dim::of(a.c / b.c);
  std::multiset<std::string> rest(a.syms.begin(), a.syms.end());
  for (const std::string &s : b.syms) {
    auto it = rest.find(s);
    if (it == rest.end())
      return std::nullopt;
    rest.erase(it);
  }
  r.syms.assign(rest.begin(), rest.end());
  return r;
}

std::string str(const Dim &d) {
  if (d.syms.empty())
    return std::to_string(d.c);
  std::string s = d.c == 1 ? "" : std::to_string(d.c) + " * ";
  for (size_t k = 0; k < d.syms.size(); ++k)
    s += (k ? " * " : "") + d.syms[k];
  return s;
}

using Shape = std::vector<Dim>;

std::string str(const Shape &s) {
  std::string r = "[";
  for (size_t k = 0; k < s.size(); ++k)
    r += (k ? ", " : "") + str(s[k]);
  return r + "]";
}

Dim product(const Shape &s, size_t from = 0, size_t to = SIZE_MAX) {
  Dim p = Dim::of(1);
  for (size_t k = from; k < std::min(to, s.size()); ++k)
    p = p * s[k];
  return p;
}

Shape constShape(const std::vector<int64_t> &dims) {
  Shape s;
  for (int64_t d : dims)
    s.push_back(Dim::of(d));
  return s;
}

//===--------------------------------------------------------------------------------------===//
// Values: constants known at import time, or tensors of the graph
//===--------------------------------------------------------------------------------------===//

struct ImportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool isFloatType(int32_t t) {
  return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::DOUBLE ||
         t == onnx::TensorProto::FLOAT16;
}

bool isIntType(int32_t t) {
  switch (t) {
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
  case onnx::TensorProto::BOOL:
    return true;
  default:
    return false;
  }
}

std::string typeName(int32_t t) {
  return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t));
}

/// A tensor known at import time: floats in `f`, integers (possibly symbolic, from Shape) in
/// `i`.
struct Const {
  int32_t elem = onnx::TensorProto::FLOAT;
  std::vector<int64_t> dims;
  std::vector<float> f;
  std::vector<Dim> i;

  bool isFloat() const { return isFloatType(elem); }
  int64_t numel() const {
    return std::accumulate(dims.begin(), dims.end(), int64_t(1), std::multiplies<int64_t>());
  }
  size_t size() const { return isFloat() ? f.size() : i.size(); }
  /// Appends element `k` of `from` (of the same element type).
  void append(const Const &from, int64_t k) {
    if (isFloat())
      f.push_back(from.f[k]);
    else
      i.push_back(from.i[k]);
  }
};

struct Value {
  std::optional<Const> k; // a constant (until materialised as a `const`, then also a tensor)
  std::string name;       // the TDSL name, once a tensor
  std::string dtype;      // f32 | i64
  Shape shape;
  std::string onnxName;
};
using ValuePtr = std::shared_ptr<Value>;

std::vector<int64_t> strides(const std::vector<int64_t> &dims) {
  std::vector<int64_t> st(dims.size(), 1);
  for (size_t k = dims.size(); k-- > 1;)
    st[k - 1] = st[k] * dims[k];
  return st;
}

/// The flat index in `in` (right-aligned, NumPy broadcasting) of flat index `flat` of `out`.
int64_t broadcastIndex(const std::vector<int64_t> &out, const std::vector<int64_t> &in,
                       int64_t flat) {
  std::vector<int64_t> os = strides(out), is = strides(in);
  int64_t r = 0;
  size_t off = out.size() - in.size();
  for (size_t k = 0; k < out.size(); ++k) {
    int64_t idx = flat / os[k] % out[k];
    if (k >= off && in[k - off] != 1)
      r += idx * is[k - off];
  }
  return r;
}

std::string floatLiteral(double v) {
  if (std::isnan(v))
    throw ImportError("a NaN scalar cannot be written as a TDSL literal");
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  // The shortest form that reads back as the same f32.
  char buf[64];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtof(buf, nullptr) == static_cast<float>(v))
      break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

//===--------------------------------------------------------------------------------------===//
// .npy files
//===--------------------------------------------------------------------------------------===//

/// The tensor a constant's `.npy` file holds: f32 or i64 (runtime/Npy.h writes it).
runtime::Tensor npyTensor(const Const &k) {
  runtime::Tensor t(k.isFloat() ? ir::DType::f32() : ir::DType::i64(), k.dims);
  if (k.isFloat()) {
    std::memcpy(t.bytes.data(), k.f.data(), k.f.size() * sizeof(float));
  } else {
    for (size_t e = 0; e < k.i.size(); ++e) {
      int64_t v = k.i[e].c;
      std::memcpy(t.bytes.data() + e * sizeof v, &v, sizeof v);
    }
  }
  return t;
}

//===--------------------------------------------------------------------------------------===//
// Attributes
//===--------------------------------------------------------------------------------------===//

class Importer;

class Attrs {
public:
  Attrs(const onnx::NodeProto &node, std::initializer_list<const char *> allowed,
        const std::function<void(const std::string &)> &unsupported) {
    for (const onnx::AttributeProto &a : node.attribute()) {
      bool ok = false;
      for (const char *name : allowed)
        ok |= a.name() == name;
      if (!ok)
        unsupported(a.name());
      attrs[a.name()] = &a;
    }
  }
  bool has(const std::string &n) const { return attrs.count(n); }
  int64_t i(const std::string &n, int64_t def) const { return has(n) ? attrs.at(n)->i() : def; }
  float f(const std::string &n, float def) const { return has(n) ? attrs.at(n)->f() : def; }
  std::string s(const std::string &n, const std::string &def) const {
    return has(n) ? attrs.at(n)->s() : def;
  }
  std::vector<int64_t> ints(const std::string &n, std::vector<int64_t> def = {}) const {
    if (!has(n))
      return def;
    return {attrs.at(n)->ints().begin(), attrs.at(n)->ints().end()};
  }
  const onnx::TensorProto *t(const std::string &n) const {
    return has(n) ? &attrs.at(n)->t() : nullptr;
  }

private:
  std::map<std::string, const onnx::AttributeProto *> attrs;
};

//===--------------------------------------------------------------------------------------===//
// The importer
//===--------------------------------------------------------------------------------------===//

class Importer {
public:
  Importer(onnx::ModelProto &model, const ImportOptions &opts, std::string weightsDir)
      : model(model), opts(opts), weightsDir(std::move(weightsDir)) {}

  void run();

  std::string text;                                         // OUT.tdsl
  std::vector<std::pair<std::string, runtime::Tensor>> npy; // file name, contents
  /// The model's opset before ONNX's version converter took it to 11 (0: not converted).
  int64_t convertedFrom = 0;

private:
  using Handler = void (Importer::*)();

  onnx::ModelProto &model;
  const ImportOptions &opts;
  std::string weightsDir; // as written in load("…"), relative to OUT.tdsl
  int64_t opset = 0;
  Names names;
  std::map<std::string, ValuePtr> values;
  std::map<std::string, std::string> initializerNames; // ONNX name -> reserved TDSL name
  std::map<std::string, std::pair<std::string, bool>> outputNames; // model outputs: name, used
  std::map<std::string, const onnx::TypeProto *> inferred;
  std::vector<std::string> constDecls, body;
  std::set<std::string> temps; // names from fresh()
  const onnx::NodeProto *node = nullptr;
  int nodeIndex = 0;

  // --- diagnostics
  std::string nodeDesc() const {
    std::string n = node->name().empty() ? "#" + std::to_string(nodeIndex) : node->name();
    return "operator '" + node->op_type() + "' (node '" + n + "')";
  }
  [[noreturn]] void fail(const std::string &msg) const {
    throw ImportError(nodeDesc() + ": " + msg);
  }
  [[noreturn]] void unsupportedAttr(const std::string &attr, const std::string &value = "") const {
    std::string n = node->name().empty() ? "#" + std::to_string(nodeIndex) : node->name();
    throw ImportError("unsupported attribute '" + attr + "'" +
                      (value.empty() ? "" : " = " + value) + " of operator '" + node->op_type() +
                      "' (node '" + n + "')");
  }
  Attrs attrs(std::initializer_list<const char *> allowed) const {
    return Attrs(*node, allowed, [this](const std::string &a) { unsupportedAttr(a); });
  }

  // --- inputs and outputs of the current node
  size_t numInputs() const { return node->input_size(); }
  bool hasInput(size_t k) const { return k < numInputs() && !node->input(k).empty(); }
  ValuePtr in(size_t k) const {
    if (!hasInput(k))
      fail("input " + std::to_string(k) + " is missing");
    auto it = values.find(node->input(k));
    if (it == values.end())
      fail("input '" + node->input(k) + "' is not defined before the node");
    return it->second;
  }
  const Const &constIn(size_t k, const std::string &what) const {
    ValuePtr v = in(k);
    if (!v->k)
      fail(what + " must be a constant (an initializer or a folded value)");
    return *v->k;
  }
  std::vector<int64_t> intsIn(size_t k, const std::string &what) const {
    const Const &c = constIn(k, what);
    if (c.isFloat())
      fail(what + " must be integers");
    std::vector<int64_t> r;
    for (const Dim &d : c.i) {
      if (!d.isConst())
        fail(what + " depends on the symbolic dimension " + str(d));
      r.push_back(d.c);
    }
    return r;
  }
  float floatIn(size_t k, const std::string &what) const {
    const Const &c = constIn(k, what);
    if (c.numel() != 1)
      fail(what + " must be a single value");
    if (c.isFloat())
      return c.f[0];
    if (!c.i[0].isConst())
      fail(what + " depends on a symbolic dimension");
    return static_cast<float>(c.i[0].c);
  }
  void define(size_t k, ValuePtr v) {
    if (static_cast<int>(k) < node->output_size() && !node->output(k).empty())
      values[node->output(k)] = std::move(v);
  }
  /// Output k of the node is the tensor `name` of `dtype` and `shape`.
  void defineTensor(size_t k, const std::string &name, const std::string &dtype,
                    const Shape &shape) {
    auto v = std::make_shared<Value>();
    v->name = name;
    v->dtype = dtype;
    v->shape = shape;
    v->onnxName = node->output(k);
    define(k, v);
  }
  void defineConst(size_t k, Const c) {
    auto v = std::make_shared<Value>();
    v->k = std::move(c);
    v->onnxName = node->output(k);
    define(k, v);
  }
  bool outputUsed(size_t k) const {
    if (static_cast<int>(k) >= node->output_size() || node->output(k).empty())
      return false;
    const std::string &n = node->output(k);
    for (const onnx::NodeProto &o : model.graph().node())
      for (const std::string &i : o.input())
        if (i == n)
          return true;
    for (const onnx::ValueInfoProto &o : model.graph().output())
      if (o.name() == n)
        return true;
    return false;
  }
  void onlyFirstOutput() const {
    for (int k = 1; k < node->output_size(); ++k)
      if (outputUsed(k))
        fail("output " + std::to_string(k) + " ('" + node->output(k) + "') is not supported");
  }

  // --- tensors of the graph
  Shape shapeOf(const ValuePtr &v) const {
    return v->k && v->name.empty() ? constShape(v->k->dims) : v->shape;
  }
  int64_t rankOf(const ValuePtr &v) const { return static_cast<int64_t>(shapeOf(v).size()); }
  std::string dtypeOf(const ValuePtr &v) const {
    if (!v->name.empty())
      return v->dtype;
    return v->k->isFloat() ? "f32" : "i64";
  }
  /// The TDSL name of a value; a constant becomes a `const` loaded from its .npy file.
  std::string tensor(const ValuePtr &v);
  std::string floatTensor(const ValuePtr &v, const std::string &what) {
    std::string n = tensor(v);
    if (v->dtype != "f32")
      fail(what + " must be a float tensor, got " + v->dtype);
    return n;
  }
  /// The float tensor input X of a node whose only used output is the first: the value, its
  /// TDSL name and its shape.
  struct FloatInput {
    ValuePtr value;
    std::string name;
    Shape shape;
  };
  FloatInput onlyOutputOfFloatX() {
    onlyFirstOutput();
    ValuePtr x = in(0);
    std::string name = floatTensor(x, "input X");
    return {x, name, x->shape};
  }
  /// A fresh name for an intermediate value of the importer's own.
  std::string fresh(const std::string &base) {
    std::string n = names.allocate(base);
    temps.insert(n);
    return n;
  }
  std::string outName(size_t k = 0) {
    auto it = outputNames.find(node->output(k));
    if (it != outputNames.end() && !it->second.second) {
      it->second.second = true; // the reserved name, taken once
      return it->second.first;
    }
    return names.allocate(node->output(k));
  }
  /// `name` viewed with shape `to` (a `reshape` unless the shapes agree).
  std::string view(const std::string &name, const Shape &from, const Shape &to,
                   const std::string &base) {
    if (from == to)
      return name;
    std::string v = fresh(base);
    body.push_back(v + " = reshape(" + name + ", " + str(to) + ");");
    return v;
  }
  /// Defines output k of the node as `callText` computed with shape `callShape`, viewed as
  /// `shape`.
  void defineCall(size_t k, const std::string &callText, const Shape &callShape, const Shape &shape,
                  const std::string &dtype = "f32") {
    std::string out = outName(k);
    if (callShape == shape) {
      body.push_back(out + " = " + callText + ";");
    } else {
      std::string t = fresh(out + "_v");
      body.push_back(t + " = " + callText + ";");
      body.push_back(out + " = reshape(" + t + ", " + str(shape) + ");");
    }
    defineTensor(k, out, dtype, shape);
  }
  void defineView(size_t k, const std::string &src, const Shape &from, const Shape &shape,
                  const std::string &dtype) {
    std::string out = outName(k);
    if (from == shape && temps.count(src) && !body.empty() &&
        body.back().rfind(src + " = ", 0) == 0)
      body.back() = out + body.back().substr(src.size()); // the temporary just defined, renamed
    else
      body.push_back(out + " = reshape(" + src + ", " + str(shape) + ");");
    defineTensor(k, out, dtype, shape);
  }
  /// A call's text: `call F<g…>(args)`.
  static std::string call(const std::string &fn, const std::vector<std::string> &args,
                          const std::vector<int64_t> &generics = {}) {
    std::string s = "call " + fn;
    if (!generics.empty()) {
      s += "<";
      for (size_t k = 0; k < generics.size(); ++k)
        s += (k ? ", " : "") + std::to_string(generics[k]);
      s += ">";
    }
    s += "(";
    for (size_t k = 0; k < args.size(); ++k)
      s += (k ? ", " : "") + args[k];
    return s + ")";
  }
  static Shape as2d(const Shape &s) {
    if (s.empty())
      return {Dim::of(1), Dim::of(1)};
    if (s.size() == 1)
      return {Dim::of(1), s[0]};
    return {s[0], product(s, 1)};
  }
  /// [before axis, axis, after axis]
  static Shape as3d(const Shape &s, size_t axis) {
    return {product(s, 0, axis), s[axis], product(s, axis + 1)};
  }
  int64_t normAxis(int64_t axis, int64_t rank) const {
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= std::max<int64_t>(rank, 1))
      fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    return a;
  }
  int64_t staticDim(const Dim &d, const std::string &what) const {
    if (!d.isConst())
      fail(what + " must be static, got " + str(d));
    return d.c;
  }
  Shape broadcastShapes(const Shape &a, const Shape &b) const {
    size_t r = std::max(a.size(), b.size());
    Shape out(r);
    for (size_t k = 0; k < r; ++k) {
      Dim da = k + a.size() >= r ? a[k + a.size() - r] : Dim::of(1);
      Dim db = k + b.size() >= r ? b[k + b.size() - r] : Dim::of(1);
      if (da == db || db == Dim::of(1))
        out[k] = da;
      else if (da == Dim::of(1))
        out[k] = db;
      else
        fail("shapes " + str(a) + " and " + str(b) + " do not broadcast");
    }
    return out;
  }

  // --- the steps
  void readOpset();
  void declareInputs(std::string &signature);
  void translateNode();
  void checkInferred();
  bool foldNode();
  std::string elementType(int32_t t, const std::string &what) const;

  // --- operators
  void unary(const std::string &fn, std::vector<std::string> scalars = {});
  void opUnary();
  void opIdentity();
  void opDropout();
  void opLeakyRelu();
  void opHardSigmoid();
  void opClip();
  void opBinary();
  void binaryTensors(const std::string &op, const ValuePtr &a, const ValuePtr &b);
  void opMatMul();
  void opGemm();
  void opConv();
  void opBatchNorm();
  void opMaxPool();
  void opAveragePool();
  void opGlobalPool();
  void opFlatten();
  void opReshape();
  void opSqueeze();
  void opUnsqueeze();
  void opTranspose();
  void opSoftmax();
  void opLayerNorm();
  void opGather();
  void opSlice();
  void opConcat();
  void opSplit();
  void opPad();
  void opReduce();
  void opCast();
  void opArgReduce();
  void opTrilu();
  void opExpand();
  std::string sliceAxis(const std::string &x, Shape &shape, size_t axis, int64_t start, int64_t end,
                        int64_t step, const std::string &base);
  /// A Slice node's starts, ends, axes and steps (inputs 1 to 4; by default the axes are 0, 1, …
  /// and the steps 1), one entry per sliced axis.
  struct SliceSpec {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  SliceSpec sliceSpec() const;

  // --- folding
  void foldShape();
  void foldSize();
  void foldConstant();
  void foldConstantOfShape();
  void foldRange();
  void foldBinary(const std::string &op);
  void foldWhere();
  void foldUnary(const std::string &op);
  void foldGather();
  void foldSlice();
  void foldConcat();
  void foldReshapeLike(const std::vector<int64_t> &dims);
  void foldCast();
  void foldTranspose();
  void foldExpand();
  Const readTensor(const onnx::TensorProto &t) const;
  std::vector<int64_t> reshapeTarget(const Shape &in, const std::vector<Dim> &spec,
                                     Shape &out) const;
  std::vector<int64_t> squeezeAxes() const;
  std::vector<int64_t> unsqueezeAxes() const;
};

//===--------------------------------------------------------------------------------------===//
// Reading tensors and the model
//===--------------------------------------------------------------------------------------===//

Const Importer::readTensor(const onnx::TensorProto &t) const {
  Const c;
  c.elem = t.data_type();
  c.dims.assign(t.dims().begin(), t.dims().end());
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    throw ImportError("tensor '" + t.name() +
                      "' keeps its data in an external file, which is "
                      "not supported");
  int64_t n = c.numel();
  const std::string &raw = t.raw_data();
  bool hasRaw = t.has_raw_data();
  auto rawAt = [&](auto tag, int64_t k) {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, raw.data() + k * sizeof(T), sizeof(T));
    return v;
  };
  auto needRaw = [&](size_t elemSize) {
    if (raw.size() != static_cast<size_t>(n) * elemSize)
      throw ImportError("tensor '" + t.name() + "' has " + std::to_string(raw.size()) +
                        " bytes of data, expected " + std::to_string(n * elemSize));
  };
  auto needTyped = [&](int size) {
    if (size != n)
      throw ImportError("tensor '" + t.name() + "' has " + std::to_string(size) +
                        " values, expected " + std::to_string(n));
  };
  switch (c.elem) {
  case onnx::TensorProto::FLOAT:
    if (hasRaw) {
      needRaw(4);
      for (int64_t k = 0; k < n; ++k)
        c.f.push_back(rawAt(float(), k));
    } else {
      needTyped(t.float_data_size());
      c.f.assign(t.float_data().begin(), t.float_data().end());
    }
    break;
  case onnx::TensorProto::DOUBLE:
    if (hasRaw) {
      needRaw(8);
      for (int64_t k = 0; k < n; ++k)
        c.f.push_back(static_cast<float>(rawAt(double(), k)));
    } else {
      needTyped(t.double_data_size());
      for (double d : t.double_data())
        c.f.push_back(static_cast<float>(d));
    }
    break;
  case onnx::TensorProto::INT64:
    if (hasRaw) {
      needRaw(8);
      for (int64_t k = 0; k < n; ++k)
        c.i.push_back(Dim::of(rawAt(int64_t(), k)));
    } else {
      needTyped(t.int64_data_size());
      for (int64_t v : t.int64_data())
        c.i.push_back(Dim::of(v));
    }
    break;
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::BOOL: {
    size_t size = c.elem == onnx::TensorProto::INT32                                          ? 4
                  : c.elem == onnx::TensorProto::INT16 || c.elem == onnx::TensorProto::UINT16 ? 2
                                                                                              : 1;
    if (hasRaw) {
      needRaw(size);
      auto value = [&](int64_t k) -> int64_t {
        switch (c.elem) {
        case onnx::TensorProto::INT32:
          return rawAt(int32_t(), k);
        case onnx::TensorProto::INT16:
          return rawAt(int16_t(), k);
        case onnx::TensorProto::UINT16:
          return rawAt(uint16_t(), k);
        case onnx::TensorProto::INT8:
          return rawAt(int8_t(), k);
        default:
          return rawAt(uint8_t(), k); // UINT8, BOOL
        }
      };
      for (int64_t k = 0; k < n; ++k)
        c.i.push_back(Dim::of(value(k)));
    } else {
      needTyped(t.int32_data_size());
      for (int32_t v : t.int32_data())
        c.i.push_back(Dim::of(v));
    }
    break;
  }
  default:
    throw ImportError("tensor '" + t.name() + "' has the unsupported element type " +
                      typeName(c.elem));
  }
  return c;
}

std::string Importer::elementType(int32_t t, const std::string &what) const {
  switch (t) {
  case onnx::TensorProto::FLOAT:
    return "f32";
  case onnx::TensorProto::INT64:
    return "i64";
  default:
    throw ImportError(what + " has the unsupported element type " + typeName(t) +
                      " (float and int64 tensors are supported)");
  }
}

void Importer::readOpset() {
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
  if (opset < 11 || opset > 17)
    throw ImportError("opset " + std::to_string(convertedFrom ? convertedFrom : opset) +
                      " is not supported (opsets 7 to 17 are)");
}

void Importer::declareInputs(std::string &signature) {
  const onnx::GraphProto &g = model.graph();
  std::set<std::string> inits;
  for (const onnx::TensorProto &t : g.initializer())
    inits.insert(t.name());
  // Names in order: shape variables, graph inputs, graph outputs, initializers, then values as
  // they are defined.
  std::map<std::string, std::string> symNames;
  std::vector<const onnx::ValueInfoProto *> inputs;
  for (const onnx::ValueInfoProto &i : g.input())
    if (!inits.count(i.name()))
      inputs.push_back(&i);
  for (const onnx::ValueInfoProto *i : inputs) {
    if (!i->type().has_tensor_type())
      throw ImportError("input '" + i->name() + "' is not a tensor");
    for (const auto &d : i->type().tensor_type().shape().dim())
      if (!d.has_dim_value() && d.has_dim_param() && !symNames.count(d.dim_param()))
        symNames[d.dim_param()] = names.allocate(d.dim_param());
  }
  for (const onnx::ValueInfoProto *i : inputs) {
    auto v = std::make_shared<Value>();
    v->onnxName = i->name();
    v->name = names.allocate(i->name());
    const auto &tt = i->type().tensor_type();
    v->dtype = elementType(tt.elem_type(), "input '" + i->name() + "'");
    if (!tt.has_shape())
      throw ImportError("input '" + i->name() + "' has no shape");
    for (const auto &d : tt.shape().dim()) {
      if (d.has_dim_value())
        v->shape.push_back(Dim::of(d.dim_value()));
      else if (d.has_dim_param())
        v->shape.push_back(Dim::sym(symNames[d.dim_param()]));
      else
        throw ImportError("input '" + i->name() + "' has a dimension of unknown size");
    }
    values[i->name()] = v;
    signature += (signature.empty() ? "" : ", ") + v->name + ": " + v->dtype + str(v->shape);
  }
  for (const onnx::ValueInfoProto &o : g.output())
    if (!outputNames.count(o.name()) &&
        std::none_of(inputs.begin(), inputs.end(),
                     [&](const onnx::ValueInfoProto *i) { return i->name() == o.name(); }))
      outputNames[o.name()] = {names.allocate(o.name()), false};
  for (const onnx::TensorProto &t : g.initializer()) {
    auto v = std::make_shared<Value>();
    v->k = readTensor(t);
    v->onnxName = t.name();
    initializerNames[t.name()] = names.allocate(t.name());
    values[t.name()] = v;
  }
}

std::string Importer::tensor(const ValuePtr &v) {
  if (!v->name.empty())
    return v->name;
  const Const &k = *v->k;
  if (k.elem != onnx::TensorProto::FLOAT &&
      !(isIntType(k.elem) && k.elem != onnx::TensorProto::BOOL))
    fail("constant '" + v->onnxName + "' of type " + typeName(k.elem) +
         " cannot be a tensor of the graph");
  for (const Dim &d : k.i)
    if (!d.isConst())
      fail("constant '" + v->onnxName +
           "' depends on a symbolic dimension and cannot be a "
           "tensor of the graph");
  auto it = initializerNames.find(v->onnxName);
  v->name = it != initializerNames.end() ? it->second : fresh(v->onnxName);
  v->dtype = k.isFloat() ? "f32" : "i64";
  v->shape = constShape(k.dims);
  Const stored = k;
  if (!stored.isFloat())
    stored.elem = onnx::TensorProto::INT64;
  npy.emplace_back(v->name + ".npy", npyTensor(stored));
  constDecls.push_back("const " + v->name + ": " + v->dtype + str(v->shape) + " = load(\"" +
                       weightsDir + "/" + v->name + ".npy\");");
  return v->name;
}

//===--------------------------------------------------------------------------------------===//
// Folding: operators whose inputs are all constants and that only move or combine a few
// values (the shape arithmetic PyTorch exports), evaluated at import time
//===--------------------------------------------------------------------------------------===//

bool Importer::foldNode() {
  const std::string &op = node->op_type();
  static const std::set<std::string> foldable = {
      "Constant", "Shape",  "Gather", "Slice", "Concat",    "Unsqueeze",       "Squeeze",
      "Cast",     "Add",    "Sub",    "Mul",   "Div",       "Reshape",         "Flatten",
      "Identity", "Range",  "Equal",  "Where", "Less",      "Greater",         "Neg",
      "Sqrt",     "Expand", "Floor",  "Ceil",  "Transpose", "ConstantOfShape", "Not",
      "Dropout",  "Size"};
  if (!foldable.count(op))
    return false;
  if (op == "Constant") {
    foldConstant();
    return true;
  }
  if (op == "Shape" || op == "Size") {
    if (!hasInput(0))
      return false;
    if (op == "Shape")
      foldShape();
    else
      foldSize();
    return true;
  }
  for (size_t k = 0; k < numInputs(); ++k)
    if (hasInput(k) && !in(k)->k)
      return false;
  // The folds that take no operand of their own.
  static const std::map<std::string, void (Importer::*)()> plain = {
      {"ConstantOfShape", &Importer::foldConstantOfShape},
      {"Range", &Importer::foldRange},
      {"Where", &Importer::foldWhere},
      {"Gather", &Importer::foldGather},
      {"Slice", &Importer::foldSlice},
      {"Concat", &Importer::foldConcat},
      {"Cast", &Importer::foldCast},
      {"Transpose", &Importer::foldTranspose},
      {"Expand", &Importer::foldExpand}};
  if (auto it = plain.find(op); it != plain.end())
    (this->*it->second)();
  else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Equal" ||
           op == "Less" || op == "Greater")
    foldBinary(op);
  else if (op == "Neg" || op == "Sqrt" || op == "Floor" || op == "Ceil" || op == "Not")
    foldUnary(op);
  else if (op == "Identity" || op == "Dropout") {
    if (op == "Dropout")
      opDropout(); // checks the attributes and the mask
    else
      values[node->output(0)] = in(0);
  } else {
    // Reshape, Flatten, Squeeze, Unsqueeze: new dims, same data
    Shape in0 = constShape(in(0)->k->dims), out;
    std::vector<int64_t> dims;
    if (op == "Reshape") {
      attrs({"allowzero"});
      const Const &s = constIn(1, "the shape");
      dims = reshapeTarget(in0, s.i, out);
    } else if (op == "Flatten") {
      int64_t axis = normAxis(attrs({"axis"}).i("axis", 1), rankOf(in(0)) + 1);
      dims = {product(in0, 0, axis).c, product(in0, axis).c};
    } else if (op == "Squeeze") {
      std::vector<int64_t> axes = squeezeAxes();
      for (size_t k = 0; k < in0.size(); ++k)
        if (std::find(axes.begin(), axes.end(), k) == axes.end())
          dims.push_back(in0[k].c);
    } else {
      std::vector<int64_t> axes = unsqueezeAxes();
      size_t r = in0.size() + axes.size(), src = 0;
      for (size_t k = 0; k < r; ++k)
        dims.push_back(std::find(axes.begin(), axes.end(), k) != axes.end() ? 1 : in0[src++].c);
    }
    foldReshapeLike(dims);
  }
  return true;
}

void Importer::foldConstant() {
  Attrs a = attrs({"value", "value_float", "value_floats", "value_int", "value_ints"});
  Const c;
  if (const onnx::TensorProto *t = a.t("value")) {
    c = readTensor(*t);
  } else if (a.has("value_float")) {
    c.f = {a.f("value_float", 0)};
  } else if (a.has("value_floats")) {
    for (const auto &attr : node->attribute())
      if (attr.name() == "value_floats")
        c.f.assign(attr.floats().begin(), attr.floats().end());
    c.dims = {static_cast<int64_t>(c.f.size())};
  } else if (a.has("value_int")) {
    c.elem = onnx::TensorProto::INT64;
    c.i = {Dim::of(a.i("value_int", 0))};
  } else if (a.has("value_ints")) {
    c.elem = onnx::TensorProto::INT64;
    for (int64_t v : a.ints("value_ints"))
      c.i.push_back(Dim::of(v));
    c.dims = {static_cast<int64_t>(c.i.size())};
  } else {
    fail("no value");
  }
  defineConst(0, c);
}

void Importer::foldShape() {
  Attrs a = attrs({"start", "end"});
  Shape s = shapeOf(in(0));
  int64_t r = static_cast<int64_t>(s.size());
  auto clampIdx = [&](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t(0), r); };
  int64_t b = clampIdx(a.i("start", 0)), e = clampIdx(a.i("end", r));
  Const c;
  c.elem = onnx::TensorProto::INT64;
  for (int64_t k = b; k < e; ++k)
    c.i.push_back(s[k]);
  c.dims = {static_cast<int64_t>(c.i.size())};
  defineConst(0, c);
}

void Importer::foldSize() {
  attrs({});
  Const c;
  c.elem = onnx::TensorProto::INT64;
  c.i.push_back(product(shapeOf(in(0)), 0));
  defineConst(0, c); // a 0-d tensor: the input's element count
}

void Importer::foldConstantOfShape() {
  Attrs a = attrs({"value"});
  std::vector<int64_t> dims = intsIn(0, "the shape");
  Const c;
  c.dims = dims;
  Const v;
  v.f = {0.0f};
  if (const onnx::TensorProto *t = a.t("value"))
    v = readTensor(*t);
  c.elem = v.elem;
  if (c.numel() > (int64_t(1) << 26))
    fail("the constant is too large to fold");
  if (v.isFloat())
    c.f.assign(c.numel(), v.f.at(0));
  else
    c.i.assign(c.numel(), v.i.at(0));
  defineConst(0, c);
}

void Importer::foldRange() {
  attrs({});
  const Const &s = constIn(0, "start");
  Const c;
  c.elem = s.elem;
  if (s.isFloat()) {
    float start = floatIn(0, "start"), limit = floatIn(1, "limit"), delta = floatIn(2, "delta");
    int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((limit - start) / delta)));
    for (int64_t k = 0; k < n; ++k)
      c.f.push_back(start + k * delta);
    c.dims = {n};
  } else {
    int64_t start = intsIn(0, "start").at(0), limit = intsIn(1, "limit").at(0),
            delta = intsIn(2, "delta").at(0);
    if (delta == 0)
      fail("delta is 0");
    int64_t n = std::max<int64_t>(0, (limit - start + delta - (delta > 0 ? 1 : -1)) / delta);
    for (int64_t k = 0; k < n; ++k)
      c.i.push_back(Dim::of(start + k * delta));
    c.dims = {n};
  }
  defineConst(0, c);
}

void Importer::foldBinary(const std::string &op) {
  attrs({});
  const Const &a = constIn(0, "input 0"), &b = constIn(1, "input 1");
  Shape s = broadcastShapes(constShape(a.dims), constShape(b.dims));
  Const c;
  for (const Dim &d : s)
    c.dims.push_back(d.c);
  bool cmp = op == "Equal" || op == "Less" || op == "Greater";
  c.elem = cmp ? onnx::TensorProto::BOOL : a.elem;
  int64_t n = c.numel();
  if (a.isFloat() != b.isFloat())
    fail("inputs of different element types");
  for (int64_t k = 0; k < n; ++k) {
    int64_t ia = broadcastIndex(c.dims, a.dims, k), ib = broadcastIndex(c.dims, b.dims, k);
    if (a.isFloat()) {
      float x = a.f[ia], y = b.f[ib];
      if (cmp)
        c.i.push_back(Dim::of(op == "Equal" ? x == y : op == "Less" ? x < y : x > y));
      else
        c.f.push_back(op == "Add" ? x + y : op == "Sub" ? x - y : op == "Mul" ? x * y : x / y);
      continue;
    }
    const Dim &x = a.i[ia], &y = b.i[ib];
    if (op == "Mul") {
      c.i.push_back(x * y);
      continue;
    }
    if (op == "Div") {
      if (auto q = divide(x, y)) {
        c.i.push_back(*q);
        continue;
      }
      if (x.isConst() && y.isConst() && y.c != 0) {
        c.i.push_back(Dim::of(x.c / y.c));
        continue;
      }
      fail("cannot fold " + str(x) + " / " + str(y));
    }
    if (op == "Equal" && x == y) {
      c.i.push_back(Dim::of(1));
      continue;
    }
    if (!x.isConst() || !y.isConst())
      fail("cannot fold " + op + " of the symbolic dimensions " + str(x) + " and " + str(y));
    int64_t r = op == "Add"     ? x.c + y.c
                : op == "Sub"   ? x.c - y.c
                : op == "Equal" ? x.c == y.c
                : op == "Less"  ? x.c < y.c
                                : x.c > y.c;
    c.i.push_back(Dim::of(r));
  }
  defineConst(0, c);
}

void Importer::foldWhere() {
  attrs({});
  const Const &cond = constIn(0, "the condition"), &a = constIn(1, "input 1"),
              &b = constIn(2, "input 2");
  Shape s = broadcastShapes(broadcastShapes(constShape(cond.dims), constShape(a.dims)),
                            constShape(b.dims));
  Const c;
  c.elem = a.elem;
  for (const Dim &d : s)
    c.dims.push_back(d.c);
  for (int64_t k = 0; k < c.numel(); ++k) {
    const Dim &sel = cond.i[broadcastIndex(c.dims, cond.dims, k)];
    if (!sel.isConst())
      fail("cannot fold a symbolic condition");
    const Const &from = sel.c ? a : b;
    int64_t idx = broadcastIndex(c.dims, from.dims, k);
    c.append(from, idx);
  }
  defineConst(0, c);
}

void Importer::foldUnary(const std::string &op) {
  attrs({});
  Const c = constIn(0, "the input");
  if (c.isFloat()) {
    for (float &v : c.f)
      v = op == "Neg"     ? -v
          : op == "Sqrt"  ? std::sqrt(v)
          : op == "Floor" ? std::floor(v)
          : op == "Ceil"  ? std::ceil(v)
                          : v;
  } else {
    for (Dim &v : c.i) {
      if (op == "Neg")
        v.c = -v.c;
      else if (op == "Not" && v.isConst())
        v.c = !v.c;
      else if (op != "Floor" && op != "Ceil")
        fail("cannot fold " + op + " of integers");
    }
  }
  defineConst(0, c);
}

void Importer::foldGather() {
  Attrs a = attrs({"axis"});
  const Const &data = constIn(0, "the data");
  const Const &idx = constIn(1, "the indices");
  int64_t r = static_cast<int64_t>(data.dims.size());
  int64_t axis = normAxis(a.i("axis", 0), r);
  Const c;
  c.elem = data.elem;
  c.dims.assign(data.dims.begin(), data.dims.begin() + axis);
  c.dims.insert(c.dims.end(), idx.dims.begin(), idx.dims.end());
  c.dims.insert(c.dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  int64_t outer = 1, inner = 1, n = data.dims[axis];
  for (int64_t k = 0; k < axis; ++k)
    outer *= data.dims[k];
  for (int64_t k = axis + 1; k < r; ++k)
    inner *= data.dims[k];
  std::vector<int64_t> ids = intsIn(1, "the indices");
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t id : ids) {
      int64_t j = id < 0 ? id + n : id;
      if (j < 0 || j >= n)
        fail("index " + std::to_string(id) + " is out of range");
      for (int64_t q = 0; q < inner; ++q) {
        int64_t src = (o * n + j) * inner + q;
        c.append(data, src);
      }
    }
  defineConst(0, c);
}

/// Normalised ONNX Slice bounds of one axis: start, end (exclusive) and step.
void sliceBounds(int64_t dim, int64_t &start, int64_t &end, int64_t step) {
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
  }
}

Importer::SliceSpec Importer::sliceSpec() const {
  SliceSpec sl;
  sl.starts = intsIn(1, "starts");
  sl.ends = intsIn(2, "ends");
  sl.axes.resize(sl.starts.size());
  std::iota(sl.axes.begin(), sl.axes.end(), 0);
  sl.steps.assign(sl.starts.size(), 1);
  if (hasInput(3))
    sl.axes = intsIn(3, "axes");
  if (hasInput(4))
    sl.steps = intsIn(4, "steps");
  return sl;
}

void Importer::foldSlice() {
  attrs({});
  const Const &data = constIn(0, "the data");
  SliceSpec sl = sliceSpec();
  int64_t r = static_cast<int64_t>(data.dims.size());
  std::vector<int64_t> b(r, 0), e = data.dims, st(r, 1);
  for (size_t k = 0; k < sl.axes.size(); ++k) {
    int64_t ax = normAxis(sl.axes[k], r);
    b[ax] = sl.starts[k];
    e[ax] = sl.ends[k];
    st[ax] = sl.steps[k];
    if (st[ax] == 0)
      fail("a step is 0");
    sliceBounds(data.dims[ax], b[ax], e[ax], st[ax]);
  }
  Const c;
  c.elem = data.elem;
  for (int64_t k = 0; k < r; ++k)
    c.dims.push_back(std::max<int64_t>(0, st[k] > 0 ? (e[k] - b[k] + st[k] - 1) / st[k]
                                                    : (b[k] - e[k] - st[k] - 1) / -st[k]));
  std::vector<int64_t> is = strides(data.dims), os = strides(c.dims);
  for (int64_t flat = 0; flat < c.numel(); ++flat) {
    int64_t src = 0;
    for (int64_t k = 0; k < r; ++k)
      src += (b[k] + (flat / os[k] % c.dims[k]) * st[k]) * is[k];
    c.append(data, src);
  }
  defineConst(0, c);
}

void Importer::foldConcat() {
  Attrs a = attrs({"axis"});
  const Const &first = constIn(0, "input 0");
  int64_t r = static_cast<int64_t>(first.dims.size());
  int64_t axis = normAxis(a.i("axis", 0), r);
  Const c;
  c.elem = first.elem;
  c.dims = first.dims;
  c.dims[axis] = 0;
  int64_t outer = 1;
  for (int64_t k = 0; k < axis; ++k)
    outer *= first.dims[k];
  for (size_t k = 0; k < numInputs(); ++k)
    c.dims[axis] += constIn(k, "an input").dims.at(axis);
  for (int64_t o = 0; o < outer; ++o)
    for (size_t k = 0; k < numInputs(); ++k) {
      const Const &p = constIn(k, "an input");
      int64_t chunk = static_cast<int64_t>(p.size()) / std::max<int64_t>(outer, 1);
      for (int64_t q = 0; q < chunk; ++q) {
        c.append(p, o * chunk + q);
      }
    }
  defineConst(0, c);
}

void Importer::foldReshapeLike(const std::vector<int64_t> &dims) {
  Const c = *in(0)->k;
  c.dims = dims;
  defineConst(0, c);
}

void Importer::foldCast() {
  Attrs a = attrs({"to"});
  Const c = constIn(0, "the input");
  int32_t to = static_cast<int32_t>(a.i("to", onnx::TensorProto::FLOAT));
  if (isFloatType(to) && !c.isFloat()) {
    for (const Dim &d : c.i) {
      if (!d.isConst())
        fail("cannot cast the symbolic dimension " + str(d) + " to a float");
      c.f.push_back(static_cast<float>(d.c));
    }
    c.i.clear();
  } else if (isIntType(to) && c.isFloat()) {
    for (float v : c.f)
      c.i.push_back(Dim::of(to == onnx::TensorProto::BOOL ? v != 0 : static_cast<int64_t>(v)));
    c.f.clear();
  } else if (!isFloatType(to) && !isIntType(to)) {
    unsupportedAttr("to", typeName(to));
  } else if (to == onnx::TensorProto::BOOL) {
    for (Dim &d : c.i)
      if (d.isConst())
        d.c = d.c != 0;
  }
  c.elem = to;
  defineConst(0, c);
}

void Importer::foldTranspose() {
  Attrs a = attrs({"perm"});
  const Const &x = constIn(0, "the input");
  size_t r = x.dims.size();
  std::vector<int64_t> perm(r);
  for (size_t k = 0; k < r; ++k)
    perm[k] = static_cast<int64_t>(r - 1 - k);
  perm = a.ints("perm", perm);
  Const c;
  c.elem = x.elem;
  for (int64_t p : perm)
    c.dims.push_back(x.dims.at(p));
  std::vector<int64_t> is = strides(x.dims), os = strides(c.dims);
  for (int64_t flat = 0; flat < c.numel(); ++flat) {
    int64_t src = 0;
    for (size_t k = 0; k < r; ++k)
      src += (flat / os[k] % c.dims[k]) * is[perm[k]];
    c.append(x, src);
  }
  defineConst(0, c);
}

void Importer::foldExpand() {
  attrs({});
  const Const &x = constIn(0, "the input");
  Shape s = broadcastShapes(constShape(x.dims), constShape(intsIn(1, "the shape")));
  Const c;
  c.elem = x.elem;
  for (const Dim &d : s)
    c.dims.push_back(d.c);
  if (c.numel() > (int64_t(1) << 26))
    fail("the constant is too large to fold");
  for (int64_t k = 0; k < c.numel(); ++k) {
    int64_t src = broadcastIndex(c.dims, x.dims, k);
    c.append(x, src);
  }
  defineConst(0, c);
}

std::vector<int64_t> Importer::reshapeTarget(const Shape &in, const std::vector<Dim> &spec,
                                             Shape &out) const {
  out.clear();
  int infer = -1;
  for (size_t k = 0; k < spec.size(); ++k) {
    const Dim &d = spec[k];
    if (d == Dim::of(0)) {
      if (k >= in.size())
        fail("shape entry " + std::to_string(k) + " copies a dimension the input lacks");
      out.push_back(in[k]);
    } else if (d == Dim::of(-1)) {
      if (infer >= 0)
        fail("the shape has two -1 entries");
      infer = static_cast<int>(k);
      out.push_back(Dim::of(1));
    } else if (d.isConst() && d.c < 0) {
      fail("the shape has the entry " + std::to_string(d.c));
    } else {
      out.push_back(d);
    }
  }
  if (infer >= 0) {
    auto q = divide(product(in), product(out));
    if (!q)
      fail("cannot infer the -1 entry: " + str(product(in)) + " elements into " + str(out));
    out[infer] = *q;
  }
  if (product(in) != product(out))
    fail("reshape of " + str(in) + " into " + str(out) + " changes the element count");
  std::vector<int64_t> dims;
  for (const Dim &d : out)
    dims.push_back(d.c);
  return dims;
}

std::vector<int64_t> Importer::squeezeAxes() const {
  Shape s = shapeOf(in(0));
  int64_t r = static_cast<int64_t>(s.size());
  std::vector<int64_t> axes;
  if (opset >= 13) {
    attrs({});
    if (hasInput(1))
      axes = intsIn(1, "the axes");
  } else {
    axes = attrs({"axes"}).ints("axes");
  }
  if (axes.empty())
    for (int64_t k = 0; k < r; ++k)
      if (s[k] == Dim::of(1))
        axes.push_back(k);
  for (int64_t &a : axes) {
    a = normAxis(a, r);
    if (s[a] != Dim::of(1))
      fail("axis " + std::to_string(a) + " has size " + str(s[a]) + ", not 1");
  }
  return axes;
}

std::vector<int64_t> Importer::unsqueezeAxes() const {
  int64_t r = rankOf(in(0));
  std::vector<int64_t> axes;
  if (opset >= 13) {
    attrs({});
    axes = intsIn(1, "the axes");
  } else {
    axes = attrs({"axes"}).ints("axes");
  }
  int64_t outRank = r + static_cast<int64_t>(axes.size());
  for (int64_t &a : axes)
    a = normAxis(a, outRank);
  return axes;
}

//===--------------------------------------------------------------------------------------===//
// Operators on tensors of the graph
//===--------------------------------------------------------------------------------------===//

void Importer::unary(const std::string &fn, std::vector<std::string> scalars) {
  ValuePtr x = in(0);
  std::string xn = floatTensor(x, "the input");
  Shape s = x->shape, s2 = as2d(s);
  std::string v = view(xn, s, s2, node->output(0) + "_in");
  std::vector<std::string> args = {v};
  args.insert(args.end(), scalars.begin(), scalars.end());
  defineCall(0, call(fn, args), s2, s);
}

void Importer::opUnary() {
  static const std::map<std::string, std::string> fns = {{"Relu", "nn.relu"},
                                                         {"Sigmoid", "nn.sigmoid"},
                                                         {"Tanh", "nn.tanh"},
                                                         {"Erf", "nn.erf"},
                                                         {"Exp", "nn.exp"},
                                                         {"Log", "nn.log"},
                                                         {"Sqrt", "nn.sqrt"},
                                                         {"Neg", "nn.neg"},
                                                         {"Abs", "nn.abs"},
                                                         {"Reciprocal", "nn.reciprocal"},
                                                         {"HardSwish", "nn.hard_swish"}};
  attrs({});
  unary(fns.at(node->op_type()));
}

void Importer::opIdentity() {
  attrs({});
  values[node->output(0)] = in(0);
}

void Importer::opDropout() {
  Attrs a = attrs({"seed", "ratio"});
  (void)a;
  if (hasInput(2)) {
    std::vector<int64_t> t = intsIn(2, "training_mode");
    if (!t.empty() && t[0] != 0)
      fail("training_mode is true; only inference is supported");
  }
  onlyFirstOutput();
  values[node->output(0)] = in(0);
}

void Importer::opLeakyRelu() {
  Attrs a = attrs({"alpha"});
  unary("nn.leaky_relu", {floatLiteral(a.f("alpha", 0.01f))});
}

void Importer::opHardSigmoid() {
  Attrs a = attrs({"alpha", "beta"});
  unary("nn.hard_sigmoid", {floatLiteral(a.f("alpha", 0.2f)), floatLiteral(a.f("beta", 0.5f))});
}

void Importer::opClip() {
  attrs({});
  float lo = hasInput(1) ? floatIn(1, "min") : -std::numeric_limits<float>::max();
  float hi = hasInput(2) ? floatIn(2, "max") : std::numeric_limits<float>::max();
  if (node->input(0).empty())
    fail("no input");
  if (hasInput(0) && !hasInput(1) && !hasInput(2)) {
    values[node->output(0)] = in(0);
    return;
  }
  if (lo == 0.0f && hi == std::numeric_limits<float>::max()) {
    unary("nn.relu");
    return;
  }
  unary("nn.clip", {floatLiteral(lo), floatLiteral(hi)});
}

void Importer::opBinary() {
  attrs({});
  const std::string &op = node->op_type();
  ValuePtr a = in(0), b = in(1);
  // One operand a constant scalar: a scalar argument.
  auto scalarOf = [](const ValuePtr &v) -> std::optional<float> {
    if (!v->k || v->k->numel() != 1)
      return std::nullopt;
    if (v->k->isFloat())
      return v->k->f[0];
    if (v->k->i[0].isConst())
      return static_cast<float>(v->k->i[0].c);
    return std::nullopt;
  };
  std::optional<float> sa = scalarOf(a), sb = scalarOf(b);
  if ((sa && !b->k) || (sb && !a->k)) {
    ValuePtr x = sb ? a : b;
    float s = sb ? *sb : *sa;
    std::string xn = floatTensor(x, "the tensor operand");
    Shape out = broadcastShapes(x->shape, shapeOf(sb ? b : a));
    Shape s2 = as2d(x->shape);
    std::string v = view(xn, x->shape, s2, node->output(0) + "_in");
    std::string fn;
    double arg = s;
    if (op == "Add")
      fn = "nn.add_scalar";
    else if (op == "Mul")
      fn = "nn.mul_scalar";
    else if (op == "Sub" && sb) {
      fn = "nn.add_scalar";
      arg = -s;
    } else if (op == "Sub")
      fn = "nn.rsub_scalar";
    else if (op == "Div")
      fn = sb ? "nn.div_scalar" : "nn.rdiv_scalar";
    else if (op == "Pow" && sb)
      fn = "nn.pow_scalar";
    else
      fail("a constant base with a tensor exponent is not supported");
    defineCall(0, call(fn, {v, floatLiteral(arg)}), s2, out);
    return;
  }
  binaryTensors(op, a, b);
}

void Importer::binaryTensors(const std::string &op, const ValuePtr &a, const ValuePtr &b) {
  std::string fnSame = "nn." + std::string(op == "Add"   ? "add"
                                           : op == "Sub" ? "sub"
                                           : op == "Mul" ? "mul"
                                           : op == "Div" ? "div"
                                                         : "pow");
  std::string an = floatTensor(a, "input 0"), bn = floatTensor(b, "input 1");
  Shape sa = a->shape, sb = b->shape, out = broadcastShapes(sa, sb);
  std::string base = node->output(0);
  Shape o2 = as2d(out);
  if (sa == out && sb == out) {
    defineCall(0, call(fnSame, {view(an, sa, o2, base + "_a"), view(bn, sb, o2, base + "_b")}), o2,
               out);
    return;
  }
  // A bias: b's dimensions (after leading 1s) are out's last ones.
  auto stripped = [](Shape s) {
    while (!s.empty() && s.front() == Dim::of(1))
      s.erase(s.begin());
    return s;
  };
  if (op == "Add") {
    for (int pass = 0; pass < 2; ++pass) {
      const Shape &full = pass ? sb : sa, &bias = pass ? sa : sb;
      const std::string &fn = pass ? bn : an, &bvn = pass ? an : bn;
      Shape st = stripped(bias);
      if (full != out || st.empty() || st.size() > out.size())
        continue;
      if (!std::equal(st.begin(), st.end(), out.end() - st.size()))
        continue;
      Dim n = product(st);
      Shape x2 = {product(out, 0, out.size() - st.size()), n};
      defineCall(0,
                 call("nn.bias_add",
                      {view(fn, full, x2, base + "_x"), view(bvn, bias, {n}, base + "_bias")}),
                 x2, out);
      return;
    }
  }
  // General broadcasting on rank-4 views: merge adjacent dimensions where both operands
  // behave alike (each full or broadcast), then broadcast the narrower operand.
  size_t r = out.size();
  auto padded = [&](const Shape &s) {
    Shape p(r - s.size(), Dim::of(1));
    p.insert(p.end(), s.begin(), s.end());
    return p;
  };
  Shape pa = padded(sa), pb = padded(sb);
  Shape ma, mb, mo;
  int lastKind = -1;
  for (size_t k = 0; k < r; ++k) {
    if (out[k] == Dim::of(1))
      continue;
    int kind = (pa[k] == out[k] ? 1 : 0) | (pb[k] == out[k] ? 2 : 0);
    if (kind == lastKind) {
      ma.back() = ma.back() * pa[k];
      mb.back() = mb.back() * pb[k];
      mo.back() = mo.back() * out[k];
    } else {
      ma.push_back(pa[k]);
      mb.push_back(pb[k]);
      mo.push_back(out[k]);
    }
    lastKind = kind;
  }
  if (mo.size() > 4)
    fail("broadcasting " + str(sa) + " with " + str(sb) + " needs more than 4 dimensions");
  while (mo.size() < 4) {
    ma.insert(ma.begin(), Dim::of(1));
    mb.insert(mb.begin(), Dim::of(1));
    mo.insert(mo.begin(), Dim::of(1));
  }
  std::string a4 = view(an, sa, ma, base + "_a4"), b4 = view(bn, sb, mb, base + "_b4");
  auto expandTo = [&](const std::string &x, const std::string &like, const std::string &nm) {
    std::string e = fresh(nm);
    body.push_back(e + " = " + call("nn.broadcast4", {x, like}) + ";");
    return e;
  };
  if (ma == mo) {
    b4 = expandTo(b4, a4, base + "_bb");
  } else if (mb == mo) {
    a4 = expandTo(a4, b4, base + "_ab");
  } else {
    std::vector<int64_t> dims;
    for (const Dim &d : mo)
      dims.push_back(staticDim(d, "a dimension broadcast from both operands"));
    std::string e = fresh(base + "_ab");
    body.push_back(e + " = " + call("nn.expand4", {a4}, dims) + ";");
    a4 = e;
    b4 = expandTo(b4, a4, base + "_bb");
  }
  defineCall(0, call(fnSame, {view(a4, mo, o2, base + "_a2"), view(b4, mo, o2, base + "_b2")}), o2,
             out);
}

void Importer::opMatMul() {
  attrs({});
  ValuePtr a = in(0), b = in(1);
  std::string an = floatTensor(a, "input A"), bn = floatTensor(b, "input B");
  Shape sa = a->shape, sb = b->shape;
  std::string base = node->output(0);
  bool vecA = sa.size() == 1, vecB = sb.size() == 1;
  if (vecA)
    sa.insert(sa.begin(), Dim::of(1));
  if (vecB)
    sb.push_back(Dim::of(1));
  if (sa.size() < 2 || sb.size() < 2)
    fail("a rank-0 operand");
  Dim m = sa[sa.size() - 2], k = sa.back(), k2 = sb[sb.size() - 2], n = sb.back();
  if (k != k2)
    fail("inner dimensions " + str(k) + " and " + str(k2) + " differ");
  Shape batchA(sa.begin(), sa.end() - 2), batchB(sb.begin(), sb.end() - 2);
  Shape batch = broadcastShapes(batchA, batchB);
  Shape out = batch;
  if (!vecA)
    out.push_back(m);
  if (!vecB)
    out.push_back(n);
  if (product(batchB) == Dim::of(1)) {
    // B is one matrix: A's rows stacked
    Shape a2 = {product(sa, 0, sa.size() - 1), k}, b2 = {k, n};
    defineCall(0,
               call("nn.matmul",
                    {view(an, a->shape, a2, base + "_a"), view(bn, b->shape, b2, base + "_b")}),
               {a2[0], n}, out);
    return;
  }
  if (batchA != batch || batchB != batch)
    fail("broadcasting the batch dimensions " + str(batchA) + " and " + str(batchB) +
         " is not supported");
  Dim t = product(batch);
  Shape a3 = {t, m, k}, b3 = {t, k, n};
  defineCall(0,
             call("nn.batch_matmul",
                  {view(an, a->shape, a3, base + "_a"), view(bn, b->shape, b3, base + "_b")}),
             {t, m, n}, out);
}

void Importer::opGemm() {
  Attrs at = attrs({"alpha", "beta", "transA", "transB"});
  float alpha = at.f("alpha", 1.0f), beta = at.f("beta", 1.0f);
  bool ta = at.i("transA", 0), tb = at.i("transB", 0);
  ValuePtr a = in(0), b = in(1);
  std::string an = floatTensor(a, "input A"), bn = floatTensor(b, "input B");
  std::string base = node->output(0);
  if (a->shape.size() != 2 || b->shape.size() != 2)
    fail("A and B must be matrices");
  if (ta) {
    std::string t = fresh(base + "_at");
    body.push_back(t + " = " + call("nn.transpose2d", {an}) + ";");
    an = t;
  }
  Dim m = a->shape[ta ? 1 : 0], k = a->shape[ta ? 0 : 1];
  Dim n = b->shape[tb ? 0 : 1];
  Shape out = {m, n};
  bool hasC = hasInput(2) && beta != 0.0f;
  ValuePtr c = hasC ? in(2) : nullptr;
  bool simpleBias = hasC && alpha == 1.0f && beta == 1.0f && tb &&
                    (shapeOf(c) == Shape{n} || shapeOf(c) == Shape{Dim::of(1), n});
  if (simpleBias) {
    std::string cn = floatTensor(c, "input C");
    defineCall(0, call("nn.linear", {an, bn, view(cn, c->shape, {n}, base + "_c")}), out, out);
    return;
  }
  std::string prod = fresh(hasC || alpha != 1.0f ? base + "_ab" : base);
  body.push_back(prod + " = " + call(tb ? "nn.matmul_nt" : "nn.matmul", {an, bn}) + ";");
  if (alpha != 1.0f) {
    std::string s = fresh(hasC ? base + "_abs" : base);
    body.push_back(s + " = " + call("nn.mul_scalar", {prod, floatLiteral(alpha)}) + ";");
    prod = s;
  }
  auto pv = std::make_shared<Value>();
  pv->name = prod;
  pv->dtype = "f32";
  pv->shape = out;
  if (!hasC) {
    pv->onnxName = node->output(0);
    // name the output after the ONNX value
    defineView(0, prod, out, out, "f32");
    return;
  }
  if (beta != 1.0f) {
    std::string cn = floatTensor(c, "input C");
    Shape cs = c->shape, c2 = as2d(cs);
    std::string sc = fresh(base + "_cs");
    body.push_back(sc + " = " +
                   call("nn.mul_scalar", {view(cn, cs, c2, base + "_c2"), floatLiteral(beta)}) +
                   ";");
    auto cv = std::make_shared<Value>();
    cv->name = fresh(base + "_cb");
    body.push_back(cv->name + " = reshape(" + sc + ", " + str(cs) + ");");
    cv->dtype = "f32";
    cv->shape = cs;
    c = cv;
  }
  binaryTensors("Add", pv, c);
}

/// Pads of a 2-D window operator: explicit, or from auto_pad.
struct Window {
  int64_t kh, kw, sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0, dh = 1, dw = 1;
};

void computePads(Window &w, const std::string &autoPad, int64_t h, int64_t wd,
                 const std::vector<int64_t> &pads, const std::function<void()> &bad) {
  if (autoPad == "NOTSET") {
    if (!pads.empty()) {
      if (pads.size() != 4)
        bad();
      w.pt = pads[0];
      w.pl = pads[1];
      w.pb = pads[2];
      w.pr = pads[3];
    }
    return;
  }
  if (autoPad == "VALID")
    return;
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    bad();
  auto same = [&](int64_t in, int64_t k, int64_t s, int64_t d, int64_t &b, int64_t &e) {
    int64_t out = (in + s - 1) / s;
    int64_t total = std::max<int64_t>(0, (out - 1) * s + (k - 1) * d + 1 - in);
    int64_t small = total / 2, big = total - small;
    b = autoPad == "SAME_UPPER" ? small : big;
    e = autoPad == "SAME_UPPER" ? big : small;
  };
  same(h, w.kh, w.sh, w.dh, w.pt, w.pb);
  same(wd, w.kw, w.sw, w.dw, w.pl, w.pr);
}

void Importer::opConv() {
  Attrs at = attrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  ValuePtr x = in(0), wt = in(1);
  std::string xn = floatTensor(x, "input X"), wn = floatTensor(wt, "input W");
  Shape xs = x->shape, ws = wt->shape;
  std::string base = node->output(0);
  bool oneD = xs.size() == 3;
  if (xs.size() != 4 && !oneD)
    fail("only 1-D and 2-D convolutions are supported (input of rank " + std::to_string(xs.size()) +
         ")");
  if (ws.size() != xs.size())
    fail("the weight's rank differs from the input's");
  auto two = [&](const char *name, int64_t def) {
    std::vector<int64_t> v = at.ints(name);
    if (v.empty())
      return std::vector<int64_t>{def, def};
    if (oneD && v.size() == 1)
      return std::vector<int64_t>{def == 0 ? 0 : 1, v[0]};
    if (v.size() != 2)
      unsupportedAttr(name);
    return v;
  };
  if (oneD) {
    xs.insert(xs.begin() + 2, Dim::of(1));
    ws.insert(ws.begin() + 2, Dim::of(1));
    xn = view(xn, x->shape, xs, base + "_x4");
    wn = view(wn, wt->shape, ws, base + "_w4");
  }
  Window w;
  w.kh = staticDim(ws[2], "the kernel height");
  w.kw = staticDim(ws[3], "the kernel width");
  std::vector<int64_t> ks = at.ints("kernel_shape");
  if (!ks.empty() && ks != std::vector<int64_t>(ks.size() == 1 ? 1 : 2, 0) && ks.back() != w.kw)
    unsupportedAttr("kernel_shape");
  std::vector<int64_t> st = two("strides", 1), dl = two("dilations", 1);
  w.sh = st[0];
  w.sw = st[1];
  w.dh = dl[0];
  w.dw = dl[1];
  int64_t h = staticDim(xs[2], "the input height"), wd = staticDim(xs[3], "the input width");
  std::vector<int64_t> pads = at.ints("pads");
  if (oneD && pads.size() == 2)
    pads = {0, pads[0], 0, pads[1]};
  computePads(w, at.s("auto_pad", "NOTSET"), h, wd, pads, [&] { unsupportedAttr("pads"); });
  int64_t g = at.i("group", 1);
  Dim k = ws[0];
  if (g < 1 || product(xs, 1, 2) != ws[1] * Dim::of(g))
    fail("group " + std::to_string(g) + " does not match the input's " + str(xs[1]) +
         " channels and the weight's " + str(ws[1]));
  int64_t oh = (h + w.pt + w.pb - w.dh * (w.kh - 1) - 1) / w.sh + 1;
  int64_t ow = (wd + w.pl + w.pr - w.dw * (w.kw - 1) - 1) / w.sw + 1;
  Shape ys = {xs[0], k, Dim::of(oh), Dim::of(ow)};
  std::string text;
  if (w.sh == w.sw && w.pt == w.pl && w.pt == w.pb && w.pt == w.pr && w.dh == 1 && w.dw == 1 &&
      g == 1)
    text = call("nn.conv2d", {xn, wn}, {w.sh, w.pt});
  else
    text = call("nn.conv2d_ext", {xn, wn}, {w.sh, w.sw, w.pt, w.pl, w.pb, w.pr, w.dh, w.dw, g});
  Shape outShape = ys;
  if (oneD)
    outShape.erase(outShape.begin() + 2);
  if (!hasInput(2)) {
    defineCall(0, text, ys, outShape);
    return;
  }
  std::string bn = floatTensor(in(2), "the bias");
  std::string y = fresh(base + "_nobias");
  body.push_back(y + " = " + text + ";");
  Shape y3 = {xs[0], k, Dim::of(oh * ow)};
  defineCall(0,
             call("nn.channel_bias_add",
                  {view(y, ys, y3, base + "_y3"), view(bn, in(2)->shape, {k}, base + "_b")}),
             y3, outShape);
}

void Importer::opBatchNorm() {
  Attrs at = attrs({"epsilon", "momentum", "training_mode", "spatial"});
  if (at.i("training_mode", 0) != 0)
    unsupportedAttr("training_mode", "1");
  if (at.i("spatial", 1) != 1)
    unsupportedAttr("spatial", "0");
  auto [x, xn, xs] = onlyOutputOfFloatX();
  if (xs.size() < 2)
    fail("the input has rank " + std::to_string(xs.size()));
  Shape x3 = {xs[0], xs[1], product(xs, 2)};
  std::string base = node->output(0);
  std::vector<std::string> args = {view(xn, xs, x3, base + "_x3")};
  const char *what[] = {"scale", "bias", "mean", "var"};
  for (size_t k = 1; k <= 4; ++k) {
    std::string p = floatTensor(in(k), what[k - 1]);
    args.push_back(view(p, in(k)->shape, {xs[1]}, base + "_" + what[k - 1]));
  }
  args.push_back(floatLiteral(at.f("epsilon", 1e-5f)));
  defineCall(0, call("nn.batch_norm", args), x3, xs);
}

void Importer::opMaxPool() {
  Attrs at = attrs(
      {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"});
  if (at.i("storage_order", 0) != 0)
    unsupportedAttr("storage_order", "1");
  auto [x, xn, xs] = onlyOutputOfFloatX();
  if (xs.size() != 4)
    fail("only 2-D pooling is supported");
  std::vector<int64_t> ks = at.ints("kernel_shape"), st = at.ints("strides", {1, 1}),
                       dl = at.ints("dilations", {1, 1});
  if (ks.size() != 2)
    unsupportedAttr("kernel_shape");
  if (st.size() != 2)
    unsupportedAttr("strides");
  if (dl.size() != 2)
    unsupportedAttr("dilations");
  Window w{ks[0], ks[1], st[0], st[1], 0, 0, 0, 0, dl[0], dl[1]};
  int64_t h = staticDim(xs[2], "the input height"), wd = staticDim(xs[3], "the input width");
  computePads(w, at.s("auto_pad", "NOTSET"), h, wd, at.ints("pads"),
              [&] { unsupportedAttr("pads"); });
  auto outSize = [&](int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
    int64_t span = in + pb + pe - d * (k - 1) - 1;
    if (!at.i("ceil_mode", 0))
      return span / s + 1;
    int64_t o = (span + s - 1) / s + 1;
    if ((o - 1) * s >= in + pb) // the last window must start inside the input or its padding
      --o;
    return o;
  };
  int64_t oh = outSize(h, w.kh, w.sh, w.dh, w.pt, w.pb);
  int64_t ow = outSize(wd, w.kw, w.sw, w.dw, w.pl, w.pr);
  // ceil_mode: more padding at the end (never chosen) gives the same windows
  w.pb = std::max(w.pb, (oh - 1) * w.sh + w.dh * (w.kh - 1) + 1 - h - w.pt);
  w.pr = std::max(w.pr, (ow - 1) * w.sw + w.dw * (w.kw - 1) + 1 - wd - w.pl);
  Shape ys = {xs[0], xs[1], Dim::of(oh), Dim::of(ow)};
  bool simple = w.kh == w.kw && w.sh == w.sw && w.pt == w.pl && w.pt == w.pb && w.pt == w.pr &&
                w.dh == 1 && w.dw == 1 && (h + 2 * w.pt - w.kh) / w.sh + 1 == oh &&
                (wd + 2 * w.pt - w.kw) / w.sw + 1 == ow;
  if (simple)
    defineCall(0, call("nn.max_pool2d", {xn}, {w.kh, w.sh, w.pt}), ys, ys);
  else
    defineCall(0,
               call("nn.max_pool2d_ext", {xn},
                    {w.kh, w.kw, w.sh, w.sw, w.pt, w.pl, w.pb, w.pr, w.dh, w.dw}),
               ys, ys);
}

void Importer::opAveragePool() {
  Attrs at =
      attrs({"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"});
  if (at.i("ceil_mode", 0) != 0)
    unsupportedAttr("ceil_mode", "1");
  ValuePtr x = in(0);
  std::string xn = floatTensor(x, "input X");
  Shape xs = x->shape;
  if (xs.size() != 4)
    fail("only 2-D pooling is supported");
  std::vector<int64_t> ks = at.ints("kernel_shape"), st = at.ints("strides", {1, 1});
  if (ks.size() != 2)
    unsupportedAttr("kernel_shape");
  if (st.size() != 2)
    unsupportedAttr("strides");
  Window w{ks[0], ks[1], st[0], st[1]};
  int64_t h = staticDim(xs[2], "the input height"), wd = staticDim(xs[3], "the input width");
  computePads(w, at.s("auto_pad", "NOTSET"), h, wd, at.ints("pads"),
              [&] { unsupportedAttr("pads"); });
  int64_t cip = at.i("count_include_pad", 0);
  int64_t oh = (h + w.pt + w.pb - w.kh) / w.sh + 1, ow = (wd + w.pl + w.pr - w.kw) / w.sw + 1;
  Shape ys = {xs[0], xs[1], Dim::of(oh), Dim::of(ow)};
  bool symmetric = w.pt == w.pl && w.pt == w.pb && w.pt == w.pr;
  if (w.kh == w.kw && w.sh == w.sw && symmetric && (cip == 1 || w.pt == 0))
    defineCall(0, call("nn.avg_pool2d", {xn}, {w.kh, w.sh, w.pt}), ys, ys);
  else
    defineCall(0,
               call("nn.avg_pool2d_ext", {xn},
                    {w.kh, w.kw, w.sh, w.sw, w.pt, w.pl, w.pb, w.pr, cip ? 1 : 0}),
               ys, ys);
}

void Importer::opGlobalPool() {
  attrs({});
  ValuePtr x = in(0);
  std::string xn = floatTensor(x, "input X");
  Shape xs = x->shape;
  if (xs.size() < 3)
    fail("the input has rank " + std::to_string(xs.size()));
  Shape x2 = {xs[0] * xs[1], product(xs, 2)};
  Shape ys(xs.size(), Dim::of(1));
  ys[0] = xs[0];
  ys[1] = xs[1];
  std::string fn = node->op_type() == "GlobalAveragePool" ? "nn.mean" : "nn.max";
  defineCall(0, call(fn, {view(xn, xs, x2, node->output(0) + "_x2")}), {x2[0]}, ys);
}

void Importer::opFlatten() {
  Attrs at = attrs({"axis"});
  ValuePtr x = in(0);
  std::string xn = tensor(x);
  Shape xs = x->shape;
  int64_t axis = at.i("axis", 1);
  if (axis < 0)
    axis += static_cast<int64_t>(xs.size());
  if (axis < 0 || axis > static_cast<int64_t>(xs.size()))
    fail("axis " + std::to_string(axis) + " is out of range");
  defineView(0, xn, xs, {product(xs, 0, axis), product(xs, axis)}, x->dtype);
}

void Importer::opReshape() {
  Attrs at = attrs({"allowzero"});
  if (at.i("allowzero", 0) != 0)
    unsupportedAttr("allowzero", "1");
  ValuePtr x = in(0);
  std::string xn = tensor(x);
  const Const &spec = constIn(1, "the shape");
  Shape out;
  reshapeTarget(x->shape, spec.i, out);
  defineView(0, xn, x->shape, out, x->dtype);
}

void Importer::opSqueeze() {
  ValuePtr x = in(0);
  std::string xn = tensor(x);
  std::vector<int64_t> axes = squeezeAxes();
  Shape out;
  for (size_t k = 0; k < x->shape.size(); ++k)
    if (std::find(axes.begin(), axes.end(), k) == axes.end())
      out.push_back(x->shape[k]);
  defineView(0, xn, x->shape, out, x->dtype);
}

void Importer::opUnsqueeze() {
  ValuePtr x = in(0);
  std::string xn = tensor(x);
  std::vector<int64_t> axes = unsqueezeAxes();
  size_t r = x->shape.size() + axes.size(), src = 0;
  Shape out;
  for (size_t k = 0; k < r; ++k)
    out.push_back(std::find(axes.begin(), axes.end(), k) != axes.end() ? Dim::of(1)
                                                                       : x->shape[src++]);
  defineView(0, xn, x->shape, out, x->dtype);
}

void Importer::opTranspose() {
  Attrs at = attrs({"perm"});
  ValuePtr x = in(0);
  std::string xn = floatTensor(x, "the input");
  Shape xs = x->shape;
  size_t r = xs.size();
  std::vector<int64_t> perm(r);
  for (size_t k = 0; k < r; ++k)
    perm[k] = static_cast<int64_t>(r - 1 - k);
  perm = at.ints("perm", perm);
  if (perm.size() != r)
    unsupportedAttr("perm");
  Shape out;
  for (int64_t p : perm)
    out.push_back(xs.at(p));
  // Drop size-1 axes, then merge input axes that stay adjacent in the output.
  std::vector<int64_t> kept;
  for (int64_t p : perm)
    if (xs[p] != Dim::of(1))
      kept.push_back(p);
  // groups: runs of consecutive input axes in output order
  std::vector<std::vector<int64_t>> groups;
  for (int64_t p : kept) {
    if (!groups.empty()) {
      int64_t prev = groups.back().back();
      // consecutive when no non-1 axis lies between prev and p in the input
      bool adjacent = p > prev;
      for (int64_t q = prev + 1; adjacent && q < p; ++q)
        adjacent = xs[q] == Dim::of(1);
      if (adjacent) {
        groups.back().push_back(p);
        continue;
      }
    }
    groups.push_back({p});
  }
  if (groups.size() <= 1) {
    defineView(0, xn, xs, out, "f32");
    return;
  }
  // The groups in input order; the permutation must swap two adjacent runs of groups.
  std::vector<size_t> order(groups.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return groups[a].front() < groups[b].front(); });
  // order[i] = output position of the i-th group in input order
  std::vector<size_t> pos(groups.size());
  for (size_t i = 0; i < order.size(); ++i)
    pos[order[i]] = i;
  // output sequence of input-group indices: pos[0], pos[1], ...
  // find split: output = [prefix][second block][first block][suffix]
  size_t g = groups.size();
  size_t lo = 0;
  while (lo < g && pos[lo] == lo)
    ++lo;
  size_t hi = g;
  while (hi > lo && pos[hi - 1] == hi - 1)
    --hi;
  // output positions lo..hi-1 hold input groups [m..hi-1] then [lo..m-1]
  size_t m = pos[lo];
  bool swap = m > lo && m < hi;
  for (size_t i = lo; swap && i < hi; ++i) {
    size_t want = i < lo + (hi - m) ? m + (i - lo) : lo + (i - lo - (hi - m));
    swap = pos[i] == want;
  }
  if (!swap)
    fail("the permutation is not supported (after merging axes it must swap two blocks of "
         "axes)");
  auto groupDims = [&](size_t from, size_t to) {
    Dim d = Dim::of(1);
    for (size_t i = from; i < to; ++i)
      for (int64_t p : groups[order[i]])
        d = d * xs[p];
    return d;
  };
  Shape x4 = {groupDims(0, lo), groupDims(lo, m), groupDims(m, hi), groupDims(hi, g)};
  Shape y4 = {x4[0], x4[2], x4[1], x4[3]};
  defineCall(0, call("nn.swap_axes", {view(xn, xs, x4, node->output(0) + "_x4")}), y4, out);
}

void Importer::opSoftmax() {
  Attrs at = attrs({"axis"});
  ValuePtr x = in(0);
  std::string xn = floatTensor(x, "the input");
  Shape xs = x->shape;
  int64_t r = static_cast<int64_t>(xs.size());
  int64_t axis = normAxis(at.i("axis", opset >= 13 ? -1 : 1), r);
  if (opset >= 13 && product(xs, axis + 1) != Dim::of(1))
    fail("softmax over axis " + std::to_string(axis) + " of " + str(xs) +
         " is not supported (only over the last axis)");
  Shape x2 = {product(xs, 0, axis), product(xs, axis)};
  std::string fn = node->op_type() == "Softmax" ? "nn.softmax" : "nn.log_softmax";
  defineCall(0, call(fn, {view(xn, xs, x2, node->output(0) + "_x2")}), x2, xs);
}

void Importer::opLayerNorm() {
  Attrs at = attrs({"axis", "epsilon", "stash_type"});
  auto [x, xn, xs] = onlyOutputOfFloatX();
  int64_t axis = normAxis(at.i("axis", -1), static_cast<int64_t>(xs.size()));
  Shape x2 = {product(xs, 0, axis), product(xs, axis)};
  std::string base = node->output(0);
  std::string g = floatTensor(in(1), "the scale");
  std::string b;
  if (hasInput(2)) {
    b = floatTensor(in(2), "the bias");
    b = view(b, in(2)->shape, {x2[1]}, base + "_beta");
  } else {
    auto zero = std::make_shared<Value>();
    Const z;
    z.dims = {staticDim(x2[1], "the normalised size")};
    z.f.assign(z.dims[0], 0.0f);
    zero->k = z;
    zero->onnxName = base + "_zero_bias";
    b = tensor(zero);
  }
  defineCall(0,
             call("nn.layer_norm",
                  {view(xn, xs, x2, base + "_x2"), view(g, in(1)->shape, {x2[1]}, base + "_gamma"),
                   b, floatLiteral(at.f("epsilon", 1e-5f))}),
             x2, xs);
}

std::string Importer::sliceAxis(const std::string &x, Shape &shape, size_t axis, int64_t start,
                                int64_t end, int64_t step, const std::string &base) {
  Shape x3 = as3d(shape, axis);
  int64_t n = (end - start + step - 1) / step;
  Shape out = shape;
  out[axis] = Dim::of(n);
  Shape y3 = {x3[0], Dim::of(n), x3[2]};
  std::string t = fresh(base);
  body.push_back(t + " = " +
                 call("nn.slice_axis", {view(x, shape, x3, base + "_x3")}, {start, end, step}) +
                 ";");
  std::string r = view(t, y3, out, base + "_v");
  shape = out;
  return r;
}

void Importer::opGather() {
  Attrs at = attrs({"axis"});
  ValuePtr data = in(0), idx = in(1);
  std::string base = node->output(0);
  int64_t r = rankOf(data);
  int64_t axis = normAxis(at.i("axis", 0), r);
  if (idx->k && !data->k) {
    // Constant indices into a tensor of the graph: slices.
    std::string dn = floatTensor(data, "the data");
    std::vector<int64_t> ids = intsIn(1, "the indices");
    Shape ds = data->shape;
    int64_t n = staticDim(ds[axis], "the gathered dimension");
    for (int64_t &i : ids)
      i = i < 0 ? i + n : i;
    for (size_t k = 1; k < ids.size(); ++k)
      if (ids[k] != ids[k - 1] + 1)
        fail("only a constant index or a run of consecutive constant indices is supported");
    if (ids.empty() || ids[0] < 0 || ids.back() >= n)
      fail("an index is out of range");
    Shape s = ds;
    std::string v = ids.front() == 0 && ids.back() == n - 1
                        ? dn // every index, in order
                        : sliceAxis(dn, s, axis, ids.front(), ids.back() + 1, 1, base + "_s");
    Shape out(ds.begin(), ds.begin() + axis);
    for (int64_t d : idx->k->dims)
      out.push_back(Dim::of(d));
    out.insert(out.end(), ds.begin() + axis + 1, ds.end());
    defineView(0, v, s, out, "f32");
    return;
  }
  // Embedding: rows of a table picked by integer indices.
  if (axis != 0)
    fail("gathering a computed index along axis " + std::to_string(axis) +
         " is not supported (only axis 0)");
  std::string tn = floatTensor(data, "the data");
  std::string in_ = tensor(idx);
  if (idx->dtype != "i64")
    fail("the indices must be int64");
  Shape ts = data->shape, is = idx->shape;
  Shape t2 = {ts[0], product(ts, 1)};
  Shape i1 = {product(is)};
  Shape out = is;
  out.insert(out.end(), ts.begin() + 1, ts.end());
  defineCall(
      0,
      call("nn.embedding", {view(tn, ts, t2, base + "_table"), view(in_, is, i1, base + "_idx")}),
      {i1[0], t2[1]}, out);
}

void Importer::opSlice() {
  attrs({});
  ValuePtr x = in(0);
  std::string xn = floatTensor(x, "the data");
  Shape xs = x->shape;
  int64_t r = static_cast<int64_t>(xs.size());
  SliceSpec sl = sliceSpec();
  Shape s = xs;
  std::string v = xn;
  std::string base = node->output(0);
  for (size_t k = 0; k < sl.axes.size(); ++k) {
    int64_t ax = normAxis(sl.axes[k], r);
    int64_t step = sl.steps[k];
    if (step <= 0)
      fail("only positive steps are supported");
    int64_t dim = staticDim(xs[ax], "a sliced dimension");
    int64_t b = sl.starts[k], e = sl.ends[k];
    sliceBounds(dim, b, e, step);
    if (b == 0 && e == dim && step == 1)
      continue;
    if (e <= b)
      fail("an empty slice is not supported");
    v = sliceAxis(v, s, ax, b, e, step, base + "_s");
  }
  defineView(0, v, s, s, "f32");
}

void Importer::opConcat() {
  Attrs at = attrs({"axis"});
  ValuePtr first = in(0);
  int64_t r = rankOf(first);
  int64_t axis = normAxis(at.i("axis", 0), r);
  std::string base = node->output(0);
  struct Part {
    std::string name;
    Shape shape;
  };
  std::vector<Part> parts;
  for (size_t k = 0; k < numInputs(); ++k) {
    ValuePtr x = in(k);
    Shape xs = shapeOf(x);
    if (xs[axis] == Dim::of(0))
      continue;
    parts.push_back({floatTensor(x, "an input"), xs});
  }
  if (parts.empty())
    fail("every input is empty");
  // Consecutive inputs joined by nn.concat2 to nn.concat4, level by level (a tree): each
  // element is copied about log4(n) times, where a chain of pairs would copy the first input
  // n - 1 times (DenseNet's layers concatenate all the earlier features).
  static const char *const suffix[] = {"_a3", "_b3", "_c3", "_d3"};
  while (parts.size() > 1) {
    std::vector<Part> next;
    for (size_t i = 0; i < parts.size(); i += 4) {
      size_t n = std::min<size_t>(4, parts.size() - i);
      if (n == 1) {
        next.push_back(parts[i]);
        continue;
      }
      Shape out = parts[i].shape;
      Shape a3 = as3d(out, axis);
      std::vector<std::string> views;
      bool constant = out[axis].isConst();
      int64_t total = constant ? out[axis].c : 0;
      for (size_t j = i; j < i + n; ++j) {
        Shape b3 = as3d(parts[j].shape, axis);
        if (a3[0] != b3[0] || a3[2] != b3[2])
          fail("inputs " + str(parts[i].shape) + " and " + str(parts[j].shape) + " do not agree");
        if (j > i) {
          constant = constant && parts[j].shape[axis].isConst();
          total += constant ? parts[j].shape[axis].c : 0;
        }
        views.push_back(view(parts[j].name, parts[j].shape, b3, base + suffix[j - i]));
      }
      if (!constant)
        for (size_t j = i; j < i + n; ++j)
          staticDim(parts[j].shape[axis], "a concatenated dimension"); // fails at a symbolic one
      out[axis] = Dim::of(total);
      std::string t = fresh(base + "_c");
      body.push_back(t + " = " + call("nn.concat" + std::to_string(n), views) + ";");
      Shape y3 = {a3[0], out[axis], a3[2]};
      next.push_back({view(t, y3, out, base + "_cv"), out});
    }
    parts = std::move(next);
  }
  defineView(0, parts[0].name, parts[0].shape, parts[0].shape, "f32");
}

void Importer::opSplit() {
  Attrs at = attrs({"axis", "split"});
  ValuePtr x = in(0);
  std::string xn = floatTensor(x, "the input");
  Shape xs = x->shape;
  int64_t axis = normAxis(at.i("axis", 0), rankOf(x));
  int64_t n = staticDim(xs[axis], "the split dimension");
  std::vector<int64_t> parts =
      opset >= 13 ? (hasInput(1) ? intsIn(1, "split") : std::vector<int64_t>{}) : at.ints("split");
  int64_t outs = node->output_size();
  if (parts.empty()) {
    if (n % outs)
      fail("the dimension " + std::to_string(n) + " does not split evenly");
    parts.assign(outs, n / outs);
  }
  int64_t start = 0;
  for (int64_t k = 0; k < outs; ++k) {
    Shape s = xs;
    if (parts[k] <= 0)
      fail("an empty part is not supported");
    std::string v = sliceAxis(xn, s, axis, start, start + parts[k], 1, node->output(k) + "_s");
    start += parts[k];
    defineView(k, v, s, s, "f32");
  }
}

void Importer::opPad() {
  Attrs at = attrs({"mode"});
  if (at.s("mode", "constant") != "constant")
    unsupportedAttr("mode", at.s("mode", ""));
  ValuePtr x = in(0);
  std::string xn = floatTensor(x, "the data");
  Shape xs = x->shape;
  size_t r = xs.size();
  std::vector<int64_t> pads = intsIn(1, "the pads");
  if (pads.size() != 2 * r)
    fail("expected " + std::to_string(2 * r) + " pads");
  float value = hasInput(2) ? floatIn(2, "the constant value") : 0.0f;
  std::string base = node->output(0), v = xn;
  Shape s = xs;
  for (size_t ax = 0; ax < r; ++ax) {
    int64_t b = pads[ax], e = pads[ax + r];
    if (b < 0 || e < 0)
      fail("negative pads are not supported");
    if (b == 0 && e == 0)
      continue;
    Shape x3 = as3d(s, ax);
    Shape out = s;
    out[ax] = s[ax].isConst() ? Dim::of(s[ax].c + b + e)
                              : Dim::of(staticDim(s[ax], "a padded dimension"));
    std::string t = fresh(base + "_p");
    body.push_back(
        t + " = " +
        call("nn.pad_axis", {view(v, s, x3, base + "_x3"), floatLiteral(value)}, {b, e}) + ";");
    v = view(t, {x3[0], out[ax], x3[2]}, out, base + "_pv");
    s = out;
  }
  defineView(0, v, s, s, "f32");
}

void Importer::opReduce() {
  const std::string &op = node->op_type();
  bool axesInput = op == "ReduceSum" && opset >= 13;
  Attrs at = axesInput ? attrs({"keepdims", "noop_with_empty_axes"}) : attrs({"axes", "keepdims"});
  ValuePtr x = in(0);
  std::string xn = floatTensor(x, "the data");
  Shape xs = x->shape;
  int64_t r = static_cast<int64_t>(xs.size());
  std::vector<int64_t> axes =
      axesInput ? (hasInput(1) ? intsIn(1, "the axes") : std::vector<int64_t>{}) : at.ints("axes");
  if (axes.empty()) {
    if (at.i("noop_with_empty_axes", 0)) {
      values[node->output(0)] = x;
      return;
    }
    axes.resize(r);
    std::iota(axes.begin(), axes.end(), 0);
  }
  for (int64_t &a : axes)
    a = normAxis(a, r);
  std::sort(axes.begin(), axes.end());
  for (size_t k = 1; k < axes.size(); ++k)
    if (axes[k] != axes[k - 1] + 1)
      fail("only reductions over consecutive axes are supported");
  bool keep = at.i("keepdims", 1);
  Shape out;
  for (int64_t k = 0; k < r; ++k) {
    bool red = std::find(axes.begin(), axes.end(), k) != axes.end();
    if (!red)
      out.push_back(xs[k]);
    else if (keep)
      out.push_back(Dim::of(1));
  }
  Dim outer = product(xs, 0, axes.front()), n = product(xs, axes.front(), axes.back() + 1),
      inner = product(xs, axes.back() + 1);
  std::string kind = op == "ReduceMean"  ? "mean"
                     : op == "ReduceSum" ? "sum"
                     : op == "ReduceMin" ? "min"
                                         : "max";
  std::string base = node->output(0);
  if (inner == Dim::of(1)) {
    Shape x2 = {outer, n};
    defineCall(0, call("nn." + kind, {view(xn, xs, x2, base + "_x2")}), {outer}, out);
    return;
  }
  Shape x3 = {outer, n, inner};
  defineCall(0, call("nn." + kind + "_mid", {view(xn, xs, x3, base + "_x3")}), {outer, inner}, out);
}

void Importer::opArgReduce() {
  Attrs at = attrs({"axis", "keepdims", "select_last_index"});
  ValuePtr x = in(0);
  std::string xn = floatTensor(x, "the data");
  Shape xs = x->shape;
  int64_t r = static_cast<int64_t>(xs.size());
  int64_t axis = normAxis(at.i("axis", 0), r);
  Shape out;
  for (int64_t k = 0; k < r; ++k)
    if (k != axis)
      out.push_back(xs[k]);
    else if (at.i("keepdims", 1))
      out.push_back(Dim::of(1));
  Dim outer = product(xs, 0, axis), inner = product(xs, axis + 1);
  Shape x3 = {outer, xs[axis], inner};
  int64_t max = node->op_type() == "ArgMax", last = at.i("select_last_index", 0) != 0;
  defineCall(0, call("nn.arg_reduce_mid", {view(xn, xs, x3, node->output(0) + "_x3")}, {max, last}),
             {outer, inner}, out, "i64");
}

void Importer::opTrilu() {
  Attrs at = attrs({"upper"});
  ValuePtr x = in(0);
  std::string xn = tensor(x);
  Shape xs = x->shape; // rank 2 or more: ONNX shape inference refuses less
  std::string base = node->output(0);
  // k: a constant or a graph input (a run-time scalar), 0 when absent.
  ValuePtr k = hasInput(1) ? in(1) : nullptr;
  if (!k) {
    k = std::make_shared<Value>();
    Const zero;
    zero.elem = onnx::TensorProto::INT64;
    zero.i = {Dim::of(0)};
    zero.dims = {1};
    k->k = zero;
    k->onnxName = base + "_k";
  }
  std::string kn = tensor(k);
  if (k->dtype != "i64" || product(k->shape) != Dim::of(1))
    fail("k must be one int64");
  kn = view(kn, k->shape, {Dim::of(1)}, base + "_k1");
  size_t r = xs.size();
  Shape x3 = {product(xs, 0, r - 2), xs[r - 2], xs[r - 1]};
  std::string fn = x->dtype == "f32" ? "nn.trilu" : "nn.trilu_i64";
  defineCall(0, call(fn, {view(xn, xs, x3, base + "_x3"), kn}, {at.i("upper", 1) != 0}), x3, xs,
             x->dtype);
}

void Importer::opCast() {
  Attrs at = attrs({"to"});
  ValuePtr x = in(0);
  int32_t to = static_cast<int32_t>(at.i("to", 0));
  tensor(x);
  std::string want = to == onnx::TensorProto::FLOAT   ? "f32"
                     : to == onnx::TensorProto::INT64 ? "i64"
                                                      : "";
  if (want != x->dtype)
    unsupportedAttr("to", typeName(to) + " (casting a " + x->dtype + " tensor of the graph)");
  values[node->output(0)] = x;
}

void Importer::opExpand() {
  attrs({});
  ValuePtr x = in(0);
  std::string xn = floatTensor(x, "the input");
  Shape target;
  for (const Dim &d : constIn(1, "the shape").i)
    target.push_back(d);
  Shape out = broadcastShapes(x->shape, target);
  if (out == x->shape) {
    values[node->output(0)] = x;
    return;
  }
  // x broadcast against a constant of the output shape
  size_t r = out.size();
  Shape px(r - x->shape.size(), Dim::of(1));
  px.insert(px.end(), x->shape.begin(), x->shape.end());
  Shape mx, mo;
  int last = -1;
  for (size_t k = 0; k < r; ++k) {
    if (out[k] == Dim::of(1))
      continue;
    int kind = px[k] == out[k];
    if (kind == last) {
      mx.back() = mx.back() * px[k];
      mo.back() = mo.back() * out[k];
    } else {
      mx.push_back(px[k]);
      mo.push_back(out[k]);
    }
    last = kind;
  }
  if (mo.size() > 4)
    fail("expanding " + str(x->shape) + " to " + str(out) + " needs more than 4 dimensions");
  while (mo.size() < 4) {
    mx.insert(mx.begin(), Dim::of(1));
    mo.insert(mo.begin(), Dim::of(1));
  }
  std::vector<int64_t> dims;
  for (const Dim &d : mo)
    dims.push_back(staticDim(d, "an expanded dimension"));
  defineCall(0, call("nn.expand4", {view(xn, x->shape, mx, node->output(0) + "_x4")}, dims), mo,
             out);
}

//===--------------------------------------------------------------------------------------===//
// The driver of the translation
//===--------------------------------------------------------------------------------------===//

void Importer::translateNode() {
  static const std::map<std::string, Handler> handlers = {
      {"Relu", &Importer::opUnary},
      {"Sigmoid", &Importer::opUnary},
      {"Tanh", &Importer::opUnary},
      {"Erf", &Importer::opUnary},
      {"Exp", &Importer::opUnary},
      {"Log", &Importer::opUnary},
      {"Sqrt", &Importer::opUnary},
      {"Neg", &Importer::opUnary},
      {"Abs", &Importer::opUnary},
      {"Reciprocal", &Importer::opUnary},
      {"HardSwish", &Importer::opUnary},
      {"Identity", &Importer::opIdentity},
      {"Dropout", &Importer::opDropout},
      {"LeakyRelu", &Importer::opLeakyRelu},
      {"HardSigmoid", &Importer::opHardSigmoid},
      {"Clip", &Importer::opClip},
      {"Add", &Importer::opBinary},
      {"Sub", &Importer::opBinary},
      {"Mul", &Importer::opBinary},
      {"Div", &Importer::opBinary},
      {"Pow", &Importer::opBinary},
      {"MatMul", &Importer::opMatMul},
      {"Gemm", &Importer::opGemm},
      {"Conv", &Importer::opConv},
      {"BatchNormalization", &Importer::opBatchNorm},
      {"MaxPool", &Importer::opMaxPool},
      {"AveragePool", &Importer::opAveragePool},
      {"GlobalAveragePool", &Importer::opGlobalPool},
      {"GlobalMaxPool", &Importer::opGlobalPool},
      {"Flatten", &Importer::opFlatten},
      {"Reshape", &Importer::opReshape},
      {"Squeeze", &Importer::opSqueeze},
      {"Unsqueeze", &Importer::opUnsqueeze},
      {"Transpose", &Importer::opTranspose},
      {"Softmax", &Importer::opSoftmax},
      {"LogSoftmax", &Importer::opSoftmax},
      {"LayerNormalization", &Importer::opLayerNorm},
      {"Gather", &Importer::opGather},
      {"Slice", &Importer::opSlice},
      {"Concat", &Importer::opConcat},
      {"Split", &Importer::opSplit},
      {"Pad", &Importer::opPad},
      {"ReduceMean", &Importer::opReduce},
      {"ReduceSum", &Importer::opReduce},
      {"ReduceMax", &Importer::opReduce},
      {"ReduceMin", &Importer::opReduce},
      {"ArgMax", &Importer::opArgReduce},
      {"ArgMin", &Importer::opArgReduce},
      {"Trilu", &Importer::opTrilu},
      {"Cast", &Importer::opCast},
      {"Expand", &Importer::opExpand},
  };
  bool standard = node->domain().empty() || node->domain() == "ai.onnx";
  auto it = handlers.find(node->op_type());
  if (standard && foldNode())
    return;
  if (!standard || it == handlers.end()) {
    std::string n = node->name().empty() ? "#" + std::to_string(nodeIndex) : node->name();
    std::string op = standard ? node->op_type() : node->domain() + "." + node->op_type();
    throw ImportError("unsupported operator '" + op + "' (node '" + n + "')");
  }
  (this->*(it->second))();
}

void Importer::checkInferred() {
  for (const std::string &o : node->output()) {
    auto v = values.find(o);
    auto t = inferred.find(o);
    if (o.empty() || v == values.end() || t == inferred.end() || !t->second->has_tensor_type() ||
        !t->second->tensor_type().has_shape())
      continue;
    Shape mine = shapeOf(v->second);
    const auto &dims = t->second->tensor_type().shape().dim();
    bool bad = dims.size() != static_cast<int>(mine.size());
    for (int k = 0; !bad && k < dims.size(); ++k)
      if (dims[k].has_dim_value() && mine[k].isConst() && dims[k].dim_value() != mine[k].c)
        bad = true;
    if (bad) {
      std::string theirs = "[";
      for (int k = 0; k < dims.size(); ++k)
        theirs += (k ? ", " : "") + (dims[k].has_dim_value() ? std::to_string(dims[k].dim_value())
                                                             : dims[k].dim_param());
      fail("the importer computes the shape " + str(mine) + " for '" + o + "' but ONNX infers " +
           theirs + "]");
    }
  }
}

void Importer::run() {
  readOpset();
  if (model.graph().node_size() == 0)
    throw ImportError("the model's graph has no nodes");
  const onnx::GraphProto &g = model.graph();
  for (const onnx::ValueInfoProto &v : g.value_info())
    inferred[v.name()] = &v.type();
  for (const onnx::ValueInfoProto &v : g.output())
    inferred[v.name()] = &v.type();
  names.allocate(opts.graphName);
  std::string signature;
  declareInputs(signature);
  for (nodeIndex = 0; nodeIndex < g.node_size(); ++nodeIndex) {
    node = &g.node(nodeIndex);
    translateNode();
    checkInferred();
  }
  // The graph's results, named after the model's outputs.
  std::vector<std::string> results, types;
  for (const onnx::ValueInfoProto &o : g.output()) {
    auto it = values.find(o.name());
    if (it == values.end())
      throw ImportError("output '" + o.name() + "' is not computed by the graph");
    ValuePtr v = it->second;
    // A constant output (a Constant node, an initializer): its `const`, returned through a
    // view (the compiled graph copies it into the output).
    bool constant = v->k && (v->name.empty() || initializerNames.count(v->onnxName));
    if (constant)
      tensor(v);
    std::string name = v->name;
    if (constant || v->onnxName != o.name() ||
        std::find(results.begin(), results.end(), name) != results.end()) {
      auto r = outputNames.find(o.name());
      if (r != outputNames.end() && !r->second.second) {
        name = r->second.first;
        r->second.second = true;
      } else {
        name = fresh(o.name());
      }
      body.push_back(name + " = reshape(" + v->name + ", " + str(v->shape) + ");");
    }
    results.push_back(name);
    types.push_back(v->dtype + str(v->shape));
  }
  std::ostringstream os;
  os << "// Generated by tdsl-import from " << fs::path(opts.model).filename().string()
     << " (ONNX opset " << opset;
  if (convertedFrom)
    os << ", converted from opset " << convertedFrom << " by ONNX's version converter";
  os << ").\n";
  os << "import \"nn\";\n\n";
  for (const std::string &c : constDecls)
    os << c << "\n";
  if (!constDecls.empty())
    os << "\n";
  os << "graph " << opts.graphName << "(" << signature << ") -> ";
  if (types.size() == 1) {
    os << types[0];
  } else {
    os << "(";
    for (size_t k = 0; k < types.size(); ++k)
      os << (k ? ", " : "") << types[k];
    os << ")";
  }
  os << " {\n  dataflow {\n";
  for (const std::string &line : body)
    os << "    " << line << "\n";
  os << "    output ";
  for (size_t k = 0; k < results.size(); ++k)
    os << (k ? ", " : "") << results[k];
  os << ";\n  }\n  return ";
  for (size_t k = 0; k < results.size(); ++k)
    os << (k ? ", " : "") << results[k];
  os << ";\n}\n";
  text = os.str();
}

const char *const kHelp = R"(OVERVIEW: tdsl-import — translate an ONNX model into a TDSL graph

USAGE: tdsl-import [options] MODEL.onnx

OPTIONS:
  -o FILE        the module to write (default: MODEL with the extension .tdsl); the weights go
                 to FILE's stem + ".weights/NAME.npy" beside it
  --name GRAPH   the graph's name (default main)
  -h, --help     print this help and exit

Exit status: 0 success, 1 an unreadable or unsupported model (nothing written), 2 bad command
line. docs/importer.md lists the supported operators.
)";

} // namespace

std::optional<int> parseCommandLine(int argc, const char *const *argv, ImportOptions &opts,
                                    std::ostream &out, std::ostream &err) {
  po::options_description d;
  d.add_options()("help,h", "")("output,o", po::value<std::vector<std::string>>(),
                                "")("name", po::value<std::vector<std::string>>(),
                                    "")("input", po::value<std::vector<std::string>>(), "");
  po::positional_options_description pos;
  pos.add("input", -1);
  po::variables_map vm;
  auto fail = [&](const std::string &msg) -> std::optional<int> {
    err << "tdsl-import: error: " << msg << "\n";
    err << "tdsl-import: see 'tdsl-import --help'\n";
    return 2;
  };
  try {
    auto style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(argc, argv).options(d).positional(pos).style(style).run(),
              vm);
    po::notify(vm);
  } catch (const po::error &e) {
    return fail(e.what());
  }
  if (vm.count("help")) {
    out << kHelp;
    return 0;
  }
  auto last = [&](const char *name) -> std::optional<std::string> {
    if (!vm.count(name))
      return std::nullopt;
    return vm[name].as<std::vector<std::string>>().back();
  };
  if (auto n = last("name")) {
    if (!isIdentifier(*n))
      return fail("invalid graph name '" + *n +
                  "' for --name; expected an identifier that is "
                  "not a keyword");
    opts.graphName = *n;
  }
  if (auto o = last("output"))
    opts.output = *o;
  if (!vm.count("input"))
    return fail("no input file");
  const auto &inputs = vm["input"].as<std::vector<std::string>>();
  if (inputs.size() != 1)
    return fail("exactly one input file expected, got " + std::to_string(inputs.size()));
  opts.model = inputs[0];
  if (opts.output.empty())
    opts.output = fs::path(opts.model).replace_extension(".tdsl").string();
  return std::nullopt;
}

int runImporter(const ImportOptions &opts, std::ostream &err) {
  auto error = [&](const std::string &msg) {
    err << opts.model << ": error: " << msg << "\n";
    return 1;
  };
  std::error_code ec;
  if (fs::is_directory(opts.model, ec))
    return error("cannot open the file: it is a directory");
  // The output's folder must exist, as for tdslc's -o: nothing is created in its place.
  fs::path out(opts.output);
  fs::path outDir = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  if (!fs::is_directory(outDir, ec))
    return error("cannot write '" + out.string() + "': the folder '" + outDir.string() +
                 "' does not exist");
  if (fs::is_directory(out, ec))
    return error("cannot write '" + out.string() + "': it is a directory");
  std::ifstream file(opts.model, std::ios::binary);
  if (!file)
    return error("cannot open the file: " + std::string(std::strerror(errno)));
  std::string bytes;
  try {
    bytes.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  } catch (const std::exception &) {
    return error("cannot read the file");
  }
  if (file.bad())
    return error("cannot read the file");
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    return error("not an ONNX model (the protobuf message does not parse)");
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    return error(std::string("the model is not valid ONNX: ") + e.what());
  }
  // Opsets 7 to 10 (ONNX Model Zoo's older models) go through ONNX's version converter to
  // opset 11, the oldest the translation knows.
  int64_t sourceOpset = 0;
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      sourceOpset = o.version();
  if (sourceOpset >= 7 && sourceOpset < 11) {
    try {
      model = onnx::version_conversion::ConvertVersion(model, 11);
    } catch (const std::exception &e) {
      return error("ONNX's version converter cannot convert the model from opset " +
                   std::to_string(sourceOpset) + " to 11: " + e.what());
    }
  }
  try {
    onnx::ShapeInferenceOptions options{/*check_type=*/true, /*error_mode=*/1,
                                        /*enable_data_propagation=*/true};
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &e) {
    return error(std::string("ONNX shape inference failed: ") + e.what());
  }
  fs::path weights = fs::path(out).replace_extension(".weights");
  Importer importer(model, opts, weights.filename().string());
  if (sourceOpset < 11)
    importer.convertedFrom = sourceOpset;
  try {
    importer.run();
  } catch (const ImportError &e) {
    return error(e.what());
  }
  // Everything translated: write the weights, then the module.
  if (!importer.npy.empty()) {
    fs::create_directories(weights, ec);
    if (ec)
      return error("cannot create '" + weights.string() + "': " + ec.message());
  }
  for (const auto &[name, tensor] : importer.npy) {
    std::string why;
    if (!runtime::writeNpy((weights / name).string(), tensor, why))
      return error("cannot write '" + (weights / name).string() + "': " + why);
  }
  std::ofstream f(out);
  f << importer.text;
  if (!f)
    return error("cannot write '" + out.string() + "'");
  return 0;
}

} // namespace tdsl::import
