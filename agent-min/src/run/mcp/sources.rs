//! Which settings files a run reads: every `--mcp-config FILE`, else
//! `$XDG_CONFIG_HOME/agent-min/mcp.json` (or `~/.config/agent-min/mcp.json`) and the Cline CLI's
//! `~/.cline/data/settings/cline_mcp_settings.json`, those that exist; and
//! the workspace's `.cline/mcp.json` only once the person has approved it (it starts programs
//! that came with the repository). An approval is the exact text approved, with the digests of
//! the workspace files its servers' command lines name, kept under
//! `$XDG_CONFIG_HOME/agent-min/mcp-approved/`; any change to either asks again.
//! `--trust-workspace` approves it for that run without recording anything; `--yolo` alone does
//! not (a run's commands can write the file, and the next run must not start what they wrote).
//! Every file is read once, from one descriptor (no link for the workspace's, no FIFO, at most
//! 1 MiB): the text parsed is the text compared with the approval.

use std::path::{Path, PathBuf};

use super::config::{self, ServerConfig};
use crate::run::trusted_file::{self, Links};

/// Largest settings file read (a settings file is a few kilobytes).
const MAX_FILE_BYTES: u64 = 1 << 20;
use crate::run::ui::term::{Approval, Term};

/// The workspace's own settings file, relative to its root.
pub(crate) const WORKSPACE_FILE: &str = ".cline/mcp.json";

/// The user's config directory for agent-min.
pub(crate) fn config_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("XDG_CONFIG_HOME")
        .filter(|p| p.is_absolute())
        .map(|p| p.join("agent-min"))
        .or_else(|| var("HOME").map(|h| h.join(".config/agent-min")))
}

/// The Cline CLI's MCP settings, read after agent-min's own when there is no `--mcp-config`:
/// where its `resolveMcpSettingsPath` finds them — `$CLINE_MCP_SETTINGS_PATH`, else
/// `settings/cline_mcp_settings.json` in `$CLINE_DATA_DIR`, else in `data` of Cline's home
/// folder (`~/.cline/data/settings/…`; absolute paths only).
pub(crate) fn cline_cli_file() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).map(PathBuf::from).filter(|p| p.is_absolute());
    let data = || var("CLINE_DATA_DIR").or_else(|| Some(crate::run::places::cline_dir()?.join("data")));
    var("CLINE_MCP_SETTINGS_PATH").or_else(|| Some(data()?.join("settings").join("cline_mcp_settings.json")))
}

/// The servers of a run: from `files` (or the user default), plus the workspace's file if
/// approved. Names must be unique across files. Under `yolo` nobody is asked; `trust`, the
/// option that was given to trust the workspace (`--trust-workspace`), approves its file.
pub(crate) fn load(
    files: &[PathBuf],
    workspace: &Path,
    yolo: bool,
    trust: Option<&str>,
    term: &mut Term,
) -> Result<Vec<ServerConfig>, String> {
    let mut servers: Vec<ServerConfig> = Vec::new();
    // Only as a default file: one given with --mcp-config is read as any other.
    let cline_cli = files.is_empty().then(cline_cli_file).flatten();
    let user: Vec<PathBuf> = if files.is_empty() {
        [config_dir().map(|d| d.join("mcp.json")), cline_cli.clone()]
            .into_iter()
            .flatten()
            .filter(|f| f.is_file())
            .collect()
    } else {
        files.to_vec()
    };
    for f in &user {
        let read = read(f, Links::Follow).map_err(|e| {
            if e.is_empty() {
                format!("cannot read the MCP settings file {}: no such file", f.display())
            } else {
                e
            }
        });
        let parsed = read.and_then(|text| config::parse(&text, f));
        // Another program's file that agent-min cannot use does not stop the run.
        let listed = match parsed {
            Err(e) if cline_cli.as_ref() == Some(f) => {
                term.warn(&format!("MCP: the Cline CLI's settings are left out: {e}"));
                continue;
            }
            other => other?,
        };
        servers.extend(listed);
    }
    let ws_file = workspace.join(WORKSPACE_FILE);
    // The repository's file, unlike the user's own, does not stop the run when it is broken.
    match read(&ws_file, Links::Refuse).and_then(|text| Ok((config::parse_workspace(&text, &ws_file)?, text))) {
        Ok((listed, text))
            if !listed.is_empty() && approved(&ws_file, workspace, &text, &listed, yolo, trust, term) =>
        {
            servers.extend(listed)
        }
        Ok(_) => {}
        Err(e) if e.is_empty() => {}
        Err(e) => term.warn(&format!("MCP: the workspace's settings are ignored: {e}")),
    }
    // The Cline CLI's file may well name a server another file names too: the other wins.
    if let Some(cli) = &cline_cli {
        let others: Vec<(String, PathBuf)> =
            servers.iter().filter(|s| &s.file != cli).map(|s| (s.name.clone(), s.file.clone())).collect();
        servers.retain(|s| match others.iter().find(|(name, _)| *name == s.name).filter(|_| &s.file == cli) {
            Some((_, other)) => {
                let (name, cli, other) = (&s.name, cli.display(), other.display());
                term.info(&format!("MCP: server \"{name}\" of {cli} is left out: {other} defines it too."));
                false
            }
            None => true,
        });
    }
    for (i, s) in servers.iter().enumerate() {
        if let Some(first) = servers[..i].iter().find(|o| o.name == s.name) {
            return Err(format!(
                "MCP server \"{}\" is defined twice: in {} and in {}; rename one of them",
                s.name,
                first.file.display(),
                s.file.display()
            ));
        }
    }
    Ok(servers)
}

/// A settings file's text, read once (`Err("")`: there is none). With `Links::Refuse` (the
/// workspace's file, `file` under the canonical workspace root) no component of its path may
/// be a link, judged on the descriptor: a `.cline` linked to another workspace's would bring
/// that workspace's approved settings, whose relative commands would then run this one's code.
fn read(file: &Path, links: Links) -> Result<String, String> {
    let opened = trusted_file::open(file, links);
    if let (Ok(o), Links::Refuse) = (&opened, links) {
        if let Some(real) = o.real_path().filter(|real| real != file) {
            return Err(format!(
                "cannot read the MCP settings file {}: a directory on its path is a symbolic link (the file is {}), which is not followed",
                file.display(),
                real.display()
            ));
        }
    }
    match opened.and_then(|o| o.read(MAX_FILE_BYTES)) {
        Ok(bytes) => {
            String::from_utf8(bytes).map_err(|_| format!("the MCP settings file {} is not UTF-8", file.display()))
        }
        Err(trusted_file::Error::Missing) => Err(String::new()),
        Err(e) => Err(format!("cannot read the MCP settings file {}: {e}", file.display())),
    }
}

/// Where the approval of `file`'s current text is kept.
fn approval_path(file: &Path) -> Option<PathBuf> {
    let abs = std::fs::canonicalize(file).ok()?;
    let hex = crate::run::digest::hex(abs.to_string_lossy().as_bytes());
    Some(config_dir()?.join("mcp-approved").join(format!("{hex}.json")))
}

/// What an approval covers: the settings' text, then each program or script inside the
/// workspace that a stdio server's command or one of its arguments names (`python3 srv.py`,
/// `./run.sh`: a file that is executable or has a script's extension; not the data files a
/// server writes itself, `--db data.db`), by its contents' SHA-256 — so a run that rewrote one
/// (a `--yolo` run writes the workspace unasked) does not have it started unasked. What such a
/// file imports is not followed.
fn covered(text: &str, servers: &[ServerConfig], workspace: &Path) -> String {
    let mut out = text.to_string();
    let here = std::env::current_dir().ok();
    let mut seen: Vec<PathBuf> = Vec::new();
    for s in servers {
        let config::Kind::Stdio { command, args, cwd, env } = &s.kind else { continue };
        // Where a relative word may lead: the server's directory (itself relative to the
        // agent's or the workspace's), the agent's, the workspace.
        let bases = [here.clone(), Some(workspace.to_path_buf())];
        let mut dirs: Vec<PathBuf> = cwd.iter().flat_map(|c| bases.iter().flatten().map(move |b| b.join(c))).collect();
        dirs.extend(bases.iter().flatten().cloned());
        // A bare command is found on PATH, the server's own when its settings set one (as it
        // is started): found in the workspace (`"PATH": "/ws/bin:/usr/bin"`), it is covered too.
        let found = |c: &str| crate::run::spawn::program_in(&crate::run::spawn::path_for(env), c);
        let on_path = (!command.contains('/')).then(|| found(command)).flatten();
        let named = std::iter::once(command).chain(args).flat_map(|word| dirs.iter().map(move |d| d.join(word)));
        for file in on_path.into_iter().chain(named) {
            let Ok(real) = std::fs::canonicalize(&file) else { continue };
            if !real.starts_with(workspace) || !runs(&real) || seen.contains(&real) {
                continue;
            }
            let digest = std::fs::File::open(&real)
                .and_then(crate::run::digest::sha256_of)
                .unwrap_or_else(|e| format!("unread ({e})"));
            out.push_str(&format!("\n{digest} {}", real.display()));
            seen.push(real);
        }
    }
    out
}

/// Whether `file` is a program or a script: a regular file that is executable or has the
/// extension of a language servers are written in.
fn runs(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    const SCRIPTS: &[&str] =
        &["py", "js", "mjs", "cjs", "ts", "mts", "cts", "sh", "bash", "zsh", "rb", "pl", "php", "lua", "jar", "ps1"];
    let Ok(meta) = std::fs::metadata(file) else { return false };
    let script =
        file.extension().and_then(|e| e.to_str()).is_some_and(|e| SCRIPTS.contains(&e.to_ascii_lowercase().as_str()));
    meta.is_file() && (meta.permissions().mode() & 0o111 != 0 || script)
}

/// Whether `text` (the file's one read, already parsed into `servers`) may start its servers.
fn approved(
    file: &Path,
    workspace: &Path,
    text: &str,
    servers: &[ServerConfig],
    yolo: bool,
    trust: Option<&str>,
    term: &mut Term,
) -> bool {
    if !super::BUILT_IN {
        return true; // nothing starts in this build: listed as not started, nobody asked
    }
    let record = approval_path(file);
    let text = covered(text, servers, workspace);
    let recorded = record.as_ref().and_then(|p| trusted_file::read(p, Links::Refuse, MAX_FILE_BYTES).ok());
    if recorded.is_some_and(|t| t == text.as_bytes()) {
        return true;
    }
    if let Some(option) = trust {
        term.info(&format!("MCP: starting the servers of {} (approved by {option}).", file.display()));
        return true;
    }
    if yolo {
        term.warn(&format!(
            "MCP: the servers of {} were not started: --yolo does not approve the workspace's MCP settings (a run's commands can write them); approve them in a run without --yolo, or pass --trust-workspace.",
            file.display()
        ));
        return false;
    }
    term.warn(&format!("This workspace configures MCP servers in {}; they would run these programs:", file.display()));
    for line in servers.iter().flat_map(ServerConfig::consent_lines) {
        term.info(&format!("  {line}"));
    }
    let question =
        format!("Start the MCP servers of {} (asked again whenever it or a file it runs changes)", file.display());
    match term.approve(None, &question) {
        Approval::Yes => {
            if let Some(p) = record {
                let saved = p.parent().map(std::fs::create_dir_all).transpose().and_then(|_| std::fs::write(&p, &text));
                if let Err(e) = saved {
                    term.warn(&format!(
                        "Could not record the approval in {} ({e}); you will be asked again.",
                        p.display()
                    ));
                }
            }
            true
        }
        // `approve` offers no edit; anything but yes is a no.
        Approval::No(_) | Approval::Edit => {
            term.info(&format!("MCP: the servers of {} were not started.", file.display()));
            false
        }
        Approval::Unanswered => {
            // Not a question for the task's first call to stop at: the run goes on without them.
            term.take_unanswered();
            term.info(&format!(
                "MCP: the servers of {} were not started (approve them in a run at a terminal, or pass --trust-workspace).",
                file.display()
            ));
            false
        }
    }
}

/// Loads the run's settings and starts its servers (waiting for each at most its
/// `startupTimeout`, else `wait`); each server that failed is reported once on `term`.
pub(crate) fn start(
    files: &[PathBuf],
    workspace: &Path,
    yolo: bool,
    trust: Option<&str>,
    wait: std::time::Duration,
    term: &mut Term,
) -> Result<super::Hub, String> {
    start_with(files, Vec::new(), workspace, yolo, trust, wait, term)
}

/// [`start`] for `agent-min mcp list`, which waits for nothing later: a server not up after
/// the wait is reported as failed, with how to give it longer.
pub(crate) fn start_now(
    files: &[PathBuf],
    workspace: &Path,
    trust: Option<&str>,
    wait: std::time::Duration,
    term: &mut Term,
) -> Result<super::Hub, String> {
    start_for(files, Vec::new(), workspace, (false, trust), wait, false, term)
}

/// As [`start`], with `more` servers after the files' (an editor's session's, over ACP); of
/// a name given in both, the files' server is used, and a warning names both places.
pub(crate) fn start_with(
    files: &[PathBuf],
    more: Vec<super::config::ServerConfig>,
    workspace: &Path,
    yolo: bool,
    trust: Option<&str>,
    wait: std::time::Duration,
    term: &mut Term,
) -> Result<super::Hub, String> {
    start_for(files, more, workspace, (yolo, trust), wait, true, term)
}

/// The servers started; `later`: one not up after the wait goes on starting (a run, whose
/// later requests offer it once it is ready), else it is given up.
fn start_for(
    files: &[PathBuf],
    more: Vec<super::config::ServerConfig>,
    workspace: &Path,
    (yolo, trust): (bool, Option<&str>),
    wait: std::time::Duration,
    later: bool,
    term: &mut Term,
) -> Result<super::Hub, String> {
    if !super::BUILT_IN && !files.is_empty() {
        return Err(format!("--mcp-config: {}", crate::run::built::not_built_in("mcp", "MCP")));
    }
    let mut servers = load(files, workspace, yolo, trust, term)?;
    for extra in more {
        // An editor passes its own servers with every new session: one the settings files
        // also name is theirs, not a reason to refuse the session.
        if let Some(same) = servers.iter().find(|s| s.name == extra.name) {
            term.warn(&format!(
                "MCP server \"{}\" is named in {} and in {}; the first is used",
                extra.name,
                same.file.display(),
                extra.file.display()
            ));
            continue;
        }
        servers.push(extra);
    }
    if servers.is_empty() {
        return Ok(super::Hub::none());
    }
    if !super::BUILT_IN {
        let mut files: Vec<String> = servers.iter().map(|s| s.file.display().to_string()).collect();
        files.dedup();
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        let why = crate::run::built::not_built_in("mcp", "MCP");
        term.warn(&format!(
            "MCP: the servers {} (configured in {}) are not started: {why}.",
            names.join(", "),
            files.join(", ")
        ));
        return Ok(super::Hub::none());
    }
    term.start_spinner("starting MCP servers…");
    let mut hub = super::Hub::start(servers, wait, later);
    term.stop_spinner();
    if !later {
        hub.give_up_on_starting();
    }
    for s in hub.servers() {
        match &s.state {
            super::hub::State::Connected(c) => term.info(&format!(
                "MCP: {} connected ({} tools, {} resources, {} resource templates)",
                s.cfg.name,
                c.tools.len(),
                c.resources.len(),
                c.templates.len()
            )),
            super::hub::State::Failed(e) => term.warn(&format!(
                "MCP: server \"{}\" ({}) failed to start and is left out: {e}",
                s.cfg.name,
                s.cfg.file.display()
            )),
            super::hub::State::Disabled => term.info(&format!("MCP: {} is disabled", s.cfg.name)),
            super::hub::State::Starting(_) => term.warn(&format!(
                "MCP: server \"{}\" ({}) is not up after {} seconds (an npx or uvx server's first run downloads itself); it goes on starting, and its tools are offered from the request after it is ready",
                s.cfg.name,
                s.cfg.file.display(),
                s.cfg.startup_timeout.unwrap_or(wait).as_secs_f64()
            )),
        }
    }
    Ok(hub)
}

#[cfg(all(test, not(feature = "mcp")))]
mod not_built_in {
    use super::*;

    #[test]
    fn without_the_feature_mcp_config_is_refused_and_found_settings_are_said_not_started() {
        let d = tempfile::tempdir().unwrap();
        let marker = d.path().join("started");
        let settings =
            format!(r#"{{"mcpServers": {{"db": {{"command": "touch", "args": ["{}"]}}}}}}"#, marker.display());
        let given = d.path().join("mcp.json");
        std::fs::write(&given, &settings).unwrap();
        let wait = std::time::Duration::from_secs(5);
        let mut term = Term::to_writer(Box::new(std::io::sink()));
        let e = start(&[given], d.path(), false, None, wait, &mut term).err().unwrap();
        assert!(e.starts_with("--mcp-config: MCP is not built into") && e.contains("`mcp`"), "{e}");
        // The workspace's own settings: said, not started, and nobody is asked.
        std::fs::create_dir_all(d.path().join(".cline")).unwrap();
        std::fs::write(d.path().join(WORKSPACE_FILE), &settings).unwrap();
        let buf = crate::run::ui::term::Captured::default();
        let mut term = Term::to_writer(Box::new(buf.clone()));
        let hub = start(&[], d.path(), false, None, wait, &mut term).unwrap();
        assert!(hub.is_empty());
        let said = buf.text();
        assert!(said.contains("MCP: the servers db (configured in") && said.contains("`mcp`"), "{said}");
        assert!(!marker.exists(), "a server was started in a build without MCP");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An approved server whose script a `--yolo` run rewrote ran unasked, unsandboxed, on the
    /// next run: the approval covered the settings' text only.
    #[test]
    fn an_approval_covers_the_workspace_files_a_servers_command_line_names() {
        let d = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(d.path()).unwrap();
        std::fs::write(ws.join("srv.py"), "print('serving')\n").unwrap();
        std::fs::create_dir(ws.join("bin")).unwrap();
        std::fs::write(ws.join("bin/run.sh"), "exec python3 srv.py\n").unwrap();
        let text = r#"{"mcpServers": {"local": {"command": "python3", "args": ["srv.py", "-u"]},
                                     "sh": {"command": "./run.sh", "cwd": "bin"}}}"#;
        let servers = config::parse_workspace(text, &ws.join(WORKSPACE_FILE)).unwrap();
        let approval = covered(text, &servers, &ws);
        assert!(approval.starts_with(text), "{approval}");
        assert!(approval.contains(&format!(" {}", ws.join("srv.py").display())), "{approval}");
        assert_eq!(covered(text, &servers, &ws), approval, "the same files, the same approval");
        // `python3` is the machine's, not the workspace's; `-u` names no file.
        assert_eq!(approval.lines().count(), text.lines().count() + 2, "{approval}");
        std::fs::write(ws.join("srv.py"), "import os; os.system('id')\n").unwrap();
        assert_ne!(covered(text, &servers, &ws), approval, "a rewritten script is asked about again");
        let approval = covered(text, &servers, &ws);
        std::fs::write(ws.join("bin/run.sh"), "exec sh -c id\n").unwrap();
        assert_ne!(covered(text, &servers, &ws), approval, "so is one named relative to the server's cwd");
        // A data file the server writes itself is not the approval's: it would ask every run.
        let text =
            r#"{"mcpServers": {"db": {"command": "python3", "args": ["srv.py", "--db", "d.db", "--env", ".env"]}}}"#;
        std::fs::write(ws.join("d.db"), "rows").unwrap();
        std::fs::write(ws.join(".env"), "A=1").unwrap();
        let servers = config::parse_workspace(text, &ws.join(WORKSPACE_FILE)).unwrap();
        let approval = covered(text, &servers, &ws);
        std::fs::write(ws.join("d.db"), "more rows").unwrap();
        assert_eq!(covered(text, &servers, &ws), approval);
        assert_eq!(approval.lines().count(), 2, "srv.py alone: {approval}");
        // An executable is a program whatever its name.
        std::fs::set_permissions(ws.join("d.db"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        assert_ne!(covered(text, &servers, &ws), approval);
        // A bare command its own PATH finds in the workspace is the workspace's program.
        std::fs::create_dir(ws.join("tools")).unwrap();
        std::fs::write(ws.join("tools/serve"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(ws.join("tools/serve"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let text = format!(
            r#"{{"mcpServers": {{"t": {{"command": "serve", "env": {{"PATH": "{}/tools:/usr/bin"}}}}}}}}"#,
            ws.display()
        );
        let servers = config::parse_workspace(&text, &ws.join(WORKSPACE_FILE)).unwrap();
        let approval = covered(&text, &servers, &ws);
        assert!(approval.contains(&format!(" {}", ws.join("tools/serve").display())), "{approval}");
        std::fs::write(ws.join("tools/serve"), "#!/bin/sh\nid\n").unwrap();
        assert_ne!(covered(&text, &servers, &ws), approval, "a rewritten program is asked about again");
    }

    #[test]
    fn a_name_defined_in_two_files_is_an_error_naming_both() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a.json"), d.path().join("b.json"));
        std::fs::write(&a, r#"{"mcpServers": {"db": {"command": "x"}}}"#).unwrap();
        std::fs::write(&b, r#"{"mcpServers": {"db": {"command": "y"}, "other": {"command": "z"}}}"#).unwrap();
        let mut term = Term::to_writer(Box::new(std::io::sink()));
        let e = load(&[a.clone(), b.clone()], d.path(), false, None, &mut term).unwrap_err();
        assert_eq!(
            e,
            format!(
                "MCP server \"db\" is defined twice: in {} and in {}; rename one of them",
                a.display(),
                b.display()
            )
        );
        let ok = load(&[b], d.path(), false, None, &mut term).unwrap();
        assert_eq!(ok.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["db", "other"]);
    }

    /// The workspace's file is opened once, not through a link (a
    /// link could lead to a file the check and the use see differently) and never blocks on a
    /// FIFO; the user's own files may be links.
    #[test]
    fn the_workspace_file_is_not_read_through_a_link_nor_from_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(d.as_path().join(".cline")).unwrap();
        let real = d.as_path().join("real.json");
        std::fs::write(&real, r#"{"mcpServers": {"x": {"command": "x"}}}"#).unwrap();
        let ws_file = d.as_path().join(WORKSPACE_FILE);
        std::os::unix::fs::symlink(&real, &ws_file).unwrap();
        let mut term = Term::to_writer(Box::new(std::io::sink()));
        // The user's own settings: none (not the machine's default file).
        let none = d.as_path().join("none.json");
        std::fs::write(&none, r#"{"mcpServers": {}}"#).unwrap();
        let none = [none];
        assert!(
            load(&none, d.as_path(), true, Some("--trust-workspace"), &mut term).unwrap().is_empty(),
            "a link is not followed"
        );
        let linked = d.as_path().join("user.json");
        std::os::unix::fs::symlink(&real, &linked).unwrap();
        assert_eq!(load(&[linked], d.as_path(), true, Some("--trust-workspace"), &mut term).unwrap().len(), 1);
        std::fs::remove_file(&ws_file).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &ws_file,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        assert!(load(&none, d.as_path(), true, Some("--trust-workspace"), &mut term).unwrap().is_empty());
        std::fs::remove_file(&ws_file).unwrap();
        std::fs::copy(&real, &ws_file).unwrap();
        assert_eq!(
            load(&none, d.as_path(), true, Some("--trust-workspace"), &mut term).unwrap().len(),
            1,
            "a plain file is read"
        );

        // Nor through a linked `.cline`: another workspace's, whose settings were approved
        // there, would start here (a review ran this workspace's script so, unasked).
        let other = tempfile::tempdir().unwrap();
        let b_dir = tempfile::tempdir().unwrap();
        let b = std::fs::canonicalize(b_dir.path()).unwrap();
        std::fs::create_dir(other.path().join(".cline")).unwrap();
        std::fs::copy(&real, other.path().join(WORKSPACE_FILE)).unwrap();
        std::os::unix::fs::symlink(other.path().join(".cline"), b.as_path().join(".cline")).unwrap();
        let buf = crate::run::ui::term::Captured::default();
        let mut term = Term::to_writer(Box::new(buf.clone()));
        assert!(
            load(&none, b.as_path(), true, Some("--trust-workspace"), &mut term).unwrap().is_empty(),
            "{}",
            buf.text()
        );
        assert!(buf.text().contains("a directory on its path is a symbolic link"), "{}", buf.text());
    }
}
