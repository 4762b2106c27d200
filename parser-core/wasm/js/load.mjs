
// ES module entry: Node.js reads the file, a browser fetches it next to this module.
const url = new URL("./parser_core.wasm", import.meta.url);
let source;
if (url.protocol === "file:") {
  const { readFile } = await import("node:fs/promises");
  source = await WebAssembly.instantiate(await readFile(url), {});
} else {
  source = await WebAssembly.instantiateStreaming(fetch(url), {});
}
const api = createApi(source.instance.exports);
export const { parseAssistantMessageV2, StreamParser, setDynamicToolUseNames } = api;
export default api;
