//! `<environment_details>` as Cline's `Task.getEnvironmentDetails` builds it, minus what a
//! terminal has no notion of (the editor's visible files and open tabs, its terminals, the
//! multi-root `# Workspace Roots`): `# Recently Modified Files`, `# Current Time`, on the first
//! turn the workspace's files, `# Workspace Configuration` and `# Detected CLI Tools`,
//! `# Context Window Usage` when Cline shows it, `# Current Mode`.

/// Cline's `CLI_TOOLS` (`core/task/utils.ts`), in its order.
pub(crate) const CLI_TOOLS: [&str; 41] = [
    "gh",
    "git",
    "docker",
    "podman",
    "kubectl",
    "aws",
    "gcloud",
    "az",
    "terraform",
    "pulumi",
    "npm",
    "yarn",
    "pnpm",
    "pip",
    "cargo",
    "go",
    "curl",
    "jq",
    "make",
    "cmake",
    "python",
    "node",
    "psql",
    "mysql",
    "redis-cli",
    "sqlite3",
    "mongosh",
    "code",
    "grep",
    "sed",
    "awk",
    "brew",
    "apt",
    "yum",
    "gradle",
    "mvn",
    "bundle",
    "dotnet",
    "helm",
    "ansible",
    "wget",
];

/// The tools of [`CLI_TOOLS`] found as executable files in `PATH`'s directories (what Cline's
/// `which` finds), in Cline's order.
pub(crate) fn detect_cli_tools() -> Vec<&'static str> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<std::path::PathBuf> = std::env::split_paths(&path).filter(|d| d.is_absolute()).collect();
    CLI_TOOLS
        .into_iter()
        .filter(|t| {
            dirs.iter()
                .any(|d| std::fs::metadata(d.join(t)).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
        })
        .collect()
}

/// What one turn's details say.
#[derive(Debug, Default)]
pub(crate) struct Details<'a> {
    /// Seconds since the Unix epoch.
    pub now: u64,
    /// First turn: the workspace root and its file listing (Cline's `formatFilesList` text).
    pub files: Option<(&'a str, &'a str)>,
    /// First turn: Cline's `# Workspace Configuration` ([`workspace_configuration`]).
    pub workspace: Option<String>,
    /// First turn: the CLI tools found on `PATH`.
    pub cli_tools: Option<Vec<&'a str>>,
    /// `(tokens of the last request, context window)` when Cline shows the usage.
    pub context: Option<(u64, u64)>,
    /// Files read or edited that something else changed since (`tools/watched.rs`).
    pub modified: Vec<String>,
}

/// The `<environment_details>` block.
pub(crate) fn render(d: &Details<'_>) -> String {
    let mut s = String::new();
    if !d.modified.is_empty() {
        s.push_str("\n\n# Recently Modified Files\nThese files have been modified since you last accessed them (file was just edited so you may need to re-read it before editing):");
        for f in &d.modified {
            s.push('\n');
            s.push_str(f);
        }
    }
    s.push_str(&format!("\n\n# Current Time\n{}", current_time(d.now)));
    if let Some((root, listing)) = d.files {
        s.push_str(&format!("\n\n# Current Working Directory ({root}) Files\n{listing}"));
    }
    if let Some(workspace) = &d.workspace {
        s.push_str(&format!("\n\n# Workspace Configuration\n{workspace}"));
    }
    if let Some(tools) = d.cli_tools.as_ref().filter(|t| !t.is_empty()) {
        s.push_str(&format!("\n\n# Detected CLI Tools\nThese are some of the tools on the user's machine, and may be useful if needed to accomplish the task: {}. This list is not exhaustive, and other tools may be available.", tools.join(", ")));
    }
    if let Some((tokens, window)) = d.context {
        let pct = if window == 0 { 0 } else { usage_percent(tokens, window) };
        s.push_str(&format!(
            "\n\n# Context Window Usage\n{} / {}K tokens used ({pct}%)",
            locale_number(tokens as f64),
            locale_number(window as f64 / 1000.0)
        ));
    }
    s.push_str("\n\n# Current Mode\nACT MODE");
    format!("<environment_details>\n{}\n</environment_details>", s.trim())
}

/// Cline's `WorkspaceRootManager.buildWorkspacesJson` for the one root, the workspace: its
/// path, its name (`hint`), and when it is in a git repository, its remotes (`name: url`) and
/// `HEAD` commit — `JSON.stringify(…, null, 2)`.
pub(crate) fn workspace_configuration(root: &str, remotes: Vec<String>, head: Option<String>) -> String {
    // Node's `path.basename`: the last name, trailing slashes ignored.
    let hint = root.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    let mut workspace = serde_json::Map::new();
    workspace.insert("hint".into(), hint.into());
    if !remotes.is_empty() {
        workspace.insert("associatedRemoteUrls".into(), remotes.into());
    }
    if let Some(head) = head {
        workspace.insert("latestGitCommitHash".into(), head.into());
    }
    let mut workspaces = serde_json::Map::new();
    workspaces.insert(root.to_string(), workspace.into());
    let json = serde_json::json!({ "workspaces": workspaces });
    serde_json::to_string_pretty(&json).unwrap_or_default()
}

/// `tokens` over a non-empty `window`, in %, rounded as Cline rounds it (`Math.round`).
pub(crate) fn usage_percent(tokens: u64, window: u64) -> u64 {
    (tokens as f64 / window as f64 * 100.0).round() as u64
}

/// Whether Cline shows `# Context Window Usage`: always, except for Claude 4+ and GPT-5, where
/// only from 60 % of the window (its auto-condense threshold 0.75 less 0.15).
pub(crate) fn shows_context_usage(next_gen: bool, tokens: u64, window: u64) -> bool {
    !next_gen || (window > 0 && tokens as f64 / window as f64 >= 0.75 - 0.15)
}

/// `new Intl.DateTimeFormat(undefined, {numeric date and time, hour12: true}).format(now)`
/// in `en-US` in the machine's time zone, with the zone and offset Cline appends.
pub(crate) fn current_time(secs: u64) -> String {
    let (zone, offset) = crate::run::clock::local_zone(secs);
    time_in(secs, &zone, offset)
}

/// [`current_time`] in `zone`, `offset` seconds east of UTC: the offset in hours as JavaScript
/// writes a number (`UTC-8:00`, `UTC+5.5:00`, Cline's `${offset}:00`).
fn time_in(secs: u64, zone: &str, offset: i64) -> String {
    let local = secs.saturating_add_signed(offset);
    let hours = offset as f64 / 3600.0;
    let sign = if hours >= 0.0 { "+" } else { "" };
    format!("{} ({zone}, UTC{sign}{hours}:00)", clock_face(local))
}

/// The date and time of `secs` in `en-US`'s numeric form with a 12-hour clock.
fn clock_face(secs: u64) -> String {
    let (y, m, d, hh, mm, ss) = crate::run::clock::civil(secs);
    let (h12, ampm) = match hh {
        0 => (12, "AM"),
        1..=11 => (hh, "AM"),
        12 => (12, "PM"),
        _ => (hh - 12, "PM"),
    };
    format!("{m}/{d}/{y}, {h12}:{mm:02}:{ss:02} {ampm}")
}

/// JavaScript's `toLocaleString()` in `en-US`: thousands separated by commas, at most three
/// decimals.
fn locale_number(x: f64) -> String {
    let rounded = (x * 1000.0).round() / 1000.0;
    let int = rounded.trunc() as u64;
    let digits = int.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    let frac = format!("{:.3}", rounded.fract());
    let frac = frac.trim_start_matches('0').trim_end_matches('0');
    if frac != "." && !frac.is_empty() {
        out.push_str(frac);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_in_clines_order_and_words() {
        let d = Details {
            now: 1_700_000_000,
            files: Some(("/w", "a.txt")),
            workspace: Some(workspace_configuration("/w", Vec::new(), None)),
            cli_tools: Some(vec!["git", "cargo"]),
            context: Some((12_345, 200_000)),
            modified: Vec::new(),
        };
        assert_eq!(
            render(&d),
            "<environment_details>\n# Current Time\n11/14/2023, 10:13:20 PM (UTC, UTC+0:00)\n\n# Current Working Directory (/w) Files\na.txt\n\n# Workspace Configuration\n{\n  \"workspaces\": {\n    \"/w\": {\n      \"hint\": \"w\"\n    }\n  }\n}\n\n# Detected CLI Tools\nThese are some of the tools on the user's machine, and may be useful if needed to accomplish the task: git, cargo. This list is not exhaustive, and other tools may be available.\n\n# Context Window Usage\n12,345 / 200K tokens used (6%)\n\n# Current Mode\nACT MODE\n</environment_details>"
        );
        let later = render(&Details { now: 0, ..Default::default() });
        assert_eq!(later, "<environment_details>\n# Current Time\n1/1/1970, 12:00:00 AM (UTC, UTC+0:00)\n\n# Current Mode\nACT MODE\n</environment_details>");
        let modified =
            render(&Details { now: 0, modified: vec!["a.txt".into(), "src/b.rs".into()], ..Default::default() });
        assert_eq!(modified, "<environment_details>\n# Recently Modified Files\nThese files have been modified since you last accessed them (file was just edited so you may need to re-read it before editing):\na.txt\nsrc/b.rs\n\n# Current Time\n1/1/1970, 12:00:00 AM (UTC, UTC+0:00)\n\n# Current Mode\nACT MODE\n</environment_details>");
    }

    /// The expected texts are node's `JSON.stringify(…, null, 2)` of the same objects.
    #[test]
    fn the_workspace_configuration_is_clines_json() {
        let remotes = vec!["origin: https://github.com/o/r.git".to_string(), "up: git@h:o/r.git".to_string()];
        assert_eq!(
            workspace_configuration("/w/my \"proj\"", remotes, Some("0123abc".into())),
            "{\n  \"workspaces\": {\n    \"/w/my \\\"proj\\\"\": {\n      \"hint\": \"my \\\"proj\\\"\",\n      \"associatedRemoteUrls\": [\n        \"origin: https://github.com/o/r.git\",\n        \"up: git@h:o/r.git\"\n      ],\n      \"latestGitCommitHash\": \"0123abc\"\n    }\n  }\n}"
        );
        assert_eq!(
            workspace_configuration("/", Vec::new(), None),
            "{\n  \"workspaces\": {\n    \"/\": {\n      \"hint\": \"\"\n    }\n  }\n}"
        );
    }

    #[test]
    fn numbers_and_thresholds_as_cline() {
        assert_eq!(locale_number(32.768), "32.768");
        assert_eq!(locale_number(128.0), "128");
        assert_eq!(locale_number(1_234_567.0), "1,234,567");
        assert_eq!(locale_number(0.0), "0");
        assert!(shows_context_usage(false, 0, 200_000));
        assert!(!shows_context_usage(true, 119_999, 200_000));
        assert!(shows_context_usage(true, 120_000, 200_000));
        assert_eq!(time_in(12 * 3600, "UTC", 0), "1/1/1970, 12:00:00 PM (UTC, UTC+0:00)");
        assert_eq!(time_in(13 * 3600 + 5, "UTC", 0), "1/1/1970, 1:00:05 PM (UTC, UTC+0:00)");
        // What Node prints at this moment in these zones (TZ=… node -e …).
        let t = 1_700_000_000;
        assert_eq!(time_in(t, "America/New_York", -5 * 3600), "11/14/2023, 5:13:20 PM (America/New_York, UTC-5:00)");
        assert_eq!(time_in(t, "Asia/Kolkata", 19_800), "11/15/2023, 3:43:20 AM (Asia/Kolkata, UTC+5.5:00)");
        assert_eq!(time_in(t, "Asia/Kathmandu", 20_700), "11/15/2023, 3:58:20 AM (Asia/Kathmandu, UTC+5.75:00)");
    }
}
