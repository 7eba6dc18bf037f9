"""`expect_status.py STATUS CMD ARGS...`: runs the command, prints its stdout and stderr, and
fails unless it exits with STATUS (lit's `not` only checks that a command failed)."""
import subprocess
import sys

result = subprocess.run(sys.argv[2:], capture_output=True, text=True)
sys.stdout.write(result.stdout + result.stderr)
if result.returncode != int(sys.argv[1]):
    print("expected exit status %s, got %d" % (sys.argv[1], result.returncode))
    sys.exit(1)
