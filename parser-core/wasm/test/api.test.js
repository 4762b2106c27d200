"use strict";
// The package's API beyond the corpus: UTF-16 edge cases, custom names, memory, misuse.
const test = require("node:test");
const assert = require("node:assert/strict");
const { pkg, strip } = require("./common.js");
const { parseAssistantMessageV2, StreamParser, setDynamicToolUseNames } = pkg;

const json = (v) => JSON.stringify(v);

test("lone surrogates and astral characters are kept exactly as the JS string has them", () => {
  const input = "\uDC00 a😀\uD800<read_file>\n<path>\uDBFF😀x\uDFFF </path></read_file>\uD83D";
  assert.equal(
    json(strip(parseAssistantMessageV2(input))),
    json([
      { type: "text", content: "\uDC00 a😀\uD800", partial: false },
      { type: "tool_use", name: "read_file", params: { path: "\uDBFF😀x\uDFFF" }, partial: false },
      { type: "text", content: "\uD83D", partial: true },
    ]),
  );
});

// A small reference for strings with surrogates: a lone surrogate is an ordinary character to
// Cline's parser (not `<`, `>` or whitespace), exactly like "X". Replacing each lone surrogate by
// "X" (one unit for one unit) must therefore give the same blocks with "X" in its place.
function loneToX(s) {
  return s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "X");
}

function randomString(rand, n) {
  const atoms = ["<read_file>", "</read_file>", "<path>", "</path>", "<write_to_file>", "</write_to_file>",
    "<content>", "</content>", "<", ">", " ", "\n", "\u00A0", "\uFEFF", "a", "é", "😀", "\uD800", "\uDC00",
    "\uDBFF", "\uDFFF", "\uD83D", "\uDE00", "\u2028", "x"];
  let s = "";
  for (let i = 0; i < n; i++) s += atoms[Math.floor(rand() * atoms.length)];
  return s;
}

function lcg(seed) {
  let x = seed >>> 0;
  return () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

test("random UTF-16 with lone surrogates: never throws, lone surrogates act as ordinary characters, streams agree", () => {
  const rand = lcg(17);
  const p = new StreamParser();
  for (let round = 0; round < 1500; round++) {
    const s = randomString(rand, 1 + Math.floor(rand() * 40));
    const got = parseAssistantMessageV2(s);
    const reference = parseAssistantMessageV2(loneToX(s));
    const xed = strip(got).map((b) =>
      b.type === "text"
        ? { ...b, content: loneToX(b.content) }
        : { ...b, params: Object.fromEntries(Object.entries(b.params).map(([k, v]) => [k, loneToX(v)])) },
    );
    assert.equal(json(xed), json(strip(reference)), json(s));
    // Streamed in chunks of 1–5 UTF-16 units (surrogate pairs split anywhere): every push equals
    // the whole parse of the text so far.
    p.reset();
    let at = 0;
    while (at < s.length) {
      const next = Math.min(s.length, at + 1 + Math.floor(rand() * 5));
      const blocks = p.push(s.slice(at, next));
      at = next;
      assert.equal(json(strip(blocks)), json(strip(parseAssistantMessageV2(s.slice(0, at)))), json(s.slice(0, at)));
    }
  }
  p.free();
});

test("a long growing value streams exactly (the glue extends the last block's strings)", () => {
  const body = "fn main() {\n    println!(\"<hi>\");\n}\n  \n".repeat(500) + " é😀\uD800";
  const input = `Writing.<write_to_file><path>src/main.rs</path><content>\n${body}  `;
  const p = new StreamParser();
  let blocks;
  for (let i = 0; i < input.length; i += 7) {
    blocks = p.push(input.slice(i, i + 7));
    if (i % 301 === 0) assert.equal(json(strip(blocks)), json(strip(parseAssistantMessageV2(input.slice(0, i + 7)))));
  }
  assert.equal(json(strip(blocks)), json(strip(parseAssistantMessageV2(input))));
  assert.equal(blocks[1].params.content, body.trim());
  blocks = p.push("</content></write_to_file>");
  assert.equal(blocks[1].partial, false);
  assert.deepEqual(p.completed, { start: 1, end: 2 });
  p.free();
});

test("pushes that only extend a growing string agree with the whole parse at every push, tags cut anywhere", () => {
  // The glue answers such pushes itself (a chunk with no `>` that could end a tag) and hands the
  // text to the module later: closing tags split across pushes, `>` after the name's last letter,
  // whitespace the trim drops then keeps, and names that share their last letter.
  const atoms = ["</content>", "</content", "t>", ">", "t", "nt", "</", "<", " ", "\n", "\u00A0", "\u2028", "\uFEFF",
    "x", "é", "😀", "\uD800", "</path>", "<path>", "</write_to_file>", "<content>", "a > b", "Vec<u8>", "</tent>"];
  const rand = lcg(26);
  for (let round = 0; round < 400; round++) {
    const custom = round % 4 === 3;
    // Every other custom round, a param name with an astral character (a pair a push may cut).
    const param = round % 8 === 7 ? "s😀" : "sé";
    const names = { toolNames: ["write_to_file", "t"], paramNames: ["content", "path", "tent", param] };
    let body = "";
    for (let i = 0, n = 5 + Math.floor(rand() * 60); i < n; i++) body += atoms[Math.floor(rand() * atoms.length)];
    const reply = custom
      ? `hi <t><${param}> a${body.replaceAll("content", param)}`
      : `Writing ${body.slice(0, 9)}<write_to_file><path>p</path><content>${body}`;
    const p = custom ? new StreamParser(names) : new StreamParser();
    const whole = custom
      ? (s) => {
          const q = new StreamParser(names);
          const b = q.push(s);
          q.free();
          return b;
        }
      : parseAssistantMessageV2;
    let at = 0;
    let before = [];
    while (at < reply.length) {
      const next = Math.min(reply.length, at + 1 + Math.floor(rand() * 12));
      const blocks = p.push(reply.slice(at, next));
      at = next;
      const want = strip(whole(reply.slice(0, at)));
      assert.equal(json(strip(blocks)), json(want), json(reply.slice(0, at)));
      // `completed`: the blocks that were partial (or absent) before this push and are not now.
      const done = want.map((b, i) => !b.partial && (i >= before.length || before[i].partial));
      const { start, end } = p.completed;
      assert.ok(start <= end && done.every((d, i) => d === (i >= start && i < end)), json([reply.slice(0, at), start, end]));
      before = want;
    }
    p.free();
  }
});

test("long values across many hand-overs to the module agree with the whole parse (strings re-sliced from the pieces)", () => {
  // Values of 9,000 to 39,000 units in chunks of 1 to 300: the glue holds what only grows a
  // string and hands it over 8,192 units at a time or at a chunk that may end a tag; then it
  // rebuilds the growing strings from the text's pieces, when they span fewer pieces than the
  // pushes appended since (a text full of `>` is cut into many short ones).
  const rand = lcg(777);
  const inner = ["a < b", "x > y", "t>", "é😀", "\n", "   ", "fn main() {}", "content>", "</conte", "Vec<u8>", "\t"];
  for (let c = 0; c < 24; c++) {
    let body = "";
    const len = 9000 + Math.floor(rand() * 30000);
    while (body.length < len) {
      body += rand() < 0.25 ? inner[Math.floor(rand() * inner.length)] : "lorem ipsum ".slice(0, 1 + Math.floor(rand() * 12));
    }
    const head = rand() < 0.5 ? "Intro text.\n" : "";
    const tail = rand() < 0.5 ? "\n</content>\n</write_to_file>\nafter" : "";
    const input = `${head}<write_to_file>\n<path>src/a.rs</path>\n<content>\n${body}${tail}`;
    const p = new StreamParser();
    let acc = "";
    let k = 0;
    for (let i = 0; i < input.length; ) {
      const n = 1 + Math.floor(rand() * (rand() < 0.125 ? 300 : 24));
      const chunk = input.slice(i, i + n);
      i += n;
      acc += chunk;
      const blocks = p.push(chunk);
      if (k++ % 5 === 0 || i >= input.length) {
        assert.equal(json(strip(blocks)), json(strip(parseAssistantMessageV2(acc))), `case ${c} at ${acc.length}`);
      }
    }
    p.free();
  }
});

test("call ids: fresh per whole parse as in Cline, stable per tool while a stream grows", () => {
  const reply = "<read_file><path>a</path></read_file>";
  assert.notEqual(parseAssistantMessageV2(reply)[0].call_id, parseAssistantMessageV2(reply)[0].call_id);
  const p = new StreamParser();
  const first = p.push("<read_file><pa")[0].call_id;
  assert.equal(p.push("th>a</path>")[0].call_id, first);
  assert.equal(p.push("</read_file>")[0].call_id, first);
  p.free();
});

test("a push rebuilds only the blocks from the first changed one, in the parser's own array", () => {
  const p = new StreamParser();
  const reply = "a <read_file><path>x</path></read_file> b <read_file><path>y</path></read_file> c";
  const array = p.push(reply.slice(0, 50));
  const before = array.slice();
  assert.equal(json(strip(before)), json(strip(parseAssistantMessageV2(reply.slice(0, 50)))));
  const after = p.push(reply.slice(50));
  assert.equal(after, array, "push returns the same array, updated in place");
  assert.equal(json(strip(after)), json(strip(parseAssistantMessageV2(reply))));
  // Blocks 0 and 1 were complete before: the same objects. Block 2 ("b", then partial) changed.
  assert.equal(after[0], before[0]);
  assert.equal(after[1], before[1]);
  assert.notEqual(after[2], before[2]);
  const done = p.finish();
  assert.notEqual(done, after, "finish returns a copy");
  assert.equal(json(done), json(after));
  p.free();
});

test("a push that only extends the last block gives a new block object; a kept one stays as it was", () => {
  const p = new StreamParser();
  const reply = "Hello <write_to_file><path>a.rs</path><content>fn main() {}\nfn other() {}";
  let kept = null;
  let keptJson = "";
  for (let i = 0; i < reply.length; i += 3) {
    const blocks = p.push(reply.slice(i, i + 3));
    const whole = parseAssistantMessageV2(reply.slice(0, i + 3));
    assert.equal(json(strip(blocks)), json(strip(whole)), reply.slice(0, i + 3));
    const last = blocks[blocks.length - 1];
    if (kept !== null && last !== kept) assert.equal(json(kept), keptJson, "a block handed out earlier changed");
    kept = last;
    keptJson = json(last);
  }
  p.free();
});

test("odd param names ('__proto__', integer-like ones) stream exactly as a whole parse reads them", () => {
  const names = ["b", "2", "__proto__", "1", "constructor"];
  const p = new StreamParser({ toolNames: ["t"], paramNames: names });
  const body = names.map((n, k) => `<${n}>value ${k} of ${n}</${n}>`).join("") + "<b>again b</b><2>again 2";
  const reply = `<t>${body}</t> done`;
  // The whole parse with the same names, through a stream fed at once.
  const wholeOf = (s) => {
    const q = new StreamParser({ toolNames: ["t"], paramNames: names });
    const blocks = q.push(s);
    q.free();
    return blocks;
  };
  const shape = (blocks) =>
    blocks.map((b) => b.type === "tool_use" ? [Object.getPrototypeOf(b.params) === Object.prototype, Object.keys(b.params), json(strip([b]))] : json(b));
  for (let i = 0; i < reply.length; i++) {
    const blocks = p.push(reply[i]);
    assert.deepEqual(shape(blocks), shape(wholeOf(reply.slice(0, i + 1))), reply.slice(0, i + 1));
  }
  p.free();
});

test("names with astral characters are recognised when a push ends between the two halves of one", () => {
  // The module reads UTF-8: a chunk that ends in a high surrogate would reach it as U+FFFD, and
  // the name's character would never match. Such a push is answered by a whole parse.
  const names = { toolNames: ["t😀", "read_file"], paramNames: ["p😀", "path"] };
  const reply = "a😀 <t😀><p😀> v😀 </p😀></t😀> <read_file><path>😀</path></read_file>😀";
  const whole = (s) => {
    const q = new StreamParser(names);
    const b = q.push(s);
    q.free();
    return b;
  };
  for (const step of [1, 2, 3, 5]) {
    const p = new StreamParser(names);
    for (let at = 0; at < reply.length; ) {
      const next = Math.min(reply.length, at + step);
      const blocks = p.push(reply.slice(at, next));
      at = next;
      assert.equal(json(strip(blocks)), json(strip(whole(reply.slice(0, at)))), json([step, reply.slice(0, at)]));
    }
    const last = p.push("");
    assert.equal(last[1].name, "t😀");
    assert.equal(last[1].params["p😀"], "v😀");
    p.free();
  }
});

test("custom tool and param names, and setDynamicToolUseNames as in Cline", () => {
  const p = new StreamParser({ toolNames: ["my_tool"], paramNames: ["arg", "path"] });
  const blocks = p.push("<read_file><path>a</path></read_file><my_tool><arg> 1 </arg><path>x</path>");
  assert.equal(
    json(strip(blocks)),
    json([
      { type: "text", content: "<read_file><path>a</path></read_file>", partial: false },
      { type: "tool_use", name: "my_tool", params: { arg: "1", path: "x" }, partial: true },
    ]),
  );
  p.free();
  const reply = "<mcp_thing><path>p</path></mcp_thing>";
  assert.equal(parseAssistantMessageV2(reply)[0].type, "text");
  setDynamicToolUseNames("mcp", [" mcp_thing ", ""]);
  assert.equal(parseAssistantMessageV2(reply)[0].name, "mcp_thing");
  const q = new StreamParser();
  assert.equal(q.push(reply)[0].name, "mcp_thing");
  q.free();
  setDynamicToolUseNames("mcp", []);
  assert.equal(parseAssistantMessageV2(reply)[0].type, "text");
  assert.throws(() => new StreamParser({ toolNames: ["bad<name"] }), /tag name/);
});

test("free() and reset() let go of the reply but not of the blocks the caller holds", () => {
  // They flatten the reply's growing strings and empty the parser's own holders (so that a
  // dead reply's ropes do not burden the next one's collections); what push returned stays.
  const body = "let x = a < b;\n".repeat(3000);
  const input = `Now.<write_to_file><path>a.rs</path><content>\n${body}`;
  const push = (p, text) => {
    let blocks;
    for (let i = 0; i < text.length; i += 16) blocks = p.push(text.slice(i, i + 16));
    return blocks;
  };
  const want = json(strip(parseAssistantMessageV2(input)));
  const p = new StreamParser();
  const first = push(p, input);
  const kept = first.slice();
  p.reset();
  assert.equal(json(strip(first)), want, "the array push returned, after reset()");
  assert.equal(first[1].params.content, body.trim());
  const second = push(p, input);
  assert.equal(json(strip(second)), want, "the next reply, after reset()");
  assert.equal(json(strip(kept)), want);
  p.free();
  assert.equal(json(strip(second)), want, "the array push returned, after free()");
  assert.equal(json(strip(p.finish())), want, "finish() after free()");
  assert.throws(() => p.push("x"), /no such stream/);
});

test("misuse is an exception, never a crash", () => {
  assert.throws(() => parseAssistantMessageV2(42), TypeError);
  const p = new StreamParser();
  assert.throws(() => p.push(null), TypeError);
  p.free();
  assert.throws(() => p.push("x"), /no such stream/);
  p.free(); // twice is harmless
});

test("memory does not grow over 100,000 calls, custom names included", () => {
  const memory = pkg._wasm.memory;
  const reply = "I'll look.\n<read_file>\n<path>src/é😀.rs</path>\n</read_file>\nThen <write_to_file><path>a</path><content>x</content></write_to_file>";
  const round = () => {
    parseAssistantMessageV2(reply);
    const p = new StreamParser();
    p.push(reply.slice(0, 30));
    p.push(reply.slice(30));
    p.reset();
    p.push(reply);
    p.free();
  };
  const custom = () => {
    const p = new StreamParser({ toolNames: ["t"], paramNames: ["a"] });
    p.push("<t><a>1</a></t>");
    p.free();
    setDynamicToolUseNames("ns", ["x_tool"]);
    setDynamicToolUseNames("ns", []);
  };
  for (let i = 0; i < 1000; i++) {
    round();
    custom();
  }
  const before = memory.buffer.byteLength;
  for (let i = 0; i < 100000; i++) {
    round();
    if (i % 10 === 0) custom();
  }
  assert.equal(memory.buffer.byteLength, before);
});

test("the ES module entry loads the same module and API", async () => {
  const path = require("path");
  const { pathToFileURL } = require("url");
  const esm = await import(pathToFileURL(path.resolve(process.env.PARSER_CORE_WASM_PKG, "index.mjs")).href);
  const reply = "Hi <read_file><path>a😀</path></read_file>";
  assert.equal(json(strip(esm.parseAssistantMessageV2(reply))), json(strip(parseAssistantMessageV2(reply))));
  const p = new esm.StreamParser();
  assert.equal(p.push(reply)[1].params.path, "a😀");
  p.free();
  assert.equal(typeof esm.default.setDynamicToolUseNames, "function");
});
