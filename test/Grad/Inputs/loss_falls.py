"""Checks the last line of examples/train's output: `loss_falls.py LOG MAX_LAST MIN_ACCURACY`
exits 0 when the first batch's loss is near ln 10 (2.0 to 2.6: the initial weights predict
about uniformly), the last batch's is below MAX_LAST and the last test accuracy is above
MIN_ACCURACY percent; otherwise it prints the figures and exits 1."""
import re
import sys

text = open(sys.argv[1]).read()
first, last = map(float, re.search(r"first batch ([0-9.]+), last batch ([0-9.]+)", text).groups())
accuracy = float(re.findall(r"test accuracy ([0-9.]+)%", text)[-1])
if not (2.0 < first < 2.6 and last < float(sys.argv[2]) and accuracy > float(sys.argv[3])):
    sys.exit("loss %g -> %g, test accuracy %g%%" % (first, last, accuracy))
