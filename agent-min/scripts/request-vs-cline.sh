#!/usr/bin/env bash
# The FIRST request agent-min sends, next to the one Cline v4.0.10 sends, for the four models of
# the default path: claude-sonnet-4-5 and claude-3-7-sonnet (Anthropic), gpt-5 and gpt-4o
# (OpenAI-compatible chat completions); and at OpenAI's own API (`--provider openai-native`,
# Cline's OpenAiNativeHandler) gpt-5.5 (the Responses API) and gpt-5 (chat completions).
#
#   agent-min/scripts/request-vs-cline.sh CLINE_GIT_DIR [AGENT_MIN_BIN]
#
# Both sides post to one capturing HTTP server on 127.0.0.1 (it records the body and answers 400):
# - agent-min: the built binary, run on a two-file workspace with a one-line task.
# - Cline: its own provider code (core/api/providers/anthropic.ts, openai.ts, openai-native.ts
#   and the transforms
#   they use, transpiled with `typescript`) driving the official SDKs Cline depends on
#   (@anthropic-ai/sdk 0.50.4, openai 6.21.0), given what Cline's Task gives them: its prompt
#   snapshot for the variant (`__tests__/__snapshots__`), its tool definitions (`*.tools.snap`,
#   for Anthropic through `openAIToolToAnthropic`), and the first user message as
#   `task/index.ts` builds it (the `<task>` block, the focus chain's first reminder —
#   `FocusChainPrompts.recommended`, as `loadContext` adds it on the first request with Cline's
#   default settings — then `getEnvironmentDetails` as its own text block, ported line by line
#   below with the same clock, workspace and PATH).
# Prints each body's settings side by side, the message shape, the tools, the system prompt's
# sections, the environment details, and every difference — each one either listed in
# docs/agent.md as a difference from Cline ("known") or not ("UNEXPECTED"). Exits 1 if any is
# unexpected. Needs node (18+), npm (installs the three packages into a temporary directory).
set -euo pipefail
cline=${1:?usage: $0 CLINE_GIT_DIR [AGENT_MIN_BIN]}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${2:-$root/target/debug/agent-min}
[ -x "$bin" ] || { echo "no agent-min binary at $bin (cargo build -p agent-min)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
show() { git --git-dir="$cline" show "v4.0.10:apps/vscode/src/$1"; }
for f in core/api/providers/anthropic.ts core/api/providers/openai.ts core/api/retry.ts \
    core/api/providers/openai-native.ts core/api/transform/openai-response-format.ts \
    utils/model-utils.ts utils/cost.ts shared/services/feature-flags/feature-flags.ts \
    core/api/transform/anthropic-format.ts core/api/transform/openai-format.ts \
    core/api/transform/r1-format.ts core/api/transform/tool-call-processor.ts \
    shared/api.ts shared/utils/reasoning-support.ts shared/messages/content.ts shared/storage/types.ts \
    core/task/focus-chain/prompts.ts; do
    mkdir -p "$work/src/$(dirname "$f")"
    show "$f" >"$work/src/$f"
done
snaps=core/prompts/system-prompt/__tests__/__snapshots__
mkdir -p "$work/snap"
for s in cline_claude_4_5_sonnet-no-browser openai_gpt_5_codex-no-browser openai_gpt_3-no-browser \
    openai_gpt_5_1-no-browser; do
    show "$snaps/$s.snap" >"$work/snap/$s.snap"
done
for s in cline_native_next_gen.tools openai_gpt_5_native.tools openai_gpt_5_1_native.tools; do
    show "$snaps/$s.snap" >"$work/snap/$s.snap"
done
npm install --silent --no-audit --no-fund --prefix "$work" \
    typescript@5.6.3 @anthropic-ai/sdk@0.50.4 openai@6.21.0 >/dev/null
node "$here/request-vs-cline.js" "$work" "$bin"
