import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

x = uniform((4, 6), 1)
out = run("flatten", {"x": x}, ["z", "f"])
compare("z", out["z"], np.maximum(x.reshape(3, 8), 0))
compare("f", out["f"], np.maximum(x.reshape(24), 0))
x = uniform((5, 6), 2)
out = run("regroup", {"x": x}, ["t"])
compare("t", out["t"], np.tanh(x.reshape(10, 3)), 1e-6, 1e-7)
