// Driven by request-vs-cline.sh: node request-vs-cline.js WORK AGENT_MIN_BIN
"use strict"
const fs = require("fs")
const path = require("path")
const http = require("http")
const os = require("os")
const { spawn, execSync } = require("child_process")
const Module = require("module")

const [work, bin] = process.argv.slice(2)
process.env.TZ = "UTC" // agent-min reports UTC; Cline the machine's zone: compare in the same one

// ---- Cline's provider code, transpiled, with the few modules that need VS Code stubbed ----
const ts = require(`${work}/node_modules/typescript`)
;(function transpile(dir) {
	for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
		const p = path.join(dir, e.name)
		if (e.isDirectory()) transpile(p)
		else if (p.endsWith(".ts")) {
			const out = ts.transpileModule(fs.readFileSync(p, "utf8"), {
				compilerOptions: {
					module: ts.ModuleKind.CommonJS,
					target: ts.ScriptTarget.ES2022,
					experimentalDecorators: true,
					esModuleInterop: true,
				},
			})
			fs.writeFileSync(p.replace(/\.ts$/, ".js"), out.outputText)
		}
	}
})(`${work}/src`)
const stubDir = `${work}/stubs`
fs.mkdirSync(stubDir, { recursive: true })
const stubs = {
	// buildExternalBasicHeaders: extension/host identification headers, not part of the body.
	"@/services/EnvUtils": "exports.buildExternalBasicHeaders = () => ({})",
	// Cline's proxy-aware fetch is Node's fetch without a proxy configured.
	"@/shared/net":
		'exports.fetch = globalThis.fetch; exports.createOpenAIClient = (o) => new (require("openai").default)({ ...o, fetch: globalThis.fetch })',
	"@/shared/services/Logger": "const n = () => {}; exports.Logger = { log: n, info: n, warn: n, error: n, debug: n, trace: n }",
	"@azure/identity": "exports.DefaultAzureCredential = class {}; exports.getBearerTokenProvider = () => undefined",
	"./proto/cline/models": "exports.ApiFormat = new Proxy({}, { get: (_, k) => k })",
	"@/shared/proto/cline/models": "exports.ApiFormat = new Proxy({}, { get: (_, k) => k })",
	// Cline's feature flags as shipped: the Responses websocket mode is off.
	"@/services/feature-flags": "exports.featureFlagsService = { getBooleanFlagEnabled: () => false }",
	// The websocket client, unused over HTTP.
	undici: "exports.WebSocket = class { static OPEN = 1 }; exports.MessageEvent = class {}",
}
const stubPath = {}
for (const [name, src] of Object.entries(stubs)) {
	stubPath[name] = `${stubDir}/${name.replace(/[^a-z]/gi, "_")}.js`
	fs.writeFileSync(stubPath[name], src)
}
const resolve0 = Module._resolveFilename
Module._resolveFilename = function (req, parent, ...rest) {
	if (stubPath[req]) req = stubPath[req]
	else if (req.startsWith("@/")) req = `${work}/src/${req.slice(2)}`
	else if (req.startsWith("@shared/")) req = `${work}/src/shared/${req.slice(8)}`
	else if (req.startsWith("@utils/")) req = `${work}/src/utils/${req.slice(7)}`
	return resolve0.call(this, req, parent, ...rest)
}
const { AnthropicHandler } = require(`${work}/src/core/api/providers/anthropic.js`)
const { OpenAiHandler } = require(`${work}/src/core/api/providers/openai.js`)
const { OpenAiNativeHandler } = require(`${work}/src/core/api/providers/openai-native.js`)
const { FocusChainPrompts } = require(`${work}/src/core/task/focus-chain/prompts.js`)

// ---- One capturing server for both sides ----
const captured = []
const server = http.createServer((req, res) => {
	let body = ""
	req.on("data", (c) => (body += c))
	req.on("end", () => {
		if (req.method !== "POST" || !/^\/v1\/(messages|chat\/completions|responses)$/.test(req.url)) {
			// agent-min asks a 127.0.0.1 OpenAI-compatible server for its context window (llm/server_window.rs).
			res.writeHead(404)
			return res.end()
		}
		captured.push({ path: req.url, body: JSON.parse(body) })
		res.writeHead(400, { "content-type": "application/json" })
		res.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "captured" } }))
	})
})

function takeOne() {
	if (captured.length !== 1) throw new Error(`expected one request, got ${captured.length}`)
	return captured.pop().body
}

// ---- The workspace and task both sides get ----
const ws = fs.mkdtempSync(path.join(os.tmpdir(), "req-vs-cline-"))
fs.writeFileSync(`${ws}/README.md`, "hello\n")
fs.mkdirSync(`${ws}/src`)
fs.writeFileSync(`${ws}/src/main.rs`, "fn main() {}\n")
const state = fs.mkdtempSync(path.join(os.tmpdir(), "req-vs-cline-state-"))
const TASK = "Add a line to README.md saying what this project is."

function runAgentMin(provider, model, base) {
	return new Promise((done) => {
		const env = {
			...process.env,
			XDG_STATE_HOME: state,
			XDG_CONFIG_HOME: `${state}/config`,
			HOME: state,
			NO_COLOR: "1",
			ANTHROPIC_API_KEY: "sk-test",
			OPENAI_API_KEY: "sk-test",
		}
		delete env.OPENAI_BASE_URL
		delete env.ANTHROPIC_BASE_URL
		const args = ["run", "--provider", provider, "--model", model, "--base-url", base, "--yolo", "--no-save"]
		args.push("--no-checkpoints", "--no-hooks", "--retry-delay", "0", "--cwd", ws, TASK)
		const child = spawn(bin, args, { env, cwd: ws, stdio: ["ignore", "ignore", "ignore"] })
		const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
		child.on("exit", () => {
			clearTimeout(timer)
			done()
		})
	})
}

async function runCline(handler, system, messages, tools) {
	try {
		for await (const _ of handler.createMessage(system, messages, tools)) {
		}
	} catch (_) {} // the server's 400
}

// ---- Cline's first user message (task/index.ts: startTask, then getEnvironmentDetails) ----
const CLI_TOOLS = ["gh", "git", "docker", "podman", "kubectl", "aws", "gcloud", "az", "terraform", "pulumi", "npm", "yarn", "pnpm", "pip", "cargo", "go", "curl", "jq", "make", "cmake", "python", "node", "psql", "mysql", "redis-cli", "sqlite3", "mongosh", "code", "grep", "sed", "awk", "brew", "apt", "yum", "gradle", "mvn", "bundle", "dotnet", "helm", "ansible", "wget"] // core/task/utils.ts CLI_TOOLS
function detectAvailableCliTools() {
	// core/task/utils.ts detectAvailableCliTools
	return CLI_TOOLS.filter((c) => {
		try {
			execSync(`which ${c}`, { stdio: "ignore", timeout: 1000 })
			return true
		} catch (_) {
			return false
		}
	})
}
function formatFilesList(abs, files) {
	// core/prompts/responses.ts formatFilesList (no .clineignore here)
	const sorted = files
		.map((f) => (f.endsWith("/") ? path.relative(abs, f) + "/" : path.relative(abs, f)))
		.sort((a, b) => {
			const ap = a.split("/")
			const bp = b.split("/")
			for (let i = 0; i < Math.min(ap.length, bp.length); i++) {
				if (ap[i] !== bp[i]) {
					if (i + 1 === ap.length && i + 1 < bp.length) return -1
					if (i + 1 === bp.length && i + 1 < ap.length) return 1
					return ap[i].localeCompare(bp[i], undefined, { numeric: true, sensitivity: "base" })
				}
			}
			return ap.length - bp.length
		})
	return sorted.length === 0 ? "No files found." : sorted.join("\n")
}
function clineEnvironmentDetails(now, nextGen, contextWindow) {
	// core/task/index.ts getEnvironmentDetails(includeFileDetails = true), first request: no
	// terminals, no recently modified files (the tracker has seen no file yet), no usage yet.
	const platform = "Visual Studio Code" // hosts/vscode/hostbridge/env/getHostVersion.ts: vscode.env.appName
	let details = ""
	details += `\n\n# ${platform} Visible Files`
	details += "\n(No visible files)"
	details += `\n\n# ${platform} Open Tabs`
	details += "\n(No open tabs)"
	const formatter = new Intl.DateTimeFormat(undefined, {
		year: "numeric",
		month: "numeric",
		day: "numeric",
		hour: "numeric",
		minute: "numeric",
		second: "numeric",
		hour12: true,
	})
	const timeZone = formatter.resolvedOptions().timeZone
	const timeZoneOffset = -now.getTimezoneOffset() / 60
	const timeZoneOffsetStr = `${timeZoneOffset >= 0 ? "+" : ""}${timeZoneOffset}:00`
	details += `\n\n# Current Time\n${formatter.format(now)} (${timeZone}, UTC${timeZoneOffsetStr})`
	details += `\n\n# Current Working Directory (${ws}) Files\n`
	details += formatFilesList(ws, [`${ws}/README.md`, `${ws}/src/`, `${ws}/src/main.rs`])
	const tools = detectAvailableCliTools()
	if (tools.length > 0) {
		details += `\n\n# Detected CLI Tools\nThese are some of the tools on the user's machine, and may be useful if needed to accomplish the task: ${tools.join(", ")}. This list is not exhaustive, and other tools may be available.`
	}
	const lastApiReqTotalTokens = 0
	const usagePercentage = Math.round((lastApiReqTotalTokens / contextWindow) * 100)
	let show = true
	if (nextGen) show = lastApiReqTotalTokens / contextWindow >= 0.75 - 0.15
	if (show) {
		details += "\n\n# Context Window Usage"
		details += `\n${lastApiReqTotalTokens.toLocaleString()} / ${(contextWindow / 1000).toLocaleString()}K tokens used (${usagePercentage}%)`
	}
	details += "\n\n# Current Mode"
	details += "\nACT MODE"
	return `<environment_details>\n${details.trim()}\n</environment_details>`
}

// ---- Helpers to show and compare ----
const snap = (n) => fs.readFileSync(`${work}/snap/${n}.snap`, "utf8")
function openAIToolToAnthropic(t) {
	// core/prompts/system-prompt/spec.ts:319 openAIToolToAnthropic
	const f = t.function
	return {
		name: f.name,
		description: f.description || "",
		input_schema: { type: "object", properties: f.parameters?.properties || {}, required: f.parameters?.required || [] },
	}
}
const sections = (s) => s.split("\n\n====\n\n").map((x) => x.split("\n")[0])
const short = (s) => {
	const first = s.split("\n")[0]
	return `${JSON.stringify(first.length > 40 ? first.slice(0, 40) + "…" : first)} (${Buffer.byteLength(s)} B)`
}
// The body with long texts shortened: what the shape comparison looks at.
function shape(v) {
	if (typeof v === "string") return v.length > 60 ? short(v) : v
	if (Array.isArray(v)) return v.map(shape)
	if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)]))
	return v
}
const J = (v) => (v === undefined ? "—" : JSON.stringify(v))
const pad = (s, n) => (s.length >= n ? s : s + " ".repeat(n - s.length))

const models = [
	{ label: "claude-sonnet-4-5", provider: "anthropic", ours: "claude-sonnet-4-5", cline: "claude-sonnet-4-5-20250929", variant: "native-next-gen", snap: "cline_claude_4_5_sonnet-no-browser", tools: "cline_native_next_gen.tools", nextGen: true, window: 200000 },
	{ label: "claude-3-7-sonnet", provider: "anthropic", ours: "claude-3-7-sonnet", cline: "claude-3-7-sonnet-20250219", variant: "generic (XML)", snap: "openai_gpt_3-no-browser", tools: null, nextGen: false, window: 200000 },
	{ label: "gpt-5", provider: "openai", ours: "gpt-5", cline: "gpt-5", variant: "native-gpt-5", snap: "openai_gpt_5_codex-no-browser", tools: "openai_gpt_5_native.tools", nextGen: true, window: 128000 },
	{ label: "gpt-4o", provider: "openai", ours: "gpt-4o", cline: "gpt-4o", variant: "generic (XML)", snap: "openai_gpt_3-no-browser", tools: null, nextGen: false, window: 128000 },
	// OpenAI's own API: Cline's OpenAiNativeHandler (its table's ids: gpt-5 is gpt-5-2025-08-07).
	{ label: "gpt-5.5 (OpenAI, Responses API)", provider: "openai-native", ours: "gpt-5.5", cline: "gpt-5.5", variant: "native-gpt-5-1", snap: "openai_gpt_5_1-no-browser", tools: "openai_gpt_5_1_native.tools", nextGen: true, window: 1050000 },
	{ label: "gpt-5 (OpenAI, chat completions)", provider: "openai-native", ours: "gpt-5", cline: "gpt-5-2025-08-07", variant: "native-gpt-5", snap: "openai_gpt_5_codex-no-browser", tools: "openai_gpt_5_native.tools", nextGen: true, window: 272000 },
]

// What docs/agent.md lists as a difference from Cline, by what each difference looks like.
const KNOWN = {
	model: "docs/agent.md, Request settings: a model is sent as named (Cline's getModel sends its default for a name not in its table, claude-sonnet-5)",
	editor: "docs/agent.md, Environment details: the editor's `# Visible Files` / `# Open Tabs` are not sent (a terminal has none)",
	system: "docs/agent.md, Native tool calls / the XML prompts: Cline's snapshot section by section, less what agent-min does not have",
	lacks: "docs/agent.md, Native tool calls: tools agent-min does not have (browser, web, MCP without servers, plan mode, subagents...); Cline's snapshot fixture turns them all on",
}

async function main() {
	await new Promise((r) => server.listen(0, "127.0.0.1", r))
	const base = `http://127.0.0.1:${server.address().port}`
	// Cline's OpenAiNativeHandler makes its client without a base URL: the SDK reads this.
	process.env.OPENAI_BASE_URL = `${base}/v1`
	let unexpected = 0
	for (const m of models) {
		await runAgentMin(m.provider, m.ours, m.provider === "anthropic" ? base : `${base}/v1`)
		const ours = takeOne()
		// The Responses API: the system prompt is `instructions`, the messages `input`.
		const msgsOf = (b) => (b.input ? b.input : m.provider === "anthropic" ? b.messages : b.messages.slice(1))
		const ourMsgs = msgsOf(ours)
		const ourSystem = ours.input ? ours.instructions : m.provider === "anthropic" ? ours.system[0].text : ours.messages[0].content
		const ourEnv = ourMsgs[0].content.find((b) => b.text?.startsWith("<environment_details>"))?.text ?? ""
		const timeLine = ourEnv.split("\n").find((l) => /^\d+\/\d+\/\d+, /.test(l)) ?? ""
		const now = new Date(timeLine.replace(/ \(.*\)$/, "") + " UTC")
		const env = clineEnvironmentDetails(isNaN(now) ? new Date() : now, m.nextGen, m.window)
		// loadContext on the first request (apiRequestCount 1, no list): the focus chain's reminder.
		const reminder = { type: "text", text: FocusChainPrompts.recommended }
		const messages = [{ role: "user", content: [{ type: "text", text: `<task>\n${TASK}\n</task>` }, reminder, { type: "text", text: env }] }]
		const system = snap(m.snap)
		let tools
		if (m.tools) {
			const t = JSON.parse(snap(m.tools))
			tools = m.provider === "anthropic" ? t.map(openAIToolToAnthropic) : t
		}
		const handler =
			m.provider === "anthropic"
				? new AnthropicHandler({ apiKey: "sk-test", anthropicBaseUrl: base, apiModelId: m.cline })
				: m.provider === "openai-native"
					? new OpenAiNativeHandler({ openAiNativeApiKey: "sk-test", apiModelId: m.cline })
					: new OpenAiHandler({ openAiApiKey: "sk-test", openAiBaseUrl: `${base}/v1`, openAiModelId: m.cline })
		await runCline(handler, system, messages, tools)
		const theirs = takeOne()
		const theirMsgs = msgsOf(theirs)
		const diffs = [] // [what, known-key or null]

		const clineHandler = { anthropic: "AnthropicHandler", openai: "OpenAiHandler", "openai-native": "OpenAiNativeHandler" }[m.provider]
		console.log(`\n======== ${m.label} (${m.provider}; Cline: ${clineHandler}, model "${m.cline}") ========`)
		console.log(`-- settings (top-level fields)\n${pad("field", 22)} ${pad("agent-min", 34)} Cline`)
		const keys = [...new Set([...Object.keys(ours), ...Object.keys(theirs)])].filter((k) => !["messages", "system", "tools", "input", "instructions"].includes(k))
		for (const k of keys) {
			const same = J(ours[k]) === J(theirs[k])
			console.log(`${pad(k, 22)} ${pad(J(ours[k]), 34)} ${J(theirs[k])}${same ? "" : "   <- differs"}`)
			if (!same) diffs.push([`${k}: ${J(ours[k])} vs ${J(theirs[k])}`, k === "model" ? "model" : null])
		}
		// System prompt: how it is sent, then its sections.
		const sysShape = (b) => (b.input ? shape({ instructions: b.instructions }) : m.provider === "anthropic" ? shape(b.system) : shape(b.messages[0]))
		console.log(`-- system prompt as sent\n   agent-min: ${J(sysShape(ours))}\n   Cline:     ${J(sysShape(theirs))}`)
		const blank = (v) => (typeof v === "string" ? "" : Array.isArray(v) ? v.map(blank) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, blank(x)])) : v)
		if (J(blank(sysShape(ours))) !== J(blank(sysShape(theirs))) || J(sysShape(ours)).includes("role") !== J(sysShape(theirs)).includes("role")) diffs.push(["how the system prompt is sent", null])
		if (m.provider !== "anthropic" && !ours.input && ours.messages[0].role !== theirs.messages[0].role) diffs.push([`system role: ${ours.messages[0].role} vs ${theirs.messages[0].role}`, null])
		const so = sections(ourSystem)
		const sc = sections(system)
		console.log(`-- system prompt sections (variant ${m.variant}; Cline's snapshot ${m.snap}.snap)\n   agent-min: ${so.join(" | ")}\n   Cline:     ${sc.join(" | ")}`)
		if (so.join() !== sc.join() || ourSystem !== system) diffs.push([`system prompt text: ${Buffer.byteLength(ourSystem)} B vs ${Buffer.byteLength(system)} B; sections only in Cline's: ${sc.filter((s) => !so.includes(s)).join(", ") || "none"}; only here: ${so.filter((s) => !sc.includes(s)).join(", ") || "none"}`, "system"])
		// Messages: roles, block types, cache marks.
		console.log(`-- messages\n   agent-min: ${J(shape(ourMsgs))}\n   Cline:     ${J(shape(theirMsgs))}`)
		const blocks = (ms) => ms.map((x) => `${x.role}[${(Array.isArray(x.content) ? x.content : [x.content]).map((b) => (typeof b === "string" ? "string" : b.type + (b.cache_control ? "+cache" : ""))).join(",")}]`).join(" ")
		if (blocks(ourMsgs) !== blocks(theirMsgs)) diffs.push([`message blocks: ${blocks(ourMsgs)} vs ${blocks(theirMsgs)}`, null])
		const ourTask = ourMsgs[0].content[0]?.text
		if (ourTask !== theirMsgs[0].content[0].text) diffs.push([`task block: ${J(ourTask)} vs ${J(theirMsgs[0].content[0].text)}`, null])
		const ourReminder = ourMsgs[0].content[1]?.text
		if (ourReminder !== theirMsgs[0].content[1].text) diffs.push([`focus chain reminder block: ${J(ourReminder)} vs ${J(theirMsgs[0].content[1].text)}`, null])
		// Environment details, line by line.
		const theirEnv = theirMsgs[0].content[theirMsgs[0].content.length - 1].text
		console.log(`-- environment details\n   agent-min:\n${ourEnv.replace(/^/gm, "      ")}\n   Cline:\n${theirEnv.replace(/^/gm, "      ")}`)
		const editorFree = theirEnv.replace(/# Visual Studio Code Visible Files\n\(No visible files\)\n\n# Visual Studio Code Open Tabs\n\(No open tabs\)\n\n/, "")
		if (editorFree !== theirEnv) diffs.push(["environment details: Cline's `# Visual Studio Code Visible Files` / `Open Tabs` sections", "editor"])
		if (ourEnv !== editorFree) diffs.push(["environment details differ beyond the editor sections", null])
		// Tools.
		const names = (t) => (t || []).map((x) => x.name ?? x.function.name)
		console.log(`-- tools\n   agent-min: ${names(ours.tools).join(", ") || "none"}\n   Cline:     ${names(theirs.tools).join(", ") || "none"}`)
		const ourNames = names(ours.tools)
		const lacking = names(theirs.tools).filter((n) => !ourNames.includes(n))
		if (lacking.length) diffs.push([`Cline's fixture also offers ${lacking.join(", ")}`, "lacks"])
		const extra = ourNames.filter((n) => !names(theirs.tools).includes(n))
		if (extra.length) diffs.push([`tools only here: ${extra.join(", ")}`, null])
		if (names(theirs.tools).filter((n) => ourNames.includes(n)).join() !== ourNames.filter((n) => !extra.includes(n)).join()) diffs.push(["tool order", null])
		const ourTools = ours.tools || []
		const theirTools = theirs.tools || []
		const fixtureCwd = (t) => JSON.parse(JSON.stringify(t).split(ws).join("/test/project"))
		for (const t0 of theirTools) {
			const t = fixtureCwd(t0)
			const mine0 = ourTools.find((o) => names([o])[0] === names([t])[0])
			const mine = mine0 && fixtureCwd(mine0)
			if (mine && JSON.stringify(t) !== JSON.stringify(mine)) diffs.push([`tool ${names([t])[0]}: ${JSON.stringify(mine)} vs ${JSON.stringify(t)}`, null])
		}
		if (ourTools.length) console.log(`   ${ourTools.length} definitions here, ${theirTools.length} in Cline's fixture; each of ours compared with Cline's of the same name`)
		console.log("-- differences")
		if (diffs.length === 0) console.log("   none")
		for (const [what, known] of diffs) {
			console.log(`   ${known ? "known" : "UNEXPECTED"}: ${what}${known ? `\n      (${KNOWN[known]})` : ""}`)
			if (!known) unexpected++
		}
	}
	server.close()
	fs.rmSync(ws, { recursive: true, force: true })
	fs.rmSync(state, { recursive: true, force: true })
	console.log(`\n${unexpected} unexpected difference(s) over ${models.length} models`)
	process.exit(unexpected === 0 ? 0 : 1)
}
main().catch((e) => {
	console.error(e)
	process.exit(2)
})
