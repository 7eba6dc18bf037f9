import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

a = integers((3, 4, 5), -1000, 1000)
compare("B", run("transpose", {"A": a}, ["B"])["B"], a.transpose(2, 0, 1))
a = rng(5).integers(0, 1, size=(6, 7), endpoint=True).astype(bool)
compare("T", run("transpose_not", {"A": a}, ["T"])["T"], ~a.T)
