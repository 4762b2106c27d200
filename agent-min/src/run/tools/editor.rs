//! The person's own editor on a proposed file edit (`e` at the approval prompt): the proposal
//! goes to a private temporary file, `$VISUAL` / `$EDITOR` (default `vi`) runs on it with the
//! terminal, and what they saved is what gets written — as Cline lets a person edit its diff
//! view before approving.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

use super::fsx;
use crate::run::spawn;
use crate::run::ui::interrupt;

/// The editor's command line: `$VISUAL`, else `$EDITOR`, else `vi`.
fn editor() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string())
}

/// Lets the person edit `proposed` (for file `path`); returns what they saved.
pub(crate) fn edit(proposed: &str, path: &str) -> Result<String, String> {
    let editor = editor();
    let base: String = path
        .rsplit('/')
        .next()
        .unwrap_or("file")
        .chars()
        .filter(|c| c.is_alphanumeric() || ".-_".contains(*c))
        .collect();
    let tmp = std::env::temp_dir().join(format!("agent-min-edit-{}-{base}", std::process::id()));
    let _guard = interrupt::track_file(tmp.clone());
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| format!("cannot create {} for the editor: {e}", tmp.display()))?;
        f.write_all(proposed.as_bytes()).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
        drop(f);
        // The editor gets the terminal, not the API keys.
        let status = spawn::command("sh", spawn::Policy::Editor)?
            .arg("-c")
            .arg(format!("{editor} \"$1\""))
            .arg("sh")
            .arg(&tmp)
            .status()
            .map_err(|e| format!("cannot start the editor `{editor}`: {e}"))?;
        if !status.success() {
            return Err(format!(
                "the editor `{editor}` exited with {status}; set VISUAL or EDITOR to the editor you use"
            ));
        }
        let bytes = fsx::read_regular(&tmp, fsx::MAX_FILE_BYTES)
            .map_err(|e| format!("cannot read back {}: {e}", tmp.display()))?;
        String::from_utf8(bytes).map_err(|_| "the edited file is not UTF-8 text".to_string())
    })();
    let _ = std::fs::remove_file(&tmp);
    result
}
