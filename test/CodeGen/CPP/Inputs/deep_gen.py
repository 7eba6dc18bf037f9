"""Writes the functions of deep_expressions.test: expressions far longer or deeper than a C++
compiler nests (Clang stops at 256 levels of brackets), within the parser's own limit."""
import sys

N_SUM, N_DEEP, N_INLINE = 300, 250, 150


def chain(leaf, ops, n):
    """leaf(n-1) op (leaf(n-2) op (... leaf(0))): nested to the right, n levels."""
    e = leaf(0)
    for k in range(1, n):
        e = "%s %s (%s)" % (leaf(k), ops[k % len(ops)], e)
    return e


funcs = {
    # A left-associated 300-term sum (the case): printed flat.
    "sum300": ("x: f32[7, %d]" % N_SUM, "f32[7]",
               " + ".join("x[i, %d]" % k for k in range(N_SUM))),
    # 300 wrapping products summed: the integer helpers nest one call per term.
    "isum300": ("x: i32[7, %d], a: i32" % N_SUM, "i32[7]",
                " + ".join("x[i, %d] * a" % k for k in range(N_SUM))),
    # 250 levels of alternating products and sums, nested to the right.
    "mixed250": ("x: f32[7, %d]" % N_DEEP, "f32[7]",
                 chain(lambda k: "x[i, %d]" % k, ["*", "+"], N_DEEP)),
}
mx = "x[i, 0]"
for k in range(1, N_DEEP):
    mx = "max(%s, x[i, %d])" % (mx, k)
funcs["max250"] = ("x: f32[7, %d]" % N_DEEP, "f32[7]", mx)

with open(sys.argv[1], "w") as out:
    for name, (params, result, value) in funcs.items():
        out.write("func %s(%s) -> (y: %s) {\n  block y(i: spatial 7) {\n    y[i] = %s;\n  }\n}\n\n"
                  % (name, params, result, value))
    # 150 blocks inlined into the last one: no source parenthesis, but the lowered expression
    # nests two levels per block ((t * x) + 0.5 inside the next product).
    out.write("func inline150(x: f32[7]) -> (y: f32[7]) {\n")
    for k in range(1, N_INLINE):
        out.write("  alloc t%d: f32[7];\n" % k)
    for k in range(1, N_INLINE + 1):
        name, prev = ("t%d" % k if k < N_INLINE else "y"), ("t%d" % (k - 1) if k > 1 else "x")
        out.write("  block %s(i: spatial 7) {\n    %s[i] = %s[i] * x[i] + 0.5;\n  }\n"
                  % (name, name, prev))
    out.write("}\n\nschedule inline150 {\n")
    for k in range(1, N_INLINE):
        out.write("  compute_inline(t%d);\n" % k)
    out.write("}\n")
