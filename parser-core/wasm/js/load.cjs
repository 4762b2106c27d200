
// CommonJS entry (Node.js): the module is compiled synchronously at require time.
const wasm = new WebAssembly.Instance(
  new WebAssembly.Module(require("fs").readFileSync(require("path").join(__dirname, "parser_core.wasm"))),
  {},
).exports;
module.exports = createApi(wasm);
