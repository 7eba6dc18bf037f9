//===- frontend/SemaConst.cpp - Graph constants: checked against their files (spec §8) -------===//
//
// `const w: f32[4, 8] = load("w.npy");` reads the file the module loader found, checks that its
// dtype and shape are the declared ones and makes an ir::Constant; `= hex("…")` (what --emit=ir
// prints for a folded constant) decodes the bytes. Every error is at the string.

#include "frontend/SemaInternal.h"

#include "ir/Arith.h"
#include "runtime/Npy.h"
#include "support/Diagnostics.h"

namespace tdsl::sema {

using namespace ir;

namespace {

std::string shapeText(DType t, const std::vector<int64_t> &shape) {
  return runtime::typeString(t, shape);
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

} // namespace

ConstTable buildConstants(const ast::Module &m, const std::string &prefix, Module &out,
                          DiagnosticEngine &diags) {
  ConstTable table;
  for (const ast::ItemPtr &item : m.items) {
    const auto *c = item->as<ast::ConstDecl>();
    if (!c)
      continue;
    const std::string &name = c->name.name;
    if (!c->type.isTensor) {
      diags.error(c->type.range, "constant '" + name + "' must be a tensor; write " +
                                     c->type.dtype.name + "[] for a single value");
      continue;
    }
    Scopes scopes;
    SignatureChecker sig{scopes, diags};
    std::optional<DType> dtype = sig.dtype(c->type.dtype);
    std::vector<Var> noVars;
    std::optional<std::vector<Expr>> dims = sig.shape(c->type, false, noVars, name);
    if (!dtype || !dims)
      continue;
    std::vector<int64_t> shape;
    for (const Expr &d : *dims) {
      std::optional<int64_t> v = asConstInt(d);
      if (!v) {
        diags.error(c->type.range, "the shape of constant '" + name + "' must be constant");
        break;
      }
      shape.push_back(*v);
    }
    if (shape.size() != dims->size())
      continue;
    int64_t elements = runtime::numElements(shape);
    size_t bytes = static_cast<size_t>(elements) * static_cast<size_t>(dtype->storageBytes());

    auto data = std::make_shared<std::vector<uint8_t>>();
    if (c->source == ast::ConstDecl::Source::Load) {
      if (c->resolvedPath.empty())
        continue; // not found: reported by the module loader
      std::string error;
      std::optional<runtime::Tensor> t = runtime::readNpy(c->resolvedPath, error);
      if (!t) {
        diags.error(c->textRange, "cannot read constant file '" + c->text + "': " + error);
        continue;
      }
      // bf16 has no NumPy dtype: its files hold <u2 bit patterns (spec §9).
      DType fileType = t->dtype;
      if (*dtype == DType::bf16() && fileType == DType::u16())
        fileType = *dtype;
      if (fileType != *dtype || t->shape != shape) {
        diags
            .error(c->textRange, "constant '" + name + "' is declared " + shapeText(*dtype, shape) +
                                     " but '" + c->text + "' holds " +
                                     shapeText(t->dtype, t->shape))
            .note(c->type.range, "type declared here");
        continue;
      }
      *data = std::move(t->bytes);
    } else {
      const std::string &hex = c->text;
      bool ok = hex.size() % 2 == 0;
      for (char ch : hex)
        ok &= hexDigit(ch) >= 0;
      if (!ok) {
        diags.error(c->textRange, "hex(…) of constant '" + name +
                                      "' must be an even number of hexadecimal digits");
        continue;
      }
      if (hex.size() / 2 != bytes) {
        diags.error(c->textRange, "hex(…) of constant '" + name + "' has " +
                                      std::to_string(hex.size() / 2) + " bytes, but " +
                                      shapeText(*dtype, shape) + " takes " + std::to_string(bytes));
        continue;
      }
      data->reserve(bytes);
      for (size_t i = 0; i < hex.size(); i += 2)
        data->push_back(static_cast<uint8_t>(hexDigit(hex[i]) * 16 + hexDigit(hex[i + 1])));
    }
    if (dtype->isBool())
      for (uint8_t &b : *data)
        b = b != 0;

    Constant k;
    k.name = prefix + name;
    std::vector<Expr> dimsIR;
    for (int64_t d : shape)
      dimsIR.push_back(intImm(d));
    k.buffer =
        Buffer(name, *dtype, dimsIR, BufferRole::Constant, MemScope::Global, {}, locOf(c->name));
    k.data = std::move(data);
    k.path = c->source == ast::ConstDecl::Source::Load ? c->resolvedPath : "";
    k.loc = locOf(*c);
    table[name] = ModuleConstant{k.buffer, c->name.range};
    out.constants.push_back(std::move(k));
  }
  return table;
}

} // namespace tdsl::sema
