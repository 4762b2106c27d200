"use strict";
// Shared by the node tests: the built package (PARSER_CORE_WASM_PKG) and the conformance files.
const fs = require("fs");
const path = require("path");

const pkgDir = process.env.PARSER_CORE_WASM_PKG;
if (!pkgDir) throw new Error("set PARSER_CORE_WASM_PKG to a directory built by parser-core/wasm/build.sh");
const pkg = require(path.resolve(pkgDir));

const conformanceDir = path.join(__dirname, "..", "..", "..", "..", "shared", "conformance");

function readLines(file) {
  const full = path.join(conformanceDir, file);
  if (!fs.existsSync(full)) throw new Error(`missing ${full}: the conformance files must sit beside the repository`);
  return fs
    .readFileSync(full, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l));
}

// Cline's block without the two fields the conformance files leave out, after checking them.
function strip(blocks, where) {
  return blocks.map((b) => {
    if (b.type !== "tool_use") return b;
    const keys = Object.keys(b).join(",");
    if (keys !== "type,name,params,partial,call_id,isNativeToolCall") throw new Error(`${where}: tool keys ${keys}`);
    if (typeof b.call_id !== "string" || !/^[A-Za-z0-9_-]{8}$/.test(b.call_id)) throw new Error(`${where}: call_id ${b.call_id}`);
    if (b.isNativeToolCall !== false) throw new Error(`${where}: isNativeToolCall ${b.isNativeToolCall}`);
    const { call_id, isNativeToolCall, ...rest } = b;
    return rest;
  });
}

module.exports = { pkg, readLines, strip };
