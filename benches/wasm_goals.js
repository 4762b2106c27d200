"use strict";
// The WebAssembly package's goals (issue 26), as ratios measured in one run of one process:
//   1. cost linear in blocks: a reply of 4,000 tool calls streamed in 16-char pushes against one
//      of 1,000 (linear is 4x, quadratic 16x); and in bytes, for 400 KB of text against 100 KB
//      when many pushes hold a `>` (each one then answered by the module);
//   2. a 16-char push on a 200 KB write_to_file: its time, and Cline's way (re-parsing the whole
//      reply after every push, with this package's whole parse) against StreamParser, at 16- and
//      64-char pushes.
// Prints one line per goal ending in PASS or FAIL; exit status 1 when any fails (with --ci,
// only when a goal that must hold fails: the linear ones, the package's size).
// Usage: bash parser-core/wasm/build.sh OUT && node benches/wasm_goals.js OUT [--ci]
// Times are the process's CPU time (user + system, process.cpuUsage), not wall time: on a shared
// machine a waiting process is not charged. Every figure is a mean over back-to-back runs, so
// that what the garbage collector spends on the parser's own objects is counted: for the
// 200 KB write as it is in the whole reparse it is set against; for the linear-in-blocks ratio
// in batches of equal work on each side.
const path = require("path");

const dir = path.resolve(process.argv[2] || "");
const { parseAssistantMessageV2, StreamParser } = require(dir);

// A write_to_file whose content is Rust-like code (full of `<`) of about `bytes` bytes (the same
// reply as parser-core/wasm/bench/bench.js).
function write(bytes) {
  const line = [
    "    for (i, item) in items.iter().enumerate() { if *item < limit && i > 0 { total += item; } }\n",
    "    let v: Vec<Option<u32>> = input.lines().map(|l| l.parse().ok()).collect();\n",
    "    // compare a < b, then shift x <<= 2 and print \"<done>\"\n",
  ];
  let body = "";
  for (let i = 0; body.length < bytes; i++) body += line[i % line.length];
  return `I'll write the file.\n<write_to_file>\n<path>src/lib.rs</path>\n<content>\n${body}</content>\n</write_to_file>`;
}

// A reply of `n` tool calls, each after a line of prose: 2n blocks.
function tools(n) {
  let s = "";
  for (let i = 0; i < n; i++) s += `Now file ${i}.\n<read_file>\n<path>src/module_${i}.rs</path>\n</read_file>\n`;
  return s;
}

function chunks(s, n) {
  const out = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out;
}

function stream(parts) {
  const p = new StreamParser();
  let blocks;
  for (const c of parts) blocks = p.push(c);
  p.free();
  return blocks;
}

function reparse(parts) {
  let acc = "";
  let blocks;
  for (const c of parts) blocks = parseAssistantMessageV2((acc += c));
  return blocks;
}

// The process's CPU time so far, in nanoseconds.
function cpuNs() {
  const d = process.cpuUsage();
  return (d.user + d.system) * 1000;
}

// The mean time of `runs` back-to-back runs, in nanoseconds, and the last result.
function mean(runs, f) {
  let result;
  const t0 = cpuNs();
  for (let r = 0; r < runs; r++) result = f();
  return [(cpuNs() - t0) / runs, result];
}

const strip = (bs) => JSON.stringify(bs.map(({ call_id, ...rest }) => rest));
const ci = process.argv.includes("--ci");
let failed = false;
// `pass` null: a figure without a goal (`info`).
function report(goal, figure, pass, must) {
  if (pass === false && (!ci || must)) failed = true;
  const verdict = pass === null ? "info" : pass ? "PASS" : "FAIL";
  console.log(`wasm   ${goal.padEnd(66)} ${figure.padEnd(44)} ${verdict}`);
}

// Warm the JIT on every workload first.
for (const s of [tools(1000), tools(4000), write(200 * 1024)]) stream(chunks(s, 16));
reparse(chunks(write(200 * 1024), 16).slice(0, 2000));

// Per-run CPU time of `large` (4x the bytes of `small`) over `small`'s, from `rounds` rounds of
// equal work: `batch` runs of the small reply, then `batch / 4` of the large one. Each side pays
// for its own garbage, as a user's process would. Runs taken one at a time do not: the best of
// 15 pairs (what the blocks line used to print) left the collector out of the small runs more
// often than out of the large (3.7-7.3x on a 2-core machine, over its 5x limit with old and new
// glue alike), and alternating single runs charged each with the other's garbage (7-8x);
// batches read 3.2-4.5x there. Returns [ratio, small ms, large ms] per run.
function linearRatio(small, large, rounds, batch) {
  let t1 = 0;
  let t4 = 0;
  for (let r = 0; r < rounds; r++) {
    let t0 = cpuNs();
    for (let k = 0; k < batch; k++) stream(small);
    t1 += cpuNs() - t0;
    t0 = cpuNs();
    for (let k = 0; k < batch / 4; k++) stream(large);
    t4 += cpuNs() - t0;
  }
  t1 /= rounds * batch;
  t4 /= (rounds * batch) / 4;
  return [t4 / t1, t1 / 1e6, t4 / 1e6];
}

function reportLinear(goal, [ratio, ms1, ms4]) {
  report(goal, `${ratio.toFixed(2)}x (${ms1.toFixed(1)} / ${ms4.toFixed(1)} ms)`, ratio <= 5, true);
}

// 1. Linear in blocks.
reportLinear(
  "4,000 tools / 1,000 tools, 16-char pushes (linear: 4x)",
  linearRatio(chunks(tools(1000), 16), chunks(tools(4000), 16), 4, 8),
);

// 1b. Linear in bytes when many pushes hold a `>`: such a push is answered by the module, and
// the text is cut into short pieces; a growing string re-sliced across all of them on every
// hand-over (what the glue once did) made this 5.7x at 200 / 50 KB and 6.8x at 400 / 100 KB.
{
  const prose = (bytes) => {
    let s = "";
    for (let i = 0; s.length < bytes; i++) s += `step ${i} -> then x => y, see <b>this</b> and more words here.\n`;
    return s;
  };
  reportLinear(
    "400 KB / 100 KB of text with a `>` every ~15 chars (linear: 4x)",
    linearRatio(chunks(prose(100 * 1024), 16), chunks(prose(400 * 1024), 16), 3, 4),
  );
}

// 2. The 200 KB write.
const text = write(200 * 1024);
for (const n of [16, 64]) {
  const parts = chunks(text, n);
  // The mean of 64 runs after 16 to warm up: a stream run takes a few ms and allocates well
  // under a young generation, so a collection falls in one run of several, and the best of
  // several (what this line used to print: ~190 ns per 16-char push, 869x) left it out — while
  // the reparse, a run of seconds, pays for every one of its own.
  for (let r = 0; r < 16; r++) stream(parts);
  const [ts, a] = mean(64, () => stream(parts));
  const [tr, b] = mean(n === 16 ? 2 : 4, () => reparse(parts));
  if (strip(a) !== strip(b)) throw new Error("StreamParser and the whole parse disagree");
  const perPush = ts / parts.length;
  if (n === 16) report("16-char push on the 200 KB write (goal <= 500 ns)", `${perPush.toFixed(0)} ns per push`, perPush <= 500);
  const ratio = tr / ts;
  const goal = n === 16 ? 500 : 1000;
  report(
    `whole reparse / StreamParser, ${n}-char pushes (goal >= ${goal}x)`,
    `${ratio.toFixed(0)}x (${(tr / 1e6).toFixed(0)} ms / ${(ts / 1e6).toFixed(2)} ms)`,
    ratio >= goal,
  );
  if (n === 64) {
    // What 1,000x leaves a stream: a whole parse of the final text, once (the text flat, as the
    // reparse's is), is a floor under any stream's cost, which also builds that text from its
    // chunks. So this ratio bounds what any stream could reach at these pushes.
    const tw = mean(64, () => parseAssistantMessageV2(text))[0];
    report(
      "  the same / one whole parse of the final text (no goal: a bound)",
      `${(tr / tw).toFixed(0)}x (one parse ${(tw / 1e6).toFixed(2)} ms; stream ${(ts / tw).toFixed(2)}x it)`,
      null,
    );
  }
}
const fs = require("fs");
const gz = require("zlib").gzipSync(fs.readFileSync(path.join(dir, "parser_core.wasm")), { level: 9 }).length;
report("parser_core.wasm gzip'd (goal <= 60 KB)", `${(gz / 1024).toFixed(1)} KB`, gz <= 60 * 1024, true);
process.exitCode = failed ? 1 : 0;
