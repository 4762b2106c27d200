#!/usr/bin/env bash
# Issue 26's goals, each as a figure and a PASS/FAIL, in one run:
#   parser   callgrind instructions (deterministic, whatever the machine's load): whole parse
#            per byte of the 1 MiB mixed corpus, against memchr's true find-next, and streaming
#            in 16/64/256-byte pushes against one whole parse; many run-time params, linear;
#   wasm     the WebAssembly package's exported layer compiled natively under callgrind (linear
#            in blocks, instructions per push), then the npm package itself in node
#            (benches/wasm_goals.js: CPU time; the 200 KB write the mean of back-to-back runs);
#   ckpt     checkpoints: an edit turn in 40,000 files against 2,000 (wall time, the two
#            workspaces taking turns; agent-min/examples/checkpoint_bench.rs);
#   json     the --json output of a streamed write, in bytes, and the agent's instructions from 1 to
#            4 MiB, linear (benches/agent_stream.py);
#   binary   agent-min's release build, stripped: with default features, and the minimal agent
#            (`--no-default-features`, built in the `release-min` profile: release's settings,
#            its own directory so that target/release/agent-min stays the default build).
# Usage: benches/goals.sh [--ci] [--readme] [--binary]
#   --binary only the binary goals (builds nothing else; what `.ci/run fast` checks);
#   --ci     exit 1 only when a goal marked `must` fails (what is met and must stay met: the
#            linear ones and the package's size), not for goals still open;
#   --readme rewrite the README's block between `<!-- goals.sh begin -->` and
#            `<!-- goals.sh end -->` with this run's output.
# Needs valgrind, node, and the wasm32 target (parser-core/wasm/build.sh installs it).
# Exit status 1 when a goal fails; the README's performance section quotes this output.
set -euo pipefail
cd "$(dirname "$0")/.."
ci=0
readme=0
binary_only=0
for arg in "$@"; do
  case $arg in
    --ci) ci=1 ;;
    --readme) readme=1 ;;
    --binary) binary_only=1 ;;
    *) echo "usage: benches/goals.sh [--ci] [--readme] [--binary]" >&2; exit 2 ;;
  esac
done
tools="valgrind node strip"
[ $binary_only = 0 ] || tools=strip
for tool in $tools; do
  command -v "$tool" >/dev/null || { echo "goals.sh: $tool is required" >&2; exit 1; }
done
[ $binary_only = 0 ] || [ $readme = 0 ] || { echo "goals.sh: --readme needs every goal (no --binary)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cargo build --locked --release -q -p agent-min
cargo build --locked --profile release-min -q -p agent-min --no-default-features
if [ $binary_only = 0 ]; then
  cargo build --release -q -p benches --bin ipb
  bash parser-core/wasm/build.sh "$tmp/pkg" >/dev/null 2>&1 || bash parser-core/wasm/build.sh "$tmp/pkg"
fi
tgt=${CARGO_TARGET_DIR:-target}
bin=$tgt/release/ipb

# Every result line is also kept in $tmp/report, for --readme.
: >"$tmp/report"
failed=0
count() { # MODE CORPUS -> instructions of MODE minus those of building the corpus
  valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$bin" "$1" "$2" >/dev/null 2>&1
  local t
  t=$(awk '/^summary:/ {print $2}' "$tmp/out")
  valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$bin" none "$2" >/dev/null 2>&1
  echo $((t - $(awk '/^summary:/ {print $2}' "$tmp/out")))
}
# line AREA GOAL FIGURE PASS(1/0, or `info` for a figure without a goal) [must]
line() {
  local verdict=PASS
  if [ "$4" = info ]; then
    verdict=info
  elif [ "$4" != 1 ]; then
    verdict=FAIL
    if [ $ci = 0 ] || [ "${5:-}" = must ]; then failed=1; fi
  fi
  printf '%-6s %-66s %-44s %s\n' "$1" "$2" "$3" "$verdict" | tee -a "$tmp/report"
}
calc() { awk "BEGIN { print $1 }"; }
is() { awk "BEGIN { exit !($1) }" && echo 1 || echo 0; }

if [ $binary_only = 0 ]; then
# Parser, on the 1 MiB mixed corpus.
bytes=$("$bin" info mixed_1mib 2>/dev/null)
whole=$(count whole mixed_1mib)
next=$(count memchr_next mixed_1mib)
ipb=$(calc "$whole / $bytes")
vs=$(calc "$next / $whole")
line parser "whole parse, 1 MiB mixed corpus (goal <= 1.2 instr/byte)" "$(printf '%.3f instr/byte' "$ipb")" "$(is "$ipb <= 1.2")"
line parser "whole parse vs memchr true find-next (goal >= 0.35x)" \
  "$(printf '%.2fx (find-next %.3f instr/byte)' "$vs" "$(calc "$next / $bytes")")" "$(is "$vs >= 0.35")"
for chunk in 16 64 256; do
  s=$(count "stream$chunk" mixed_1mib)
  r=$(calc "$s / $whole")
  pushes=$(( (bytes + chunk - 1) / chunk ))
  fig=$(printf '%.2fx (%.2f instr/byte, %.0f instr/push)' "$r" "$(calc "$s / $bytes")" "$(calc "$s / $pushes")")
  case $chunk in
    16) line parser "streaming 16-byte pushes / whole parse (goal <= 8x)" "$fig" "$(is "$r <= 8")" ;;
    *) line parser "streaming $chunk-byte pushes / whole parse (no goal)" "$fig" info ;;
  esac
done
p1=$(count whole params_1000)
p64=$(count whole params_64000)
line parser "64k / 1k run-time params on one tool (linear: 64x)" \
  "$(printf '%.1fx (%.0f / %.0f instr per param)' "$(calc "$p64 / $p1")" "$(calc "$p1 / 1000")" "$(calc "$p64 / 64000")")" \
  "$(is "$p64 / $p1 <= 72")" must

# WASM: the exported layer, natively, under callgrind.
t1=$(count wasm_stream16 tools_1k)
t4=$(count wasm_stream16 tools_4k)
line wasm "exported layer: 4,000 / 1,000 tools, 16-byte pushes (linear: 4x)" \
  "$(printf '%.2fx instructions' "$(calc "$t4 / $t1")")" "$(is "$t4 / $t1 <= 4.4")" must
wb=$("$bin" info write_200k 2>/dev/null)
w16=$(count wasm_stream16 write_200k)
line wasm "exported layer: one 16-byte push on the 200 KB write (no goal)" \
  "$(printf '%.0f instr/push' "$(calc "$w16 / int(($wb + 15) / 16)")")" info
wasm_args=("$tmp/pkg")
[ $ci = 0 ] || wasm_args+=(--ci)
node benches/wasm_goals.js "${wasm_args[@]}" | tee -a "$tmp/report" || failed=1

# Checkpoints: an edit turn's checkpoint in a workspace of 40,000 files against one of 2,000
# (agent-min/examples/checkpoint_bench.rs: wall time of git's work, the two workspaces taking
# turns so the machine's load weighs on both alike; the median of 30 rounds each).
cargo build --locked -q -p agent-min --example checkpoint_bench
"$tgt/debug/examples/checkpoint_bench" 2000 40000 30 >"$tmp/checkpoints"
cr=$(sed -n 's/^edit turn, 40000 vs 2000 files: \([0-9.]*\)x.*/\1/p' "$tmp/checkpoints")
[ -n "$cr" ] || { cat "$tmp/checkpoints" >&2; echo "goals.sh: checkpoint_bench printed no ratio" >&2; exit 1; }
ce=$(sed -n 's/^  edit turn (the path written), [0-9]* rounds: median \([0-9.]*\) ms.*/\1/p' "$tmp/checkpoints" | paste -sd/)
line ckpt "edit turn, 40,000 / 2,000 files (goal <= 1.6x)" "$(printf '%.2fx (%s ms)' "$cr" "$ce")" "$(is "$cr <= 1.6")" must

# --json: the bytes of a write_to_file streamed in 16-byte deltas (benches/agent_stream.py: the
# whole agent against a scripted Anthropic server; partial events are rationed by bytes alone,
# so the same on any machine and at any speed of the stream; the result leaves out its echo of
# the file, which the complete call carries), in both dialects: the larger.
python3 benches/agent_stream.py >"$tmp/stream" || { cat "$tmp/stream" >&2; failed=1; }
jx=$(sed -n 's/^1 MiB in .*, --json [0-9]* bytes (\([0-9.]*\)x the file)$/\1/p' "$tmp/stream")
jn=$(sed -n 's/^1 MiB native: --json [0-9]* bytes (\([0-9.]*\)x the file)$/\1/p' "$tmp/stream")
[ -n "$jx" ] && [ -n "$jn" ] || { cat "$tmp/stream" >&2; echo "goals.sh: agent_stream.py printed no --json ratio" >&2; exit 1; }
jr=$(awk "BEGIN { print ($jx > $jn) ? $jx : $jn }")
line json "--json bytes / file, a 1 MiB write streamed (goal <= 2x)" \
  "$(printf '%.2fx XML, %.2fx native' "$jx" "$jn")" "$(is "$jr <= 2")" must
# What they are made of: the complete call, the result (Cline's text, its echo of the file left
# out), the partial events.
jp=$(sed -n '/^1 MiB native:/{n;s/^  --json: call \([0-9.]*x\), result \([0-9.]*x\), partial \([0-9.]*x\).*/\1, \2, \3/p}' "$tmp/stream")
line json "  native: complete call, result, partial events (no goal)" "$jp" info
js=$(sed -n 's/^--json \/ file at other sizes (XML \/ native): \(.*\)$/\1/p' "$tmp/stream" | sed 's/ KB / KB: /g')
line json "  16 / 100 / 400 KB files, XML / native (no goal)" "$(echo "$js" | sed 's/[0-9]* KB: //g')" info
jg=$(sed -n 's/^growth from 1 to 4 MiB: \([0-9.]*\)x.*/\1/p' "$tmp/stream")
line json "  agent instructions, 4 MiB / 1 MiB streamed (linear: 4x)" "$(printf '%.2fx' "$jg")" "$(is "$jg <= 4.5")" must
jt=$(sed -n 's/^growth from 1 to 4 MiB: .*, \([0-9.]*\)x in CPU time.*/\1/p' "$tmp/stream")
line json "  agent CPU time, the same (no goal: it varies with load)" "$(printf '%.2fx' "$jt")" info
fi

# Binary size, stripped: default features, and the minimal agent. Both goals are still open
# (README, "Reading it": what costs the bytes); until one is met, CI (`.ci/run fast`,
# `--binary --ci`) holds each binary to a ceiling a little above its size today, so that it can
# only shrink. A goal met replaces its ceiling.
size() { strip -o "$tmp/stripped" "$1" && stat -c %s "$tmp/stripped"; }
mb() { printf '%d B (%.2f MB)' "$1" "$(calc "$1 / 1e6")"; }
b=$(size "$tgt/release/agent-min")
line binary "agent-min release, stripped, default features (goal <= 3.5 MB)" "$(mb "$b")" "$(is "$b <= 3500000")"
# (Lowered from 4.6 to 4.59 MB on 2026-12-04, at 4,577,184 B: the next-gen and GPT-5 prompts are
# built in as their line differences from the generic one, which gave back more than Cline's
# focus chain, added the same day, costs.
# Raised to 4.61 MB on 2026-12-05, at 4,598,856 B: an independent security review's fixes — the
# ignore files the walker reads bounded (a 10 MB .gitignore took 3.9 GB), the directories later
# runs trust kept from commands and tools, other processes' environ holding the key covered for
# commands, removals by descriptor — and its review of native calls (cut-offs, streams closed
# without a stop reason, calls after attempt_completion): 20 KB, none of it optional.
# Raised to 4.63 MB on 2026-12-05, at 4,625,160 B: native tasks with DeepSeek's and Kimi's
# thinking models and with Gemini 3 failed at their second request (their APIs refuse a call
# without its reasoning or thought signature): what each server attached to a reply now goes
# back to it and is saved (format version 5), 14 KB, as in the minimal agent; Azure OpenAI asked
# as Cline asks it, 2 KB; and a `.git` file's git directory protected from sandboxed commands,
# 2 KB.
# Raised to 4.65 MB on 2026-12-05, at 4,648,040 B: three independent reviews against Cline's
# code and the providers' documented refusals found requests the real APIs refuse or misread
# (a temperature Kimi and MiniMax refuse, `parallel_tool_calls` o1/o3/o4 refuse, GPT models newer
# than Cline's table sent where tools with reasoning are refused, a safety refusal answered as a
# reply without a tool, a reply cut while thinking asked again unchanged), costs that were wrong
# (DeepSeek's uncached input at $0, the `:1m` models' upper price tier), a retired default model,
# and mistake counting unlike Cline's: 20 KB, all of it in the minimal agent's providers, loop
# and model facts.
# Raised to 4.68 MB on 2026-12-05, at 4,677,096 B: four more reviews against Cline's code
# (context management, hooks, execute_command, MCP): a task restore to a checkpoint before a
# context cut gave the wrong conversation (each cut is now kept aside, saved, and undone),
# context errors of Gemini and Bedrock ended tasks, written files' old copies were never
# dropped, hooks ran where Cline's do not (and TaskCancel did not run where it does), commands
# waited in an editor until their timeout; and OpenRouter's bills and model list, vLLM's model
# list: 29 KB, 26 KB of it in the minimal agent's parts.
# Raised to 4.755 MB on 2026-12-05, at 4,750,424 B: six reviews against Cline's code (ACP, the
# edit tools, read/list/search, the native loop, rules and workflows, checkpoints) and one of
# the changes themselves: Cline's @-mentions, which were missing (files, folders, git changes
# and commits, with git kept from anything the repository configures), 25 KB; edits saved as
# Cline's VS Code document saves them (line endings, BOM, notebooks), search through files of
# any size, streamed; the rules read as Cline reads them (Node's readdir order, js-yaml's
# failures, picomatch's globs, its prompt clean-up, apply_patch's paths); ACP's limits per
# prompt and stop reasons; checkpoints that no longer delete a file grown over the size limit,
# honour the global gitignore and come one per reply: 74 KB in all, 68 KB of it in parts the
# minimal agent has.
# Lowered to 4.655 MB on 2026-12-05, at 4,649,128 B: the long texts built in (prompts, tool
# declarations, the model table, every command's --help: 142 KB) deflated by build.rs, 28 KB
# (4,749,576 -> 4,639,112 B), paid for Cline's # Workspace Configuration, its file alert after
# a task-only restore, and an independent review's fixes.
# Raised to 4.665 MB on 2026-12-05, at 4,661,000 B: five reviews against Cline's code and the
# APIs' documented refusals (context cuts, the read-only tools, execute_command, the requests,
# the turns around the person) and one of the changes themselves: a replaced file read erased
# the reply's other results, ignore files above the workspace hid whole projects, Claude models
# newer than Cline's table were refused, the results before a completion were dropped; 9 KB,
# nearly all of it in parts the minimal agent has.
# Raised to 4.68 MB on 2026-12-06, at 4,675,488 B: four reviews against Cline's code (the
# native default path, MCP and hooks, checkpoints and rules) and one of the changes themselves:
# `resume "words"` and an editor's reloaded session resumed as Cline's resumeTaskFromHistory,
# --yolo's prompt without ask_followup_question, MCP's prompt texts where Cline has them and
# its tokens from the person's settings, a failed request asked about at a terminal, the
# conditional rules' evidence as Cline reads it: 15 KB, 14 KB of it in the minimal agent's parts.
# Raised to 4.69 MB on 2026-12-06, at 4,685,376 B: four reviews (Cline's providers, its CLI, its
# ACP agent, the changes themselves): OpenRouter as its own provider (its URL, key and default
# model) and Claude's thinking there, the Cline CLI's flags and piped task, an editor's question
# answered by the next prompt, a cancel a following prompt undid, an editor's MCP servers in
# the session's directory: 10 KB, 6 KB of it in the minimal agent's parts.
# Raised to 4.71 MB on 2026-12-06, at 4,708,024 B: the Cline CLI's layout (.cline/rules,
# .cline/workflows, ~/.cline's rules, workflows and MCP settings with their nested transport and
# CLINE_DIR, its hooks named, the folders guarded), an editor's refused prompt rolled back as
# ACP says, a refusal after the first tool seen: 23 KB, 19 KB of it in the minimal agent's parts.
# Raised to 4.726 MB on 2026-12-06, at 4,723,712 B: three reviews of the default path against
# Cline v4.0.10 — a native call's repeated read dropped from its tool_result, its result counted
# once, the Cline CLI's rule and workflow frontmatter (name, disabled), Ollama's key and retried
# stream errors, OpenRouter's per-model providers and sampling, the wait a refusal asks for,
# Node's words for a failed read and every signal's name: 16 KB, all of it in the minimal
# agent's parts.
# Raised to 4.742 MB on 2026-12-06, at 4,739,808 B: three reviews (security, ACP, the native
# path) — the ACP server's calls tracked by id, resolved at a turn's end and after a retry, its
# time limit and error codes; an MCP approval covering the files its servers run, user-dirs.dirs
# guarded; curl's URL in its config pipe, programs found on absolute PATH entries only, a write
# checked again where it lands, mid-stream errors retried: 16 KB, 5 KB of it in the minimal
# agent's parts. Then 4.746 MB, at 4,743,384 B: the review of those fixes — an MCP approval's
# programs told from its data files and hashed whole, a server's own PATH, an editor's sessions
# guarding the trusted places: 3.6 KB, none of it in the minimal agent's parts.
# Raised to 4.749 MB on 2026-12-06 (a later session), at 4,746,992 B: a review of the hooks
# against Cline and of the session's own diff — native hook contexts sent after the results,
# an answered question's PostToolUse, a hook executable by this user, dangling links guarded
# where they lead, MCP servers kept by an editor at a time limit, one SHA-256 module: 3.6 KB,
# most of it in the minimal agent's parts.
# Raised to 4.759 MB on 2026-12-06 (a third session), at 4,757,712 B: reviews of the GPT-5,
# Claude, context-cut and edit-tool paths against Cline and OpenAI — whole replies when OpenAI
# refuses to stream to an unverified organisation, MCP array schemas given `items`, Cline's call
# ids and OpenRouter request, gpt-5-pro's effort, a cut Responses stream retried, a patch's link
# removed as the link, binary files deleted, fences and empty SEARCHes as Cline: 9.7 KB, nearly
# all of it in the minimal agent's parts; 4,758,480 B with the execute_command fixes after them.)
# Raised to 4.772 MB on 2026-12-07, at 4,771,120 B: reviews of MCP, checkpoints, ACP and the
# prompts against Cline and the protocols — MCP lists to an empty or repeated cursor, failures
# named by origin, cancels over streamable HTTP; a restore refused where a folder would go, one
# failed midway kept undoable, stale git locks removed, names kept as bytes; curl and git never
# taken from the workspace; ACP's session/close, disconnect, prompt blocks in order: 13.2 KB,
# 1.9 KB of it in the minimal agent's parts. Raised to 4.774 MB the same day, at 4,772,880 B,
# for a review of those fixes: an editor's cancel tells an HTTP MCP server, errors name no
# user part, a refused load keeps the session, Zed's selection URIs: 1.8 KB.
# Raised to 4.783 MB on 2026-12-07 (a later session), at 4,781,864 B: reviews of the providers,
# the tools, the context bookkeeping and the sandbox — an edit's preview diffed past 2,000 lines
# and a new file shown whole, echoes of large files cut, hard links written in place, a JSON
# body to a streamed request read whole, JSON lines escaping C1 controls, no base URL password
# in errors; hooks, MCP servers and git given a PATH without the workspace, commands kept from
# terminals and device nodes, linked settings guarded, bounded hook output, MCP redirects
# followed at one origin: 9.0 KB, 7.6 KB of it in the minimal agent's parts.
# Raised to 4.802 MB on 2026-12-07 (a third session that day), at 4,800,776 B: reviews of the
# native default path, MCP and ACP, the project files and CLI, checkpoints — an interleaved
# reply sent back block for block (its text marks saved, version 8), MCP tools' images sent,
# parameter names Anthropic refuses left out and $defs kept, a new MCP session after a 404 or
# an ended stream, servers read between calls, oversized stdio answers failed at once, the
# config file's quoted switches refused and its paths its own, rules counting every XML call,
# MCP tools waiting for the start checkpoint, left-out files kept by a restore: 19.1 KB, 12.1 KB
# of it in the minimal agent's parts.
# Raised to 4.812 MB on 2026-12-07 (a fourth session that day), at 4,811,208 B: reviews of the
# file tools, the providers, security, long runs, the loop and ACP — a SEARCH matched at a line
# start, fences stripped only in pairs, reads counted by the lines shown, `-o` through a folder
# opened at the start, nested repositories renamed in an open folder, apply_patch's second look
# before an editor's write, streams without their last event retried, credentials kept out of
# saved URLs, a cancelled turn's later calls not run, a loaded session's call statuses and
# words, editor paths under its cwd: 11.4 KB, 8.1 KB of it in the minimal agent's parts.
# Raised to 4.814 MB the same session, at 4,813,096 B: the review of its own diff (a SEARCH
# after indentation taken, its look for a line start bounded, wrapped Markdown's paired fences,
# the refusal of a file in place of a folder before its approval, Ollama's cut stream, a loaded
# session's unsent results): 1.9 KB, 1.3 KB of it in the minimal agent's parts.
# Raised to 4.833 MB on 2026-12-07 (a fifth session that day), at 4,832,648 B: reviews of MCP,
# the project conventions, execute_command, the command line and the environment details — an
# MCP server slower than the first request's wait going on starting and taken up later, the
# machine's time zone in Current Time (localtime_r), the approval question's padding compacted,
# the command drain's backlog, the native calls past 64 told, -o emptied and checked, the quiet
# stdin said, the CLI's hints for codex's and claude's flags, a workspace's autoApprove not
# honoured, Recently Modified Files as Cline's watcher: 20.4 KB, 17.4 KB of it in the minimal
# agent's parts.
# Raised to 4.862 MB on 2026-12-07 (a sixth session that day), at 4,861,528 B: reviews of the
# providers, checkpoints and hooks, the native path and the context window, and of the session's
# own diff — MCP log messages shown (an event type), Node hooks started with their flag, a
# restore to an edit's checkpoint keeping the files made before it (birth times, the file
# clock), gc --auto, the left-out list in the checkpoint's message, Anthropic's image limits,
# the first-object rule for native arguments, the --base-url provider by host, the replay's
# workspace at exit: 28.9 KB, 7.2 KB of it in the minimal agent's parts.
# Raised to 4.877 MB on 2026-12-07 (a seventh session), at 4,876,712 B: reviews of the tools,
# the prompt, the loop, MCP and ACP, security and the CLI — an edit not written over a change
# saved while it was asked about (the file's stamp, the editor's buffer), the sandbox's policy
# per task (a local server's probe had fixed it at off; an editor's second session ran under the
# first's), each thread's environ covered, GPT-5.1's yolo timeout, the OS named as os-name does
# (uname: rustix's `system`), resource links and MCP errors, a left-out name's bytes, the
# config file for history, checkpoints and mcp list, native replays, a launcher's /proc/PID
# covered whole: 15.2 KB, 9.1 KB of it in the minimal agent's parts.
line binary "  the same, no larger than today (ceiling 4.877 MB)" "$(mb "$b")" "$(is "$b <= 4877000")" must
m=$(size "$tgt/release-min/agent-min")
line binary "minimal agent (--no-default-features), stripped (goal <= 2.0 MB)" "$(mb "$m")" "$(is "$m <= 2000000")"
# (Raised from 2.9 to 2.92 MB on 2026-12-03, at 2,905,024 B: the Responses API, OpenAI's own
# wire for gpt-5.5 and the codex models, which the minimal agent's providers must speak, and the
# per-task claim, added 19 KB; nothing else was found to give back in the minimal build.
# Raised to 2.94 MB on 2026-12-04, at 2,928,344 B: read_file's images, which every wire format
# and the saved tasks carry (their reading is behind `documents`, 13 KB), the YAML frontmatter
# rules and skills are written in (block scalars, values over several lines), and the Responses
# API's follow-ups; skills and the Notification hook are left out of the minimal build.
# Raised to 2.95 MB on 2026-12-04, at 2,940,328 B: since 2,928,344 B, a server that refuses
# images (the request resent without them), the frontmatter read as js-yaml reads it (quoted
# values and flow lists over several lines, its escapes) and bounded in time and stack, the
# memory bounds of the providers' decoders and the image bytes a conversation holds, and reads
# that never follow a link swapped in after the check: 12 KB, all of it needed in the minimal
# agent; nothing was found to give back.
# Lowered to 2.94 MB on 2026-12-04, at 2,928,360 B: the next-gen and GPT-5 prompts built in as
# their differences from the generic one (about 47 KB of text fewer) paid for Cline's focus
# chain (its prompt texts, reminders and checklist, about 31 KB) and gave back 15 KB.
# Raised to 2.96 MB on 2026-12-05, at 2,949,136 B: the same review's fixes (above), 21 KB, all
# of them in the minimal agent's own parts (the walker, the file tools, the loop).
# Raised to 2.975 MB on 2026-12-05, at 2,969,952 B: DeepSeek's, Kimi's and Gemini 3's native
# tasks (above), 14 KB in the providers, the reply's reading and the saved task, which the
# minimal agent's providers need (half of it serde reading the servers' objects in a save), and
# Azure OpenAI, 2 KB.
# Raised to 2.995 MB on 2026-12-05, at 2,990,816 B: the reviews' fixes (above), 20 KB, all of
# them in parts the minimal agent has (its providers, loop, accounting and model facts).
# Raised to 3.02 MB on 2026-12-05, at 3,016,736 B: the four reviews' fixes (above) in the
# loop, the context window's cuts and their undo records in the saved task (format version 6),
# the hooks' gate, the command's environment, and the servers' bills and model lists: 26 KB.
# Raised to 3.089 MB on 2026-12-05, at 3,084,968 B: the seven reviews' fixes (above) in the
# minimal agent's own parts — @-mentions, edits saved as Cline's document, streamed search, the
# rules' fidelity, the loop's empty replies and recovered calls: 68 KB.
# Lowered to 3.0 MB on 2026-12-05, at 2,993,672 B: the texts deflated (above; 3,084,488 ->
# 2,986,952 B), less what the same additions cost.
# Raised to 3.01 MB on 2026-12-05, at 3,005,112 B: the same reviews' fixes (above), 10 KB, in
# the minimal agent's own parts (the walker, the context cuts, the tools, the loop, the
# providers).
# Raised to 3.022 MB on 2026-12-06, at 3,018,432 B: the same reviews' fixes (above) in the
# minimal agent's own parts — resume's words, the yolo prompt, the retry question, the rules'
# evidence, the prompt's tidying: 14 KB.
# Raised to 3.027 MB on 2026-12-06, at 3,024,328 B: the same reviews' fixes (above) in the
# minimal agent's own parts — the OpenRouter provider and its thinking, the CLI's flags, the
# piped task: 6 KB.
# Raised to 3.045 MB on 2026-12-06, at 3,043,256 B: the Cline CLI's rules, workflows and MCP
# settings, which the minimal agent reads (or names, for MCP) as the default one does, the
# folders guarded, and the roll-back of an editor's refused prompt in the loop: 19 KB.
# Raised to 3.062 MB on 2026-12-06, at 3,059,776 B: the same reviews' changes (above), every one
# in the minimal agent's own parts: 16 KB.
# Raised to 3.067 MB on 2026-12-06, at 3,065,104 B: the same reviews' fixes (above) in the
# minimal agent's own parts — curl's config pipe and PATH lookup, the write checked again, the
# stream errors, .clineignore's `..`: 5 KB.
# Raised to 3.072 MB on 2026-12-06 (a later session), at 3,069,792 B: the same review's fixes
# (above) in the minimal agent's own parts — the native results' copies found with text
# between them, the question's answer and its hook, guarded paths through dangling links: 4.7 KB.
# Raised to 3.081 MB on 2026-12-06 (a third session), at 3,079,888 B: the same reviews' fixes
# (above), all in the minimal agent's own parts (providers, tools, context cuts): 9.9 KB;
# 3,080,704 B with the execute_command fixes after them.)
# Raised to 3.083 MB on 2026-12-07, at 3,082,144 B: of the same reviews' fixes (above), those
# in the minimal agent's own parts (curl never taken from the workspace, --tool-calls auto as
# Cline's matchers choose): 1.9 KB.
# Raised to 3.091 MB on 2026-12-07 (a later session), at 3,090,136 B: of the same reviews' fixes
# (above), those in the minimal agent's own parts (the edit preview's bounded diff, the cut
# echoes, writes in place, the streamed JSON body, escaped JSON lines, the trusted PATH, the
# rules directory's cap): 7.6 KB.
# Raised to 3.103 MB on 2026-12-07 (a third session that day), at 3,101,936 B: of the same
# reviews' fixes (above), those in the minimal agent's own parts (the interleaved reply's
# marks, their save and wire, the config file's checks, the rules' count of XML calls, the
# checkpoint-free parts of the loop's changes): 12.1 KB.
# Raised to 3.111 MB on 2026-12-07 (a fourth session that day), at 3,110,336 B: of the same
# reviews' fixes (above), those in the minimal agent's own parts (the SEARCH matching, the
# fences, the read counts, `-o`, the cut streams, the URLs, the resume save, the cancel check,
# the native reminder, the options of a question): 8.1 KB.
# Raised to 3.112 MB the same session, at 3,111,600 B: of the diff review's fixes (above), those
# in the minimal agent's own parts: 1.3 KB.
# Raised to 3.129 MB on 2026-12-07 (a fifth session that day), at 3,128,256 B: of the same
# reviews' fixes (above), those in the minimal agent's own parts (the time zone, the approval
# question, the drain, the calls past 64, -o, the quiet stdin, the CLI's hints, the watcher):
# 17.4 KB.
# Raised to 3.136 MB on 2026-12-07 (a sixth session that day), at 3,135,416 B: of the same
# reviews' fixes (above), those in the minimal agent's own parts (native arguments, the image
# limits, the usage counts, the provider by URL, the replay's exit, the 429 wordings): 7.2 KB.
# Raised to 3.145 MB on 2026-12-07 (a seventh session), at 3,144,568 B: of the same reviews'
# fixes (above), those in the minimal agent's own parts (the edits' stamp, the policy per task,
# the OS name, the SEARCH as written, the resume's saved provider, the config file's readers,
# native replays, the closed command output waited for): 9.1 KB.
line binary "  the same, no larger than today (ceiling 3.145 MB)" "$(mb "$m")" "$(is "$m <= 3145000")" must
if [ $binary_only = 0 ]; then
  # What the minimal agent cannot go below: its search and walk (ripgrep's crates, the regex
  # engine) and serde_json, with std, alone, in the same settings (benches/size_floor.sh).
  f=$(bash benches/size_floor.sh)
  line binary "  floor: ripgrep's crates, regex, serde_json, std alone (no goal)" "$(mb "$f")" info
fi
if [ $readme = 1 ]; then
  {
    echo "$(date -u +%Y-%m-%d), $(rustc --version | cut -d' ' -f1-2), node $(node --version), $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg):"
    echo
    echo '```text'
    cat "$tmp/report"
    echo '```'
  } >"$tmp/block"
  awk -v block="$tmp/block" '
    /<!-- goals.sh end -->/ { while ((getline l < block) > 0) print l; skip = 0 }
    !skip { print }
    /<!-- goals.sh begin -->/ { skip = 1 }
  ' README.md >"$tmp/README.md"
  grep -q '<!-- goals.sh begin -->' README.md || { echo "goals.sh: README.md has no goals.sh markers" >&2; exit 1; }
  cp "$tmp/README.md" README.md
  echo "README.md: goals block rewritten"
fi
exit $failed
