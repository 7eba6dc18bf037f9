"""Checks the weights tdsl-import wrote: every `const` of OUT.tdsl loads a .npy file of
OUT.weights that holds exactly one initializer of the model (same dtype family, shape and
values). Prints `NAME.npy: f32[2, 3] = initializer 'ONNX NAME'` per const, in order.
usage: check_weights.py MODEL.onnx OUT.tdsl"""
import os
import re
import sys

import numpy as np
import onnx
from onnx import numpy_helper

model = onnx.load(sys.argv[1])
src = open(sys.argv[2]).read()
inits = [(t.name, numpy_helper.to_array(t)) for t in model.graph.initializer]
status = 0
for name, dtype, path in re.findall(r'^const (\w+): (\w+)\[[^\]]*\] = load\("([^"]+)"\);', src,
                                    re.M):
    data = np.load(os.path.join(os.path.dirname(sys.argv[2]), path))
    if os.path.basename(path) != name + ".npy":
        print("BAD %s: file %s" % (name, path))
        status = 1
    found = [n for n, a in inits if a.shape == data.shape and np.array_equal(a, data) and
             re.sub(r"[^A-Za-z0-9_]", "_", n) in name]
    want = {"f32": np.float32, "i64": np.int64}[dtype]
    if data.dtype != want or len(found) != 1:
        print("BAD %s: %s%s matches %s" % (name, data.dtype, list(data.shape), found))
        status = 1
        continue
    print("%s.npy: %s%s = initializer '%s'" % (name, dtype, list(data.shape), found[0]))
sys.exit(status)
