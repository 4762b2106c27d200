"use strict";
// Every line of both conformance files, whole and streamed one character at a time.
const test = require("node:test");
const assert = require("node:assert/strict");
const { pkg, readLines, strip } = require("./common.js");
const { parseAssistantMessageV2, StreamParser } = pkg;

const whole = readLines("cline-v4.0.10.jsonl");
const prefixes = readLines("cline-v4.0.10-prefixes.jsonl");

// JSON text compares values and key order (params keep Cline's first-assignment order).
const same = (got, want, where) => assert.equal(JSON.stringify(got), JSON.stringify(want), where);

test("conformance files are complete", () => {
  assert.equal(whole.length, 3193);
  assert.equal(prefixes.length, 10760);
});

test("parseAssistantMessageV2 matches Cline on every input of both files", () => {
  for (const { id, input, expected } of [...whole, ...prefixes]) {
    same(strip(parseAssistantMessageV2(input), id), expected, id);
  }
});

test("StreamParser at one code point per push matches every prefix of the prefix file", () => {
  const bases = new Map();
  for (const line of prefixes) {
    const cut = line.id.lastIndexOf("/");
    const base = line.id.slice(0, cut);
    if (!bases.has(base)) bases.set(base, []);
    bases.get(base)[Number(line.id.slice(cut + 1))] = line;
  }
  assert.equal(bases.size, 69);
  const p = new StreamParser();
  for (const [base, lines] of bases) {
    p.reset();
    const input = lines[lines.length - 1].input;
    const points = [...input];
    assert.equal(points.length, lines.length - 1, base);
    same(p.finish(), lines[0].expected, `${base}/0`);
    points.forEach((c, k) => same(strip(p.push(c), `${base}/${k + 1}`), lines[k + 1].expected, `${base}/${k + 1}`));
  }
  p.free();
});

test("StreamParser at one UTF-16 unit per push ends with Cline's blocks on every whole input", () => {
  const p = new StreamParser();
  for (const { id, input, expected } of whole) {
    p.reset();
    let blocks = p.finish();
    for (let i = 0; i < input.length; i++) blocks = p.push(input[i]);
    same(strip(blocks, id), expected, id);
  }
  p.free();
});
