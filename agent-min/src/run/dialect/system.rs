//! The system prompt as a dialect starts from: Cline's template for the model's family
//! (`prompt/system.rs`) with the declared tools' sections (`tools/registry.rs`) and this
//! machine filled in, and Cline's choice of variant when tool calls are native. It lives here,
//! above both, because the tools' own texts come from `prompt/`.

use crate::run::prompt::system::{Env, Family};

/// Cline's native next-gen texts for several tool calls per reply (`native-next-gen/template.ts`):
/// TOOL USE, RULES and OBJECTIVE, each on and off.
const PARALLEL: [(&str, &str, &str); 3] = [
    (
        "{{parallel_tool_use}}",
        " You may use multiple tools in a single response when the operations are independent (e.g., reading several files, searching in parallel). For dependent operations where one result informs the next, use tools sequentially.",
        "",
    ),
    (
        "{{parallel_rule}}",
        "\n- You may use multiple tools in a single response when the operations are independent (e.g., reading several files, creating independent files). For dependent operations where one result informs the next, use tools sequentially and wait for the user's response.",
        "",
    ),
    (
        "{{parallel_objective}}",
        "as necessary. You may call multiple independent tools in a single response to work efficiently.",
        "one at a time as necessary.",
    ),
];

/// The prompt of `family` with `env` filled in; an XML family's `# Tools` are the sections of
/// the tools declared in `tools/registry.rs`, in order (a native family lists none: its tools
/// travel as definitions).
pub fn render(family: Family, env: &Env<'_>) -> String {
    let mut s = crate::run::prompt::system::template(family)
        .replace("{{tools}}", &crate::run::tools::registry::prompt_sections(family))
        .replace("{{cwd}}", env.cwd)
        .replace("{{os}}", env.os)
        .replace("{{ide}}", env.ide)
        .replace("{{shell}}", env.shell)
        .replace("{{home}}", env.home);
    for (place, on, off) in PARALLEL {
        s = s.replace(place, if env.parallel { on } else { off });
    }
    s
}

/// `prompt` as Cline builds it with its focus chain off (`focusChainSettings.enabled`): no
/// UPDATING TASK PROGRESS section, no `task_progress` parameter, usage or example (Cline's
/// placeholders for them are whole lines, gone when the setting is off), no line naming it.
pub fn without_task_progress(prompt: &str) -> String {
    const SEP: &str = "\n\n====\n\n";
    let sections = prompt.split(SEP).filter(|s| !s.starts_with("UPDATING TASK PROGRESS\n"));
    let mut out = Vec::new();
    for section in sections {
        let mut lines = Vec::new();
        let mut in_block = false;
        for line in section.split('\n') {
            if in_block {
                in_block = !line.contains("</task_progress>");
            } else if line.contains("<task_progress>") && !line.contains("</task_progress>") {
                in_block = true;
            } else if !line.contains("task_progress") {
                lines.push(line);
            }
        }
        out.push(lines.join("\n"));
    }
    out.join(SEP)
}

/// `prompt` as Cline builds it in yolo mode (`--yolo`): the generic `execute_command` section
/// (which every XML family uses) has its optional `timeout` parameter, which Cline's spec offers
/// only when `yoloModeToggled` (`tools/execute_command.ts`: its instruction, and `30` as its
/// usage). A prompt without that section (a native variant's) is left as it is.
pub fn with_command_timeout(prompt: &str) -> String {
    const APPROVAL: &str = "\n- requires_approval: (required) ";
    const USAGE: &str = "<requires_approval>true or false</requires_approval>\n";
    let Some(section) = prompt.find("## execute_command\n") else { return prompt.to_string() };
    let end = prompt[section..].find("</execute_command>").map_or(prompt.len(), |e| section + e);
    let body = &prompt[section..end];
    let (Some(approval), Some(usage)) = (body.find(APPROVAL), body.find(USAGE)) else { return prompt.to_string() };
    let line_end = body[approval + 1..].find('\n').map_or(body.len(), |e| approval + 1 + e);
    let mut out = String::with_capacity(prompt.len() + 200);
    out.push_str(&prompt[..section + line_end]);
    out.push_str("\n- timeout: (optional) Integer representing the timeout in seconds for how long to run the terminal command, before timing out and continuing the task.");
    out.push_str(&body[line_end..usage + USAGE.len()]);
    out.push_str("<timeout>30</timeout>\n");
    out.push_str(&prompt[section + usage + USAGE.len()..]);
    out
}

/// Cline's texts that say `ask_followup_question` may be used, and what each is in yolo mode
/// (`context.yoloModeToggled`: `components/capabilities.ts`, `rules.ts`, `objective.ts`,
/// `variants/next-gen/template.ts`, `gpt-5/template.ts`, `native-gpt-5-1/overrides.ts`).
const ASKING: [(&str, &str); 7] = [
    (", and ask follow-up questions. These tools", ". These tools"),
    (" and instead, ask the user to provide the missing parameters using the ask_followup_question tool. DO NOT", ". DO NOT"),
    (
        "You are only allowed to ask the user questions using the ask_followup_question tool. Use this tool only when you need additional details to complete a task, and be sure to use a clear and concise question that will help you move forward with the task. However if you can use the available tools to avoid having to ask the user questions, you should do so.",
        "Use your available tools and apply your best judgment to accomplish the task without asking the user any followup questions, making reasonable assumptions from the provided context.",
    ),
    ("\n- When the user is being vague, you should be proactive about asking clarifying questions using the ask_followup_question tool to ensure you understand their request. However, if you can infer the user's intent based on the context and available tools, you should proceed without asking unnecessary questions", ""),
    (" If output is still unavailable after reasonable checks and you need it to continue, use the ask_followup_question tool to request the user to copy and paste it back to you.", ""),
    (" If you absolutely need to see the actual terminal output, use the ask_followup_question tool to request the user to copy and paste it back to you.", ""),
    (
        "**ask clarifying questions** using ask_followup_question rather than making assumptions",
        "state your assumptions clearly before proceeding",
    ),
];

/// `prompt` as Cline builds it in yolo mode (`--yolo`: nobody answers a question, and
/// `ask_followup_question` answers that no one will): the command's `timeout`
/// ([`with_command_timeout`]), no `ask_followup_question` section (its spec's
/// `contextRequirements`), and Cline's yolo texts where its others invite questions.
pub fn in_yolo_mode(prompt: &str) -> String {
    let mut s = with_command_timeout(prompt);
    for (asking, yolo) in ASKING {
        s = s.replace(asking, yolo);
    }
    const SECTION: &str = "## ask_followup_question\n";
    const END: &str = "</ask_followup_question>";
    if let Some(at) = s.find(SECTION) {
        if let Some(end) = s[at..].find(END).map(|e| at + e + END.len()) {
            let end = if s[end..].starts_with("\n\n") { end + 2 } else { end };
            s.replace_range(at..end, "");
        }
    }
    s
}

/// The variant a run's prompt is: Cline's native one when calls are `native` and one matches,
/// else the XML family's, as Cline's matchers choose it with its `nativeToolCallEnabled`
/// setting on or off (`native_setting`; on whenever calls are native).
pub(crate) fn family(native: bool, native_setting: bool, provider: &str, model: &str) -> Family {
    let found = if native { crate::run::native::mode::native_family(provider, model) } else { None };
    found.unwrap_or_else(|| crate::run::prompt::system::family(provider, model, native || native_setting))
}

/// The system prompt of `family` for this machine and workspace `cwd`; `parallel`: several
/// tool calls per reply.
pub(crate) fn system(family: Family, cwd: &str, parallel: bool) -> String {
    let release = rustix::system::uname().release().to_string_lossy().into_owned();
    let os = os_name(std::env::consts::OS, &release);
    let home = std::env::var("HOME").unwrap_or_default();
    render(family, &Env { cwd, os: &os, ide: "agent-min (terminal)", shell: "/bin/sh", home: &home, parallel })
}

/// Cline's `osName()` (npm `os-name` 6.1.0, with its lock's `macos-release` 3.4.0) for Rust's `platform` and the
/// kernel's `release`: `Linux 6.18` (the release's first two numbers, or all of it if it does
/// not start with them), `macOS Sequoia` (its Darwin version's name; `OS X …` before Darwin
/// 16), the platform itself elsewhere.
fn os_name(platform: &str, release: &str) -> String {
    match platform {
        "linux" => {
            let major_minor = || {
                let (major, rest) = release.split_at(release.find(|c: char| !c.is_ascii_digit())?);
                let minor = rest.strip_prefix('.')?;
                let digits = minor.find(|c: char| !c.is_ascii_digit()).unwrap_or(minor.len());
                (!major.is_empty() && digits > 0).then(|| format!("{major}.{}", &minor[..digits]))
            };
            let id = major_minor().unwrap_or_else(|| release.to_string());
            if id.is_empty() {
                "Linux".to_string()
            } else {
                format!("Linux {id}")
            }
        }
        "macos" => {
            // `Number(release.split('.')[0])`: not a number is NaN, which is no version.
            let darwin: Option<u32> = release.split('.').next().and_then(|n| n.parse().ok());
            let prefix = if darwin.is_some_and(|d| d > 15) { "macOS" } else { "OS X" };
            const NAMES: [&str; 21] = [
                "Puma",
                "Jaguar",
                "Panther",
                "Tiger",
                "Leopard",
                "Snow Leopard",
                "Lion",
                "Mountain Lion",
                "Mavericks",
                "Yosemite",
                "El Capitan",
                "Sierra",
                "High Sierra",
                "Mojave",
                "Catalina",
                "Big Sur",
                "Monterey",
                "Ventura",
                "Sonoma",
                "Sequoia",
                "Tahoe",
            ];
            // Darwin 5 is Puma, … 25 Tahoe; a later one has no name there (`Unknown`).
            let name = darwin.and_then(|d| d.checked_sub(5)).and_then(|i| NAMES.get(i as usize));
            match name {
                Some(name) => format!("{prefix} {name}"),
                None => prefix.to_string(),
            }
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Operating System:` is what Cline's `os-name` says (it said `Linux` where Cline says
    /// `Linux 6.18`, and `macOS` for `macOS Sequoia`).
    #[test]
    fn the_operating_system_is_named_as_clines_os_name_names_it() {
        assert_eq!(os_name("linux", "6.18.44-fc-v1300"), "Linux 6.18");
        assert_eq!(os_name("linux", "5.15.0-91-generic"), "Linux 5.15");
        assert_eq!(os_name("linux", "6.8"), "Linux 6.8");
        assert_eq!(os_name("linux", "weird"), "Linux weird", "the regular expression leaves it whole");
        assert_eq!(os_name("linux", ""), "Linux");
        assert_eq!(os_name("macos", "24.1.0"), "macOS Sequoia");
        assert_eq!(os_name("macos", "25.0.0"), "macOS Tahoe");
        assert_eq!(os_name("macos", "26.0.0"), "macOS", "Unknown: the prefix alone");
        assert_eq!(os_name("macos", "27.0.0"), "macOS", "macos-release 3.4.0 names none after Tahoe");
        assert_eq!(os_name("macos", "15.6.0"), "OS X El Capitan");
        assert_eq!(os_name("freebsd", "14.1-RELEASE"), "freebsd");
    }

    #[test]
    fn yolo_offers_execute_commands_timeout_as_cline_does() {
        const LINE: &str = "\n- timeout: (optional) Integer representing the timeout in seconds for how long to run the terminal command, before timing out and continuing the task.";
        let env = Env { cwd: "/w", os: "Linux", ide: "i", shell: "/bin/sh", home: "/h", parallel: true };
        for f in [Family::Generic, Family::NextGen, Family::Gpt5] {
            let prompt = render(f, &env);
            let yolo = with_command_timeout(&prompt);
            // Cline's PromptBuilder: the parameter after requires_approval, and its usage line.
            let section = &yolo[yolo.find("## execute_command\n").unwrap()..];
            let section = &section[..section.find("</execute_command>").unwrap()];
            assert!(section.contains(&format!("non-destructive operations.{LINE}\nUsage:\n")), "{f:?}: {section}");
            assert!(section.ends_with("</requires_approval>\n<timeout>30</timeout>\n"), "{f:?}: {section}");
            // Nothing else changes.
            assert_eq!(yolo.replacen(LINE, "", 1).replacen("<timeout>30</timeout>\n", "", 1), prompt, "{f:?}");
        }
        // A native variant has no such section: unchanged.
        let native = render(Family::NativeNextGen, &env);
        assert_eq!(with_command_timeout(&native), native);
    }

    /// Cline's yolo texts (`yoloModeToggled`): no variant tells the model to ask the person, nor
    /// lists `ask_followup_question`; every text of [`ASKING`] is one some variant has.
    #[test]
    fn yolo_prompts_never_invite_a_question_as_clines() {
        let env = Env { cwd: "/w", os: "Linux", ide: "i", shell: "/bin/sh", home: "/h", parallel: true };
        let all = [
            Family::Generic,
            Family::NextGen,
            Family::Gpt5,
            Family::NativeNextGen,
            Family::NativeGpt5,
            Family::NativeGpt51,
        ];
        let prompts: Vec<String> = all.iter().map(|&f| render(f, &env)).collect();
        for (asking, _) in ASKING {
            assert!(prompts.iter().any(|p| p.contains(asking)), "no variant has {asking:?}");
        }
        for (f, prompt) in all.iter().zip(&prompts) {
            let yolo = in_yolo_mode(prompt);
            assert!(!yolo.contains("ask_followup_question") && !yolo.contains("follow-up questions"), "{f:?}: {yolo}");
            assert!(yolo.contains("\n\n## attempt_completion\n") || !prompt.contains("## attempt_completion"), "{f:?}");
        }
        let generic = in_yolo_mode(&prompts[0]);
        assert!(generic.contains("read and edit files. These tools help you"), "{generic}");
        assert!(generic.contains("(not even with fillers for the missing params). DO NOT ask for more information"));
        assert!(generic.contains("- Use your available tools and apply your best judgment to accomplish the task without asking the user any followup questions, making reasonable assumptions from the provided context. For example,"));
        assert!(generic.contains("<timeout>30</timeout>"), "the command's timeout too");
    }

    #[test]
    fn native_variants_follow_clines_matchers() {
        let n = |p, m| crate::run::native::mode::native_family(p, m);
        assert_eq!(n("anthropic", "claude-sonnet-4-5"), Some(Family::NativeNextGen));
        assert_eq!(n("openai", "anthropic/claude-opus-4.1"), Some(Family::NativeNextGen));
        assert_eq!(n("openai", "gemini-2.5-pro"), Some(Family::NativeNextGen));
        assert_eq!(n("openai", "gpt-5"), Some(Family::NativeGpt5));
        assert_eq!(n("openai", "gpt-5-codex"), Some(Family::NativeGpt5));
        assert_eq!(n("openai", "openai/gpt-oss-120b"), Some(Family::NativeGpt5));
        assert_eq!(n("openai", "gpt-5.1"), Some(Family::NativeGpt51));
        assert_eq!(n("openai", "gpt-5-1"), Some(Family::NativeGpt51));
        assert_eq!(n("openai", "gpt-5.2-codex"), Some(Family::NativeGpt51));
        // gpt-5-chat: no native variant matches (Cline falls back to generic).
        assert_eq!(n("openai", "gpt-5-chat-latest"), None);
        assert_eq!(n("openai", "gpt-4o"), None);
        assert_eq!(n("anthropic", "claude-3-7-sonnet-latest"), None);
        assert_eq!(n("ollama", "gpt-oss:20b"), None);
        assert_eq!(family(false, false, "anthropic", "claude-sonnet-4-5"), Family::NextGen);
        assert_eq!(family(true, true, "anthropic", "claude-sonnet-4-5"), Family::NativeNextGen);
        assert_eq!(family(true, true, "openai", "gpt-4o"), Family::Generic);
        // Native calls forced on a model no native variant takes: the XML prompt Cline's
        // matchers give with native calls on, its TOOL USE swapped.
        assert_eq!(family(true, true, "openai", "gpt-5-chat-latest"), Family::Generic);
    }

    /// The four models of the default path: the variant `--tool-calls auto` gives each, and its
    /// size against Cline's snapshot (printed with `--nocapture`).
    #[test]
    fn the_default_path_variants() {
        use crate::run::llm::providers::Provider;
        use crate::run::native::ToolCalls;
        for (provider, p, model, want, cline) in [
            (Provider::Anthropic, "anthropic", "claude-sonnet-4-5", Family::NativeNextGen, 11156),
            (Provider::Anthropic, "anthropic", "claude-3-7-sonnet", Family::Generic, 52108),
            (Provider::OpenAi, "openai", "gpt-5", Family::NativeGpt5, 11219),
            (Provider::OpenAi, "openai", "gpt-5.1", Family::NativeGpt51, 17036),
            (Provider::OpenAi, "openai", "gpt-4o", Family::Generic, 52108),
            (Provider::OpenAi, "openai", "gpt-5-chat-latest", Family::Generic, 52108),
        ] {
            let native = ToolCalls::Auto.native(provider, model);
            let dialect = crate::run::dialect::of_run(native, true, true);
            let f = dialect.family(p, model);
            assert_eq!(f, want, "{model}");
            let env = Env {
                cwd: "/test/project",
                os: "macOS",
                ide: "TestIde",
                shell: "/bin/zsh",
                home: "/Users/tester",
                parallel: true,
            };
            let n = render(f, &env).len();
            println!("{model}: {} dialect, {f:?}, {n} bytes (Cline's snapshot {cline})", dialect.name());
        }
    }
}
