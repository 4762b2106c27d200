#!/usr/bin/env bash
# Build parser-core's WebAssembly package for Node.js and browsers into OUTDIR:
#   package.json, index.js (CommonJS), index.mjs (ES module), index.d.ts, parser_core.wasm,
#   README.md.
# Usage: bash parser-core/wasm/build.sh OUTDIR
# Installs the wasm32 target if it is missing; needs nothing else (the glue is hand-written).
set -euo pipefail
out=${1:?usage: build.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# (Read whole first: `rustup … | grep -q` under pipefail fails when grep leaves early.)
installed=$(rustup target list --installed)
grep -qx wasm32-unknown-unknown <<<"$installed" || rustup target add wasm32-unknown-unknown
(cd "$root" && cargo build -p parser-core-wasm --lib --target wasm32-unknown-unknown --profile wasm)
mkdir -p "$out"
target=${CARGO_TARGET_DIR:-$root/target}
cp "$target/wasm32-unknown-unknown/wasm/parser_core_wasm.wasm" "$out/parser_core.wasm"
{
  echo '"use strict";'
  cat "$here/js/core.js"
  cat "$here/js/load.cjs"
} >"$out/index.js"
{
  cat "$here/js/core.js"
  cat "$here/js/load.mjs"
} >"$out/index.mjs"
cp "$here/js/index.d.ts" "$out/index.d.ts"
cp "$here/README.md" "$out/README.md"
version=$(sed -n '/^version = "/{s/^version = "\(.*\)"/\1/p;q;}' "$here/Cargo.toml")
cat >"$out/package.json" <<JSON
{
  "name": "parser-core",
  "version": "$version",
  "description": "Cline's parseAssistantMessageV2, byte-exact, in WebAssembly, with a streaming parser",
  "license": "Apache-2.0",
  "main": "./index.js",
  "module": "./index.mjs",
  "types": "./index.d.ts",
  "exports": {
    ".": { "types": "./index.d.ts", "import": "./index.mjs", "require": "./index.js" },
    "./parser_core.wasm": "./parser_core.wasm"
  },
  "files": ["index.js", "index.mjs", "index.d.ts", "parser_core.wasm", "README.md"]
}
JSON
echo "built $out: $(wc -c <"$out/parser_core.wasm") bytes of wasm"
