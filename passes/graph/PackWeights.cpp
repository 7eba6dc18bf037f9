//===- passes/graph/PackWeights.cpp - graph.pack-weights: convolution weights packed once -----===//
//
// A call `y = call nn.conv2d<S, P>(x, w)` of the module's own graphs whose weight `w` is a graph
// constant, or a value graph.fold-calls will fold into one (the result of a func called on
// constants or such values only, with literal scalar and generic arguments), becomes
//
//   w_packed = call nn.conv2d_pack_weight<KV>(w);
//   y = call nn.conv2d_packed<S, P, K, KV, WT>(x, w_packed);
//
// (K: the weight's static output channel count; KV: the register tile's channel count for the
// target, 8 with AVX2 and 32 with AVX-512; WT: its output columns, convolutionTileWidth of the
// static output width), so that graph.fold-calls, which runs next,
// evaluates the packing at compile time and the convolution reads a packed constant. The
// packed kernel's register tile wants the weight blocked by KV output channels; packing it on
// every call (nn.conv2d's schedule) costs a pass over the weight per call. Calls whose weight
// is not constant, or whose shapes are not static, stay as they are.
//
// A depthwise call `y = call nn.conv2d_ext<S, S, P, P, P, P, 1, 1, C>(x, w)` (equal strides,
// the same padding on all four sides, no dilation, C groups, x with C channels and w of static
// shape [C, 1, R, R]) becomes, whatever w is, `y = call nn.conv2d_depthwise<P, R>(x, w)` when
// S = 1, else `nn.conv2d_depthwise_strided<S, P, R>(x, w)` (both vectors along the output
// rows): the window size is then a constant, so that its loops unroll. (nn.conv2d_depthwise_cb,
// vectors over blocks of 8 channels, was slower on every MobileNetV2 layer once graph.bind-shapes
// gave the row functions constant extents: docs/decisions.md.)
//
// A call `y = call nn.linear(x, w, b)` whose x has a static row count of at most 2 becomes
// `y = call nn.linear_gemv(x, w, b)`, whatever w is: nn.linear's schedule packs the weight on
// every call, which costs more than the product at one or two rows; linear_gemv reads it in place.
// Any other call of nn.linear whose w has a static row count N that 32 does not divide becomes
// `y = call nn.linear_pad(x, w, b)`, which computes over N rounded up to a multiple of 32 (the
// register tile's last column block is full; only the copy to y is guarded).
//
// A 1 x 1 convolution `y = call nn.conv2d<1, 0>(x, w)` of one image (x of static shape
// [1, C, H, W]) by a constant weight of shape [K, C, 1, 1] is the product W·X of its [K, C] and
// [C, H·W] views:
//
//   x_2d = reshape(x, [C, H * W]);  w_2d = reshape(w, [K, C]);
//   y_2d = call nn.matmul(w_2d, x_2d);  y = reshape(y_2d, [1, K, H, W]);
//
// nn.matmul's register tile runs along the image's columns (2·simd_lanes of them) over K rows
// of channels, its panel of X copied contiguous per column block; conv2d_packed's runs over 7
// or 14 columns x 32 channels behind a padded, transposed copy of the whole input, which a
// 1 x 1 window does not need. Only where the columns fill the product's tiles to seven
// eighths or more (H·W = 49 pads to 64: those stay packed convolutions, whose tile runs over
// channels and which ran faster there in MobileNetV2's profile). The bias and activation after
// it then reach the product through graph.fold-views and fuse into it. Where C, the sum's
// length, is below the tile's columns (MobileNetV2's expansions of 16 and 24 channels), the
// product is nn.matmul_rows (the same sums, the tile's rows outermost): the compute per output
// is then short enough that writing y is the cost, and matmul's column-block order writes a
// strip of every one of K rows per block (docs/decisions.md).
//
// A call `y = call nn.swap_axes(x)` on x of static shape [1, M, N, 1] (the importer's
// Transpose of a matrix, such as attention's keys) is the transpose of the [M, N] view:
// `y_2d = call nn.transpose2d(reshape(x, [M, N]))`, y its [1, N, M, 1] view: transpose2d
// works in 8 x 8 tiles, swap_axes' schedule one element at a time with no inner vector.
//
// A call of nn.avg_pool2d<K, S, P> or nn.avg_pool2d_ext<KH, KW, …> whose window is the whole
// static H x W plane of its input, without padding (a global average pool written as a pool,
// as older ResNets and ONNX AveragePool 7 x 7 do), becomes `y = call nn.global_avg_pool2d(x)`:
// 16 partial sums of each plane in a vector register instead of one scalar window sum.

#include "passes/graph/Graph.h"

#include "passes/graph/GraphUtils.h"

#include <map>
#include <set>

namespace tdsl::graph {

using namespace ir;

namespace {

std::optional<int64_t> literal(const Expr &e) {
  if (const auto *i = e.as<IntImm>())
    return i->value;
  return std::nullopt;
}

/// The call of nn.conv2d_depthwise<P, R> or nn.conv2d_depthwise_strided<S, P, R> that computes
/// `call` (nn.conv2d_ext), if it is a depthwise convolution with a square R x R window, equal
/// strides, the same padding on every side and no dilation, and the module has that function.
std::optional<CallBinding> depthwiseCall(const Module &module, const CallBinding &call) {
  if (call.args.size() != 2 || call.constArgs.size() != 9 || call.targets.size() != 1)
    return std::nullopt;
  std::vector<int64_t> c; // SH, SW, PT, PL, PB, PR, DH, DW, G
  for (const Expr &e : call.constArgs)
    if (std::optional<int64_t> v = literal(e))
      c.push_back(*v);
  if (c.size() != 9 || c[0] != c[1] || c[2] != c[3] || c[2] != c[4] || c[2] != c[5] || c[6] != 1 ||
      c[7] != 1)
    return std::nullopt;
  const auto *x = std::get_if<Buffer>(&call.args[0]);
  const auto *w = std::get_if<Buffer>(&call.args[1]);
  if (!x || !w || x->shape().size() != 4 || w->shape().size() != 4)
    return std::nullopt;
  std::optional<int64_t> channels = literal(x->shape()[1]), k = literal(w->shape()[0]),
                         cg = literal(w->shape()[1]), r = literal(w->shape()[2]),
                         q = literal(w->shape()[3]);
  if (!channels || !k || !cg || !r || !q || *channels != c[8] || *k != c[8] || *cg != 1 || *r != *q)
    return std::nullopt;
  bool unit = c[0] == 1;
  CallBinding dw = call;
  dw.callee = unit ? "nn.conv2d_depthwise" : "nn.conv2d_depthwise_strided";
  if (!module.lookup(dw.callee).as<PrimFunc>())
    return std::nullopt;
  dw.constArgs = unit ? std::vector<Expr>{intImm(c[2]), intImm(*r)}
                      : std::vector<Expr>{intImm(c[0]), intImm(c[2]), intImm(*r)};
  return dw;
}

/// Rows up to this go to nn.linear_gemv (docs/benchmarks.md: the 4-row tile of nn.linear is
/// mostly guarded off there, and its packing reads and writes the weight once more per call).
constexpr int64_t kGemvMaxRows = 2;

/// The static row count of argument `arg` (a 2-D tensor) of a call of nn.linear with one
/// result and no generic arguments; nullopt otherwise.
std::optional<int64_t> linearRows(const CallBinding &call, size_t arg) {
  if (call.args.size() != 3 || call.targets.size() != 1 || !call.constArgs.empty())
    return std::nullopt;
  const auto *t = std::get_if<Buffer>(&call.args[arg]);
  if (!t || t->shape().size() != 2)
    return std::nullopt;
  return literal(t->shape()[0]);
}

/// `call` (nn.linear) as a call of `callee`, when the module has that function.
std::optional<CallBinding> routedTo(const Module &module, const CallBinding &call,
                                    const char *callee) {
  if (!module.lookup(callee).as<PrimFunc>())
    return std::nullopt;
  CallBinding routed = call;
  routed.callee = callee;
  return routed;
}

/// The call that computes `call` (nn.linear) faster, if any: nn.linear_gemv when its input has
/// a static row count of at most kGemvMaxRows; else nn.linear_pad when its weight has a static
/// row count N that 32 does not divide (linear's register tiles are 32, 16 or 8 columns wide:
/// its last column block would be partial).
std::optional<CallBinding> routedLinearCall(const Module &module, const CallBinding &call) {
  if (std::optional<int64_t> rows = linearRows(call, 0); rows && *rows <= kGemvMaxRows)
    return routedTo(module, call, "nn.linear_gemv");
  if (std::optional<int64_t> n = linearRows(call, 1); n && *n % 32 != 0)
    return routedTo(module, call, "nn.linear_pad");
  return std::nullopt;
}

/// The call of nn.global_avg_pool2d that computes `call` (nn.avg_pool2d<K, S, P> or
/// nn.avg_pool2d_ext<KH, KW, SH, SW, PT, PL, PB, PR, CIP>) when its window is the whole static
/// H x W plane of x and there is no padding (one output per channel, whatever the strides and
/// CIP), and the module has that function.
std::optional<CallBinding> globalPoolCall(const Module &module, const CallBinding &call) {
  if (call.args.size() != 1 || call.targets.size() != 1)
    return std::nullopt;
  std::vector<int64_t> c;
  for (const Expr &e : call.constArgs) {
    std::optional<int64_t> v = literal(e);
    if (!v)
      return std::nullopt;
    c.push_back(*v);
  }
  const auto *x = std::get_if<Buffer>(&call.args[0]);
  if (!x || x->shape().size() != 4)
    return std::nullopt;
  std::optional<int64_t> h = literal(x->shape()[2]), w = literal(x->shape()[3]);
  int64_t kh = 0, kw = 0;
  bool plain = false; // strides of at least 1, no padding
  if (call.callee == "nn.avg_pool2d" && c.size() == 3) {
    kh = kw = c[0];
    plain = c[1] >= 1 && c[2] == 0;
  } else if (call.callee == "nn.avg_pool2d_ext" && c.size() == 9) {
    kh = c[0], kw = c[1];
    plain = c[2] >= 1 && c[3] >= 1 && c[4] == 0 && c[5] == 0 && c[6] == 0 && c[7] == 0;
  }
  if (!plain || !h || !w || kh != *h || kw != *w || kh < 1 || kw < 1)
    return std::nullopt;
  std::optional<CallBinding> routed = routedTo(module, call, "nn.global_avg_pool2d");
  if (routed)
    routed->constArgs.clear();
  return routed;
}

/// The bindings that compute `call` (nn.conv2d) as a product (see the file comment), if it is
/// a 1 x 1 convolution of one image at stride 1 without padding by a constant (`constant`: the
/// values that fold into one) weight, whose H·W columns fill tiles of `columns` to 7/8 or more.
std::optional<std::vector<GraphBinding>>
pointwiseAsProduct(const CallBinding &call, const std::set<const BufferNode *> &constant,
                   int64_t columns, bool hasRows,
                   const std::function<std::string(const std::string &)> &fresh);

/// The static dimensions of `b`, or an empty vector when one is not a literal.
std::vector<int64_t> staticShape(const Buffer &b) {
  std::vector<int64_t> dims;
  for (const Expr &d : b.shape()) {
    std::optional<int64_t> v = literal(d);
    if (!v)
      return {};
    dims.push_back(*v);
  }
  return dims;
}

std::optional<std::vector<GraphBinding>>
pointwiseAsProduct(const CallBinding &call, const std::set<const BufferNode *> &constant,
                   int64_t columns, bool hasRows,
                   const std::function<std::string(const std::string &)> &fresh) {
  if (call.args.size() != 2 || call.targets.size() != 1 || call.constArgs.size() != 2 ||
      literal(call.constArgs[0]) != 1 || literal(call.constArgs[1]) != 0)
    return std::nullopt;
  const auto *x = std::get_if<Buffer>(&call.args[0]);
  const auto *w = std::get_if<Buffer>(&call.args[1]);
  if (!x || !w || x->dtype() != DType::f32() || w->dtype() != DType::f32() ||
      !(w->role() == BufferRole::Constant || constant.count(w->get())))
    return std::nullopt;
  std::vector<int64_t> xs = staticShape(*x), ws = staticShape(*w);
  if (xs.size() != 4 || ws.size() != 4 || xs[0] != 1 || ws[1] != xs[1] || ws[2] != 1 || ws[3] != 1)
    return std::nullopt;
  int64_t k = ws[0], c = xs[1], hw = xs[2] * xs[3];
  int64_t padded = (hw + columns - 1) / columns * columns;
  if (columns < 1 || 8 * hw < 7 * padded)
    return std::nullopt;
  const Buffer &y = call.targets[0];
  SourceLoc loc = call.loc;
  auto value = [&](const std::string &hint, std::vector<int64_t> dims) {
    std::vector<Expr> shape;
    for (int64_t d : dims)
      shape.push_back(intImm(d));
    return Buffer(fresh(hint), DType::f32(), shape, BufferRole::Alloc, MemScope::Global, {}, loc);
  };
  Buffer x2 = value(x->name() + "_2d", {c, hw}), w2 = value(w->name() + "_2d", {k, c});
  Buffer y2 = value(y.name() + "_2d", {k, hw});
  CallBinding matmul;
  matmul.targets = {y2};
  matmul.callee = c < columns && hasRows ? "nn.matmul_rows" : "nn.matmul";
  matmul.args = {w2, x2};
  matmul.loc = loc;
  return std::vector<GraphBinding>{ReshapeBinding{x2, *x, loc}, ReshapeBinding{w2, *w, loc}, matmul,
                                   ReshapeBinding{y, y2, loc}};
}

/// The bindings that compute `call` (nn.swap_axes) as nn.transpose2d of a matrix view (see the
/// file comment), if x has the static shape [1, M, N, 1].
std::optional<std::vector<GraphBinding>>
matrixTranspose(const CallBinding &call,
                const std::function<std::string(const std::string &)> &fresh) {
  if (call.args.size() != 1 || call.targets.size() != 1 || !call.constArgs.empty())
    return std::nullopt;
  const auto *x = std::get_if<Buffer>(&call.args[0]);
  if (!x || x->dtype() != DType::f32())
    return std::nullopt;
  std::vector<int64_t> xs = staticShape(*x);
  if (xs.size() != 4 || xs[0] != 1 || xs[3] != 1)
    return std::nullopt;
  const Buffer &y = call.targets[0];
  SourceLoc loc = call.loc;
  Buffer x2(fresh(x->name() + "_2d"), DType::f32(), {intImm(xs[1]), intImm(xs[2])},
            BufferRole::Alloc, MemScope::Global, {}, loc);
  Buffer y2(fresh(y.name() + "_2d"), DType::f32(), {intImm(xs[2]), intImm(xs[1])},
            BufferRole::Alloc, MemScope::Global, {}, loc);
  CallBinding transpose;
  transpose.targets = {y2};
  transpose.callee = "nn.transpose2d";
  transpose.args = {x2};
  transpose.loc = loc;
  return std::vector<GraphBinding>{ReshapeBinding{x2, *x, loc}, transpose,
                                   ReshapeBinding{y, y2, loc}};
}

} // namespace

int64_t convolutionChannelBlock(int64_t simdLanes) { return simdLanes >= 16 ? 32 : 8; }

int64_t convolutionTileWidth(int64_t channelBlock, int64_t filterHeight, int64_t filterWidth,
                             int64_t stride, int64_t pad, std::optional<int64_t> width) {
  if (channelBlock < 32 || filterHeight * filterWidth <= 1 || !width || stride <= 0)
    return 7;
  int64_t out = (*width + 2 * pad - filterWidth) / stride + 1;
  return out > 0 && out % 14 == 0 ? 14 : 7;
}

void packConvolutionWeights(Module &module, int64_t channelBlock, int64_t matmulColumns) {
  const char *conv = "nn.conv2d", *pack = "nn.conv2d_pack_weight", *packed = "nn.conv2d_packed";
  bool packs = module.lookup(conv).as<PrimFunc>() && module.lookup(pack).as<PrimFunc>() &&
               module.lookup(packed).as<PrimFunc>();
  bool depthwise = module.lookup("nn.conv2d_ext").as<PrimFunc>() != nullptr;
  bool linear = module.lookup("nn.linear").as<PrimFunc>() != nullptr;
  bool globalPool = module.lookup("nn.global_avg_pool2d").as<PrimFunc>() != nullptr;
  bool product = module.lookup(conv).as<PrimFunc>() && module.lookup("nn.matmul").as<PrimFunc>();
  bool hasRows = module.lookup("nn.matmul_rows").as<PrimFunc>();
  bool transposes = module.lookup("nn.swap_axes").as<PrimFunc>() &&
                    module.lookup("nn.transpose2d").as<PrimFunc>();
  if (!packs && !depthwise && !linear && !globalPool && !product && !transposes)
    return;
  for (const Func &f : std::vector<Func>(module.functions())) {
    const auto *g = f.as<GraphFunc>();
    if (!g || !isOwnName(g->name))
      continue;
    // The values graph.fold-calls turns into constants (what funcs compute from graph constants
    // alone, in execution order), and the names taken in the graph.
    std::set<const BufferNode *> constant;
    std::set<std::string> names;
    for (const Constant &c : module.constants)
      names.insert(c.name);
    for (const FuncParam &in : g->inputs)
      names.insert(in.name());
    for (const detail::PlacedBinding &p : detail::bindingsInOrder(*g)) {
      bool folds = true, anyTensor = false;
      if (const auto *call = std::get_if<CallBinding>(&p.binding)) {
        folds = module.lookup(call->callee).as<PrimFunc>() != nullptr;
        for (const GraphArg &a : call->args)
          if (const auto *b = std::get_if<Buffer>(&a)) {
            anyTensor = true;
            folds = folds && (b->role() == BufferRole::Constant || constant.count(b->get()));
          } else {
            const Expr &e = std::get<Expr>(a);
            folds = folds && (e.as<IntImm>() || e.as<FloatImm>());
          }
        for (const Expr &c : call->constArgs)
          folds = folds && literal(c);
      } else {
        folds = false; // graph.fold-calls folds calls only
      }
      for (const Buffer &t : detail::definesOf(p.binding)) {
        names.insert(t.name());
        if (folds && anyTensor)
          constant.insert(t.get());
      }
    }
    auto fresh = [&](const std::string &hint) {
      std::string name = hint;
      for (int k = 2; names.count(name) || module.lookup(name).defined(); ++k)
        name = hint + "_" + std::to_string(k);
      names.insert(name);
      return name;
    };
    bool changed = false;
    std::map<const BufferNode *, Buffer> packedOf;
    bool oneRegion = g->body.size() == 1 && std::holds_alternative<DataflowBlock>(g->body[0]);
    Func rewritten = detail::rewriteBindings(*g, [&](const GraphBinding &binding) {
      std::vector<GraphBinding> keep{binding};
      const auto *call = std::get_if<CallBinding>(&binding);
      if (depthwise && call && call->callee == "nn.conv2d_ext")
        if (std::optional<CallBinding> dw = depthwiseCall(module, *call)) {
          changed = true;
          return std::vector<GraphBinding>{*dw};
        }
      if (globalPool && call &&
          (call->callee == "nn.avg_pool2d" || call->callee == "nn.avg_pool2d_ext"))
        if (std::optional<CallBinding> routed = globalPoolCall(module, *call)) {
          changed = true;
          return std::vector<GraphBinding>{*routed};
        }
      if (linear && call && call->callee == "nn.linear")
        if (std::optional<CallBinding> routed = routedLinearCall(module, *call)) {
          changed = true;
          return std::vector<GraphBinding>{*routed};
        }
      if (transposes && call && call->callee == "nn.swap_axes")
        if (std::optional<std::vector<GraphBinding>> t = matrixTranspose(*call, fresh)) {
          changed = true;
          return *t;
        }
      if (product && call && call->callee == conv)
        if (std::optional<std::vector<GraphBinding>> asProduct =
                pointwiseAsProduct(*call, constant, matmulColumns, hasRows, fresh)) {
          changed = true;
          return *asProduct;
        }
      if (!packs || !call || call->callee != conv || call->args.size() != 2 ||
          call->constArgs.size() != 2 || call->targets.size() != 1 ||
          !literal(call->constArgs[0]) || !literal(call->constArgs[1]))
        return keep;
      const auto *x = std::get_if<Buffer>(&call->args[0]);
      const auto *w = std::get_if<Buffer>(&call->args[1]);
      if (!x || !w || w->dtype() != DType::f32() || w->shape().size() != 4 ||
          !(w->role() == BufferRole::Constant || constant.count(w->get())))
        return keep;
      std::vector<int64_t> ws;
      for (const Expr &d : w->shape())
        if (std::optional<int64_t> v = literal(d))
          ws.push_back(*v);
      if (ws.size() != 4)
        return keep;
      int64_t k = ws[0], c = ws[1], r = ws[2], q = ws[3];
      // A weight that an earlier call packed is not packed again (one constant per weight), in
      // a graph of one dataflow block (the packed value stays in scope if it is not folded).
      auto earlier = oneRegion ? packedOf.find(w->get()) : packedOf.end();
      std::vector<GraphBinding> out;
      Buffer wp;
      if (earlier != packedOf.end()) {
        wp = earlier->second;
      } else {
        std::vector<Expr> packedShape = {intImm((k + channelBlock - 1) / channelBlock), intImm(r),
                                         intImm(q), intImm(c), intImm(channelBlock)};
        wp = Buffer(fresh(w->name() + "_packed"), DType::f32(), packedShape, BufferRole::Alloc,
                    MemScope::Global, {}, call->loc);
        CallBinding packCall;
        packCall.targets = {wp};
        packCall.callee = pack;
        packCall.constArgs = {intImm(channelBlock)};
        packCall.args = {*w};
        packCall.loc = call->loc;
        packedOf.emplace(w->get(), wp);
        out.push_back(packCall);
      }
      CallBinding convCall = *call;
      convCall.callee = packed;
      int64_t stride = *literal(call->constArgs[0]), pad = *literal(call->constArgs[1]);
      std::optional<int64_t> width =
          x->shape().size() == 4 ? literal(x->shape()[3]) : std::optional<int64_t>();
      convCall.constArgs = {call->constArgs[0], call->constArgs[1], intImm(k), intImm(channelBlock),
                            intImm(convolutionTileWidth(channelBlock, r, q, stride, pad, width))};
      convCall.args = {*x, wp};
      changed = true;
      out.push_back(convCall);
      return out;
    });
    if (changed)
      module.replace(rewritten);
  }
}

} // namespace tdsl::graph
