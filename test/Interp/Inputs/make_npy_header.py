"""`make_npy_header.py OUT SHAPE [BYTES]`: writes a .npy file (f32, C order) whose header claims
SHAPE (e.g. "(4294967296, 4294967296, 4)") but which holds BYTES (default 16) bytes of data."""
import sys

header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % sys.argv[2]
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
    f.write(b"\x00" * (int(sys.argv[3]) if len(sys.argv) > 3 else 16))
