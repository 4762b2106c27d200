//! Which settings files a run reads: every `--mcp-config FILE`, else
//! `$XDG_CONFIG_HOME/agent-min/mcp.json` (or `~/.config/agent-min/mcp.json`) if it exists; and
//! the workspace's `.cline/mcp.json` only once the person has approved it (it starts programs
//! that came with the repository). An approval is the exact text approved, kept under
//! `$XDG_CONFIG_HOME/agent-min/mcp-approved/`; any change to the file asks again. `--yolo`
//! approves it for that run without recording anything.

use std::path::{Path, PathBuf};

use super::config::{self, ServerConfig};
use crate::run::ui::term::{Approval, Term};

/// The workspace's own settings file, relative to its root.
pub const WORKSPACE_FILE: &str = ".cline/mcp.json";

/// The user's config directory for agent-min.
fn config_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("XDG_CONFIG_HOME")
        .filter(|p| p.is_absolute())
        .map(|p| p.join("agent-min"))
        .or_else(|| var("HOME").map(|h| h.join(".config/agent-min")))
}

/// The servers of a run: from `files` (or the user default), plus the workspace's file if
/// approved. Names must be unique across files. `yolo` approves the workspace file.
pub fn load(files: &[PathBuf], workspace: &Path, yolo: bool, term: &mut Term) -> Result<Vec<ServerConfig>, String> {
    let mut servers = Vec::new();
    let user: Vec<PathBuf> = if files.is_empty() {
        config_dir().map(|d| d.join("mcp.json")).filter(|f| f.is_file()).into_iter().collect()
    } else {
        files.to_vec()
    };
    for f in &user {
        servers.extend(config::load(f)?);
    }
    let ws_file = workspace.join(WORKSPACE_FILE);
    if ws_file.is_file() {
        // The repository's file, unlike the user's own, does not stop the run when it is broken.
        match config::load(&ws_file) {
            Ok(listed) if !listed.is_empty() && approved(&ws_file, &listed, yolo, term)? => servers.extend(listed),
            Ok(_) => {}
            Err(e) => term.warn(&format!("MCP: the workspace's settings are ignored: {e}")),
        }
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

/// Where the approval of `file`'s current text is kept.
fn approval_path(file: &Path) -> Option<PathBuf> {
    let abs = std::fs::canonicalize(file).ok()?;
    let hex: String = abs.to_string_lossy().bytes().map(|b| format!("{b:02x}")).collect();
    Some(config_dir()?.join("mcp-approved").join(format!("{hex}.json")))
}

fn approved(file: &Path, servers: &[ServerConfig], yolo: bool, term: &mut Term) -> Result<bool, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let record = approval_path(file);
    if record.as_ref().and_then(|p| std::fs::read_to_string(p).ok()).is_some_and(|t| t == text) {
        return Ok(true);
    }
    if yolo {
        term.info(&format!("MCP: starting the servers of {} (approved by --yolo).", file.display()));
        return Ok(true);
    }
    term.warn(&format!("This workspace configures MCP servers in {}; they would run these programs:", file.display()));
    for s in servers {
        term.info(&format!("  {}: {}", s.name, s.command_line()));
    }
    match term.approve(&format!("Start the MCP servers of {} (asked again whenever the file changes)", file.display()))
    {
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
            Ok(true)
        }
        // `approve` offers no edit; anything but yes is a no.
        Approval::No(_) | Approval::Edit | Approval::Unanswered => {
            term.info(&format!("MCP: the servers of {} were not started.", file.display()));
            Ok(false)
        }
    }
}

/// Loads the run's settings and starts its servers (waiting for each at most its
/// `startupTimeout`, else `wait`); each server that failed is reported once on `term`.
pub fn start(
    files: &[PathBuf],
    workspace: &Path,
    yolo: bool,
    wait: std::time::Duration,
    term: &mut Term,
) -> Result<super::Hub, String> {
    let servers = load(files, workspace, yolo, term)?;
    if servers.is_empty() {
        return Ok(super::Hub::none());
    }
    term.start_spinner("starting MCP servers…");
    let hub = super::Hub::start(servers, wait);
    term.stop_spinner();
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
        }
    }
    Ok(hub)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_defined_in_two_files_is_an_error_naming_both() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a.json"), d.path().join("b.json"));
        std::fs::write(&a, r#"{"mcpServers": {"db": {"command": "x"}}}"#).unwrap();
        std::fs::write(&b, r#"{"mcpServers": {"db": {"command": "y"}, "other": {"command": "z"}}}"#).unwrap();
        let mut term = Term::to_writer(Box::new(std::io::sink()));
        let e = load(&[a.clone(), b.clone()], d.path(), false, &mut term).unwrap_err();
        assert_eq!(
            e,
            format!(
                "MCP server \"db\" is defined twice: in {} and in {}; rename one of them",
                a.display(),
                b.display()
            )
        );
        let ok = load(&[b], d.path(), false, &mut term).unwrap();
        assert_eq!(ok.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["db", "other"]);
    }
}
