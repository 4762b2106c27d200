//! The directories outside a project that decide what later runs trust: agent-min's config
//! directory (its settings, the global MCP servers, the MCP approvals), Cline's documents folder
//! (global rules, workflows and hooks), Cline's home folder `~/.cline` (the global skills, the
//! Cline CLI's rules, workflows and MCP servers), `~/.agents` (skills, `AGENTS.md`), and the state directory (hook
//! approvals, saved tasks). A run in the home directory (or with `--sandbox-allow-write ~/.config`)
//! could otherwise plant there what every later run trusts — a hook, an MCP server, a config
//! that sends the key elsewhere. Those that lie inside the workspace or another directory
//! commands may write are read-only to sandboxed commands (`crate::run::spawn`) and refused by
//! the file tools (`tools/write.rs`).

use std::path::{Path, PathBuf};

/// What a candidate is: a directory later runs trust, or a file that decides where one is
/// (`user-dirs.dirs`, which names Cline's documents folder).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Place {
    /// A directory: created (with its parents) when missing.
    Dir,
    /// A file: created empty when missing, which decides as a missing one does.
    File,
}

/// Of `candidates` (each a `place`), those strictly inside one of `roots` (canonical
/// directories), each as its real path. With `create`, a missing one is created first, so that
/// it can be made read-only (a bind mount needs something to bind; Cline creates its own
/// folders too) — else a run could plant there what the next one trusts; without, or when it
/// cannot be made, it is returned as far as it resolves (the file tools still refuse it). A
/// candidate that is a root or holds one is left out: the person chose to work there; so is one
/// inside a candidate already guarded. A dangling link is followed to where a command would
/// create it ([`real_path`]).
pub(crate) fn inside(candidates: &[PathBuf], place: Place, roots: &[PathBuf], create: bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for c in candidates {
        let real = real_path(c);
        if !roots.iter().any(|r| real.starts_with(r) && real != *r) || out.iter().any(|o| real.starts_with(o)) {
            continue;
        }
        let made = create
            && match place {
                Place::Dir => std::fs::create_dir_all(&real).is_ok(),
                Place::File => {
                    real.exists()
                        || real.parent().is_some_and(|p| std::fs::create_dir_all(p).is_ok())
                            && std::fs::OpenOptions::new().write(true).create_new(true).open(&real).is_ok()
                }
            };
        let real = if made { real_path(&real) } else { real };
        if !out.contains(&real) {
            out.push(real);
        }
    }
    out
}

/// The links inside the directories `dirs` (their trees, not following links; nearest first,
/// at most [`MAX_LINK_DEPTH`] levels down and [`MAX_LINK_ENTRIES`] entries looked at in each
/// directory of `dirs`), each as where it leads ([`real_path`]): a setting, hook or rule kept
/// in a dotfiles repository and linked from `~/.config/agent-min` is trusted where it lies — in
/// a workspace, a command could rewrite it through its real path, and the next run would trust
/// what it wrote. Each directory has its budget, the nearest entries (the settings files) come
/// first, and folders of saved tasks ([`DATA_DIRS`]) are not entered, so they use none of it.
pub(crate) fn links_within(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for top in dirs {
        let (mut seen, mut todo) = (0usize, std::collections::VecDeque::from([(real_path(top), 0)]));
        'walk: while let Some((dir, depth)) = todo.pop_front() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                seen += 1;
                if seen > MAX_LINK_ENTRIES {
                    break 'walk;
                }
                let Ok(kind) = entry.file_type() else { continue };
                if kind.is_symlink() {
                    out.push(real_path(&entry.path()));
                } else if kind.is_dir() && depth < MAX_LINK_DEPTH && !DATA_DIRS.iter().any(|d| entry.file_name() == *d)
                {
                    todo.push_back((entry.path(), depth + 1));
                }
            }
        }
    }
    out
}

/// Folders of data, not settings, that [`links_within`] does not enter: Cline's and
/// agent-min's saved tasks and checkpoints, a folder kept in git.
const DATA_DIRS: &[&str] = &["tasks", "checkpoints", "workspaces", ".git", "node_modules"];

/// How deep [`links_within`] looks (`Documents/Cline/Rules/topic/file.md` is 2 down).
const MAX_LINK_DEPTH: usize = 3;

/// How many entries [`links_within`] looks at in each trusted directory: it runs before every
/// command and write.
const MAX_LINK_ENTRIES: usize = 4096;

/// `path` with its existing part resolved (links followed), the rest appended as written but
/// for `.` and `..`, taken as a directory made there would take them. A dangling link is
/// followed too (up to 40 links, the kernel's limit), to where a file or directory created
/// through it would be: the place it decides is there.
pub(crate) fn real_path(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    'links: for _ in 0..=40 {
        let mut existing = path.as_path();
        loop {
            let rest = path.strip_prefix(existing).unwrap_or(Path::new(""));
            if let Ok(real) = std::fs::canonicalize(existing) {
                if rest.components().any(|c| matches!(c, Component::ParentDir | Component::CurDir)) {
                    // (A link's target may hold `missing/../..`: unresolved, the path would
                    // seem inside a root it leads out of. Nothing of the rest exists, so each
                    // `..` takes back the part before it; what it now names is looked at again.)
                    let mut joined = real;
                    for c in rest.components() {
                        match c {
                            Component::ParentDir => {
                                joined.pop();
                            }
                            Component::CurDir => {}
                            part => joined.push(part),
                        }
                    }
                    path = joined;
                    continue 'links;
                }
                // (Joined only when there is a rest: an empty one would add a trailing `/`,
                // which makes a file's path name no file.)
                return if rest.as_os_str().is_empty() { real } else { real.join(rest) };
            }
            if let (Ok(target), Some(dir)) = (std::fs::read_link(existing), existing.parent()) {
                let led = dir.join(target);
                path = if rest.as_os_str().is_empty() { led } else { led.join(rest) };
                continue 'links;
            }
            match existing.parent() {
                Some(p) => existing = p,
                None => return path.clone(),
            }
        }
    }
    path
}

/// A warning when `workspace` is the home directory `home` or holds it: the tools and commands
/// may then change anything there.
pub(crate) fn home_warning(workspace: &Path, home: Option<&Path>) -> Option<String> {
    let home = real_path(home?);
    home.starts_with(workspace).then(|| {
        format!(
            "warning: the workspace {} holds your home directory ({}): the tools and commands may change any file there (shell startup files, ~/.gitconfig, other projects). agent-min's and Cline's own settings, approvals and global folders stay read-only to them. Run in a project directory instead.",
            workspace.display(),
            home.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_candidates_strictly_inside_a_root_are_guarded_and_missing_ones_are_created() {
        let home = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(home.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let candidates = vec![
            root.join(".config/agent-min"),
            root.join("Documents/Cline"),
            root.join(".agents"),
            outside.path().join("state"),
            root.clone(), // the workspace itself: the person works there
        ];
        let guarded = inside(&candidates, Place::Dir, std::slice::from_ref(&root), false);
        assert_eq!(guarded, candidates[..3]);
        assert!(!root.join(".agents").exists(), "nothing is created without `create`");
        let guarded = inside(&candidates, Place::Dir, std::slice::from_ref(&root), true);
        assert_eq!(guarded, candidates[..3]);
        assert!(guarded.iter().all(|d| d.is_dir()), "created, to be bound read-only");
        assert!(!outside.path().join("state").exists());
        // A folder inside a guarded one is guarded with it; inside a writable directory that
        // is not, on its own (`--sandbox-allow-write ~/.cline/data`).
        let settings = root.join(".cline/data/settings");
        let nested = [root.join(".cline"), settings.clone()];
        assert_eq!(inside(&nested, Place::Dir, std::slice::from_ref(&root), true), [root.join(".cline")]);
        let data = root.join(".cline/data");
        assert_eq!(inside(&nested, Place::Dir, &[data], true), [settings]);
        // Reached through a link into the root, it is guarded by its real path.
        std::os::unix::fs::symlink(root.join("Documents"), outside.path().join("docs")).unwrap();
        let linked = inside(&[outside.path().join("docs/Cline")], Place::Dir, std::slice::from_ref(&root), false);
        assert_eq!(linked, vec![root.join("Documents/Cline")]);
    }

    #[test]
    fn a_file_that_decides_a_trusted_place_is_guarded_and_made_when_missing() {
        let home = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(home.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let dirs = root.join(".config/user-dirs.dirs");
        let candidates = [dirs.clone(), outside.path().join("user-dirs.dirs")];
        assert_eq!(inside(&candidates, Place::File, std::slice::from_ref(&root), false), std::slice::from_ref(&dirs));
        assert!(!dirs.exists(), "nothing is created without `create`");
        assert_eq!(inside(&candidates, Place::File, std::slice::from_ref(&root), true), std::slice::from_ref(&dirs));
        assert!(dirs.is_file() && std::fs::read(&dirs).unwrap().is_empty(), "created empty, to be bound read-only");
        assert!(!outside.path().join("user-dirs.dirs").exists());
        // One that is there is left as it is.
        std::fs::write(&dirs, "XDG_DOCUMENTS_DIR=\"$HOME/Docs\"\n").unwrap();
        assert_eq!(inside(&candidates, Place::File, std::slice::from_ref(&root), true), std::slice::from_ref(&dirs));
        assert_eq!(std::fs::read_to_string(&dirs).unwrap(), "XDG_DOCUMENTS_DIR=\"$HOME/Docs\"\n");
    }

    #[test]
    fn a_dangling_link_is_guarded_where_it_leads() {
        let home = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(home.path()).unwrap();
        let roots = std::slice::from_ref(&root);
        std::fs::create_dir(root.join(".config")).unwrap();
        // `user-dirs.dirs` a link to a file not yet there (in the workspace, where a command
        // could write it, and so decide the documents folder): that file is made and guarded.
        let dirs = root.join(".config/user-dirs.dirs");
        std::os::unix::fs::symlink("../dotfiles/user-dirs.dirs", &dirs).unwrap();
        let target = root.join("dotfiles/user-dirs.dirs");
        assert_eq!(real_path(&dirs), target);
        assert_eq!(inside(std::slice::from_ref(&dirs), Place::File, roots, false), std::slice::from_ref(&target));
        assert!(!target.exists(), "nothing is created without `create`");
        assert_eq!(inside(std::slice::from_ref(&dirs), Place::File, roots, true), std::slice::from_ref(&target));
        assert!(target.is_file() && std::fs::read(&dirs).unwrap().is_empty(), "made empty, read through the link");
        // A directory the same, through a relative link in a parent, and a chain of two links.
        std::os::unix::fs::symlink(root.join("elsewhere"), root.join(".config/agent-min")).unwrap();
        std::os::unix::fs::symlink("store/real", root.join("elsewhere")).unwrap();
        let settings = root.join(".config/agent-min/mcp");
        let led = root.join("store/real/mcp");
        assert_eq!(inside(std::slice::from_ref(&settings), Place::Dir, roots, true), std::slice::from_ref(&led));
        assert!(led.is_dir());
        // A link that leads out through `..` past a missing directory is judged where it leads:
        // outside, so neither guarded nor made.
        let outer = root.parent().unwrap().to_path_buf();
        let escaped = outer.join(format!("escaped-{}", std::process::id()));
        let name = escaped.file_name().unwrap().to_str().unwrap();
        std::os::unix::fs::symlink(format!("nothere/../../../{name}"), root.join(".config/out")).unwrap();
        assert_eq!(real_path(&root.join(".config/out")), escaped);
        assert_eq!(inside(&[root.join(".config/out")], Place::Dir, roots, true), Vec::<PathBuf>::new());
        assert_eq!(inside(&[root.join(".config/out")], Place::File, roots, true), Vec::<PathBuf>::new());
        assert!(!escaped.exists() && !root.join(".config/nothere").exists());
        // A loop of links ends, as written.
        std::os::unix::fs::symlink("b", root.join("a")).unwrap();
        std::os::unix::fs::symlink("a", root.join("b")).unwrap();
        assert!(real_path(&root.join("a/x")).ends_with("x"));
    }

    /// A trusted file that is a link into a root (a dotfiles repository) is guarded where it
    /// leads; links out of every root, and files that are no links, are not.
    #[test]
    fn a_link_inside_a_trusted_directory_is_guarded_where_it_leads() {
        let home = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(home.path()).unwrap().join("dotfiles");
        std::fs::create_dir_all(root.join("hooks")).unwrap();
        std::fs::write(root.join("config.toml"), "").unwrap();
        let config = home.path().join(".config/agent-min");
        std::fs::create_dir_all(config.join("rules/deep")).unwrap();
        std::fs::write(config.join("mcp.json"), "{}").unwrap();
        std::os::unix::fs::symlink(root.join("config.toml"), config.join("config.toml")).unwrap();
        std::os::unix::fs::symlink(root.join("hooks"), config.join("rules/deep/hooks")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", config.join("elsewhere")).unwrap();
        // Big folders of saved tasks beside them, in another trusted directory and
        // in this one: neither uses up the budget before the settings are seen.
        let tasks = home.path().join(".cline/data/tasks");
        for i in 0..MAX_LINK_ENTRIES + 10 {
            std::fs::create_dir_all(tasks.join(i.to_string())).unwrap();
        }
        std::fs::create_dir_all(config.join("tasks")).unwrap();
        for i in 0..MAX_LINK_ENTRIES + 10 {
            std::fs::write(config.join("tasks").join(i.to_string()), "").unwrap();
        }
        let links = links_within(&[config.clone(), home.path().join(".cline")]);
        let mut guarded = inside(&links, Place::File, std::slice::from_ref(&root), false);
        guarded.sort();
        assert_eq!(guarded, [root.join("config.toml"), root.join("hooks")]);
    }

    #[test]
    fn a_workspace_holding_the_home_directory_is_warned_about() {
        let d = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(d.path()).unwrap();
        assert!(home_warning(&ws, Some(&ws)).is_some());
        assert!(home_warning(&ws, Some(&ws.join("user"))).is_some());
        assert!(home_warning(&ws.join("project"), Some(&ws)).is_none());
        assert!(home_warning(&ws, None).is_none());
    }
}
