#!/usr/bin/env bash
# editors/test/run.sh BUILD_DIR [GRAMMAR] — installs the pinned vscode-textmate and
# vscode-oniguruma (package-lock.json) into BUILD_DIR with `npm ci` (once per lock file: a
# stamp keeps later runs offline), then tokenizes every .tdsl file of the repository
# (tokenize.js). ctest runs it as editors.grammar.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dir="$1/editors-test"
mkdir -p "$dir"
if ! cmp -s "$here/package-lock.json" "$dir/package-lock.json" || [ ! -d "$dir/node_modules" ]; then
  cp "$here/package.json" "$here/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error)
fi
exec node "$here/tokenize.js" "$root" "$dir/node_modules" ${2:+"$2"}
