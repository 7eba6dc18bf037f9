"""Runs the code blocks of the tutorial (docs/tutorial) and checks what they print.

    run_tutorial.py --tools BUILD/bin --work DIR [--update] CHAPTERS_DIR

(--tools also takes the path of tdslc.)

The chapters are README.md, then every `NN-*.md` in name order. Their fenced code blocks run in
order, in one working folder (DIR, emptied first), so that a chapter can use the files of the
chapters before it, as a reader following along in one folder would. The fence's info string
says what a block is:

  ```LANG file=NAME      writes the block's text to NAME (relative to DIR; folders are made)
  ```sh                  runs the block with `bash -e` in DIR; stdout and stderr are captured
                         together. Options: `status=N` (the exit status expected, default 0),
                         `requires=TOOL` (skipped, with its output block, unless TOOL is on the
                         PATH: e.g. nvcc)
  ```text                right after a sh block (blank lines between are allowed): what the
                         block prints. A sh block without one must print nothing.
                         Option: `varies` (see below)

A line that a command rewrites in place with carriage returns (tdsl-tune's progress) is taken
as a terminal leaves it: the text after its last `\r`.

Any other block is an error, so that nothing in the tutorial escapes the test. Outputs are
compared line by line, exactly, except that trailing spaces and trailing blank lines are
ignored, and numbers (`12`, `0.38`, `4.19e+06`) are replaced by `#` on both sides in the lines
that vary from run to run: every line that starts with `bench:` (tdsl-run's timing line:
milliseconds, GFLOP/s) and every line of a `text varies` block.

The tools come first on the PATH, then the folder of the Python running this script (so that
`python3` is the one with NumPy), then the inherited PATH, then /usr/local/cuda/bin. With
--update, the text blocks are rewritten with what the commands print (and a text block is
added after a sh block that prints something and has none): how the shown outputs are made.
Exit status 0 when every block ran as shown, 1 otherwise.
"""
import argparse
import difflib
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

FENCE = re.compile(r"^```(.*)$")
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
TIMEOUT_S = 600


class Block:
    def __init__(self, path, line, info, text, end):
        self.path, self.line, self.text, self.end = path, line, text, end
        words = shlex.split(info)
        self.lang = words[0] if words else ""
        self.opts = {}
        self.flags = set()
        for w in words[1:]:
            if "=" in w:
                k, v = w.split("=", 1)
                self.opts[k] = v
            else:
                self.flags.add(w)

    def where(self):
        return "%s:%d" % (os.path.basename(self.path), self.line)


def parse(path):
    """The fenced blocks of a markdown file, each with its 1-based opening line and the line
    after its closing fence; an unterminated fence is an error."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, body = i, []
        i += 1
        while i < len(lines) and lines[i] != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            sys.exit("%s:%d: unterminated code block" % (path, start + 1))
        blocks.append(Block(path, start + 1, m.group(1).strip(), "\n".join(body) + "\n", i + 1))
        i += 1
    return blocks, lines


def only_blank_between(lines, a_end, b_line):
    """True when the lines between a block's closing fence and the next opening one are blank."""
    return all(not lines[k].strip() for k in range(a_end, b_line - 1))


def normalise(text, varies):
    out = []
    for line in text.rstrip("\n").split("\n"):
        line = line.rstrip()
        if varies or line.startswith("bench:"):
            line = NUMBER.sub("#", line)
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return out


def as_on_terminal(text):
    """Each line as a terminal shows it once printed: the text after its last carriage return
    (a progress line rewritten in place); a carriage return that ends a line is dropped."""
    return "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in text.split("\n"))


def tool_on_path(name, env):
    return shutil.which(name, path=env["PATH"]) is not None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tools", required=True,
                    help="the folder of tdslc and tdsl-run, or the path of tdslc")
    ap.add_argument("--work", required=True, help="working folder (emptied first)")
    ap.add_argument("--update", action="store_true", help="rewrite the shown outputs")
    ap.add_argument("chapters", help="the tutorial's folder")
    args = ap.parse_args()

    files = [os.path.join(args.chapters, "README.md")]
    files = [f for f in files if os.path.exists(f)]
    files += sorted(glob.glob(os.path.join(args.chapters, "[0-9][0-9]-*.md")))
    if not files:
        sys.exit("run_tutorial: no chapters in %s" % args.chapters)

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    env = dict(os.environ)
    tools = args.tools if os.path.isdir(args.tools) else os.path.dirname(args.tools)
    path = [os.path.abspath(tools), os.path.dirname(os.path.realpath(sys.executable))]
    path += env.get("PATH", "/usr/bin:/bin").split(os.pathsep) + ["/usr/local/cuda/bin"]
    env["PATH"] = os.pathsep.join(path)
    env["LC_ALL"] = "C"

    counts = {"run": 0, "skipped": 0, "failed": 0, "files": 0}

    def fail(block, msg):
        counts["failed"] += 1
        print("FAIL %s: %s" % (block.where(), msg))

    for path_md in files:
        blocks, lines = parse(path_md)
        edits = []  # (first line index, last line index exclusive, new lines) for --update
        i = 0
        while i < len(blocks):
            b = blocks[i]
            if "file" in b.opts:
                dest = os.path.join(args.work, b.opts["file"])
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with open(dest, "w", encoding="utf-8") as f:
                    f.write(b.text)
                counts["files"] += 1
                i += 1
                continue
            if b.lang != "sh":
                fail(b, "a '%s' block that is neither a file (file=NAME), a sh command nor "
                     "the output of one" % (b.lang or "plain"))
                i += 1
                continue
            expected = None
            if (i + 1 < len(blocks) and blocks[i + 1].lang == "text" and
                    "file" not in blocks[i + 1].opts and
                    only_blank_between(lines, b.end, blocks[i + 1].line)):
                expected = blocks[i + 1]
            i += 2 if expected else 1
            tool = b.opts.get("requires")
            if tool and not tool_on_path(tool, env):
                counts["skipped"] += 1
                print("SKIP %s: %s is not on the PATH" % (b.where(), tool))
                continue
            counts["run"] += 1
            try:
                r = subprocess.run(["bash", "-e", "-c", b.text], cwd=args.work, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=TIMEOUT_S)
                out, status = as_on_terminal(r.stdout.decode("utf-8", "replace")), r.returncode
            except subprocess.TimeoutExpired:
                fail(b, "timed out after %d s" % TIMEOUT_S)
                continue
            want_status = int(b.opts.get("status", "0"))
            if status != want_status:
                fail(b, "exit status %d, expected %d; it printed:\n%s" % (status, want_status,
                                                                           out))
                continue
            varies = expected is not None and "varies" in expected.flags
            got = normalise(out, varies)
            want = normalise(expected.text, varies) if expected else []
            if got == want:
                continue
            if args.update:
                new = out.rstrip("\n").split("\n")
                if expected:
                    edits.append((expected.line, expected.end - 1, new))
                else:
                    edits.append((b.end, b.end, ["", "```text"] + new + ["```"]))
                print("UPDATE %s" % b.where())
                continue
            diff = difflib.unified_diff(want, got, "shown", "printed", lineterm="")
            fail(b, "the output differs from the text block:\n" + "\n".join(diff))
        if edits:
            for first, last, new in sorted(edits, reverse=True):
                lines[first:last] = new
            with open(path_md, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))

    print("run_tutorial: %d chapters, %d files written, %d commands run, %d skipped, %d failed"
          % (len(files), counts["files"], counts["run"], counts["skipped"], counts["failed"]))
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
