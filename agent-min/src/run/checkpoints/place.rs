//! Which workspaces may have checkpoints, and where their shadow repository lives: Cline's
//! refusal of the home directory (and its Desktop, Documents, Downloads) — we refuse `/` too —
//! and Cline's hash of the workspace path naming the folder `STATE_DIR/checkpoints/HASH/`.

use std::path::{Path, PathBuf};

/// Cline's `hashWorkingDir`: a 31-multiplier hash over the path's UTF-16 code units, kept to 32
/// bits, written in decimal.
pub fn cwd_hash(workspace: &Path) -> String {
    let s = workspace.to_string_lossy();
    let mut hash: u32 = 0;
    for unit in s.encode_utf16() {
        hash = hash.wrapping_mul(31).wrapping_add(u32::from(unit));
    }
    hash.to_string()
}

/// The shadow repository's git directory for `workspace` under `state_dir`.
pub(crate) fn shadow_git_dir(state_dir: &Path, workspace: &Path) -> PathBuf {
    state_dir.join("checkpoints").join(cwd_hash(workspace)).join(".git")
}

/// Refuses the workspaces Cline refuses, and the filesystem root: a checkpoint there would copy
/// a whole home directory (or machine) into the shadow repository, and a restore would rewrite it.
pub(crate) fn refuse(workspace: &Path, home: Option<&Path>) -> Result<(), String> {
    let hint = "run the agent in a project directory (--cwd DIR), or pass --no-checkpoints";
    if workspace.parent().is_none() {
        return Err(format!("Cannot use checkpoints in the filesystem root {}; {hint}", workspace.display()));
    }
    let Some(home) = home else { return Ok(()) };
    let home = home.canonicalize().unwrap_or_else(|_| home.to_path_buf());
    for (dir, name) in [
        (home.clone(), "home"),
        (home.join("Desktop"), "Desktop"),
        (home.join("Documents"), "Documents"),
        (home.join("Downloads"), "Downloads"),
    ] {
        if workspace == dir {
            return Err(format!("Cannot use checkpoints in {name} directory ({}); {hint}", workspace.display()));
        }
    }
    Ok(())
}

pub(crate) use crate::run::places::home_dir;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_clines() {
        // Values computed by Cline's hashWorkingDir under node.
        assert_eq!(cwd_hash(Path::new("/home/user/projects/a-very-long-workspace-name")), "3285369563");
        assert_eq!(cwd_hash(Path::new("/tmp/x")), "1456054961");
        assert_eq!(cwd_hash(Path::new("")), "0");
        assert_eq!(cwd_hash(Path::new("a")), "97");
        assert_eq!(cwd_hash(Path::new("ab")), (97 * 31 + 98).to_string());
        // Counts UTF-16 units, like charCodeAt (é is one, 😀 two).
        assert_eq!(cwd_hash(Path::new("é")), "233");
        assert_eq!(cwd_hash(Path::new("😀")), (0xD83Du32 * 31 + 0xDE00).to_string());
    }

    #[test]
    fn home_root_and_clines_folders_are_refused() {
        let home = Path::new("/home/u");
        assert!(refuse(Path::new("/"), Some(home)).unwrap_err().contains("filesystem root"));
        assert!(refuse(Path::new("/home/u"), Some(home)).unwrap_err().contains("home directory"));
        assert!(refuse(Path::new("/home/u/Downloads"), Some(home)).unwrap_err().contains("Downloads"));
        assert!(refuse(Path::new("/home/u/project"), Some(home)).is_ok());
        assert!(refuse(Path::new("/home/u/project"), None).is_ok());
    }
}
