//! Cline's skills (`context/instructions/user-instructions/skills.ts`, v4.0.10): folders holding
//! a `SKILL.md` whose frontmatter names the skill (`name`, the folder's own name) and says when
//! it helps (`description`). The prompt's SKILLS section lists each skill's name and
//! description (`prompt/skills.rs`); the model loads one with `use_skill` (`tools/skill.rs`),
//! which answers with the file's body.
//!
//! Where, in Cline's order (`getSkillsDirectoriesForScan`): the workspace's `.clinerules/skills`,
//! `.cline/skills`, `.claude/skills` and `.agents/skills`, then `~/.cline/skills` and
//! `~/.agents/skills`. Folders are taken in byte order (Node's `readdir`), a folder reached
//! through a symlink too (Cline's `fs.stat`). A name found twice is the last one found: a global
//! skill over the workspace's (`getAvailableSkills`). Read afresh for every request, as Cline
//! does, through the rules' reader: each `SKILL.md` at most 1 MiB and within the rules' budget,
//! a workspace one only where it resolves inside the workspace.

use std::path::Path;

use super::frontmatter::{self, Value};
use super::rules::{self, Reader};
use crate::run::tools::skill::Skill;

/// The workspace's skill folders, in Cline's order.
const WORKSPACE_DIRS: [&str; 4] = [".clinerules/skills", ".cline/skills", ".claude/skills", ".agents/skills"];

/// The global skill folders under the home directory, in Cline's order.
const GLOBAL_DIRS: [&str; 2] = [".cline/skills", ".agents/skills"];

/// Most entries looked at in one skills folder.
const MAX_ENTRIES: usize = 1000;

/// Whether this build finds skills (the cargo feature `skills`).
pub(crate) const BUILT_IN: bool = cfg!(feature = "skills");

/// Whether `root` or `home` has one of Cline's skill folders (a build without skills says so).
pub(crate) fn any_folder(root: &Path, home: Option<&Path>) -> bool {
    let homes = home.map(|h| GLOBAL_DIRS.map(|d| h.join(d))).into_iter().flatten();
    WORKSPACE_DIRS.iter().map(|d| root.join(d)).chain(homes).any(|d| d.is_dir())
}

/// The skills of workspace `root` and of the home directory `home`, the ones that win a name
/// (see the module's documentation); files that could not be used are in `r.warnings`.
pub(crate) fn discover(root: &Path, home: Option<&Path>, r: &mut Reader) -> Vec<Skill> {
    let mut found = Vec::new();
    r.confine_to(Some(root));
    for dir in WORKSPACE_DIRS {
        scan(&root.join(dir), r, &mut found);
    }
    r.confine_to(None);
    for dir in home.map(|h| GLOBAL_DIRS.map(|d| h.join(d))).into_iter().flatten() {
        scan(&dir, r, &mut found);
    }
    // The last of each name wins, in its own place.
    let mut winners: Vec<Skill> = Vec::new();
    for s in found.into_iter().rev() {
        if !winners.iter().any(|w| w.name == s.name) {
            winners.push(s);
        }
    }
    winners.reverse();
    winners
}

/// The skills of one folder (Cline's `scanSkillsDirectory`), appended to `out`.
fn scan(dir: &Path, r: &mut Reader, out: &mut Vec<Skill>) {
    if !std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) || !rules::directory_inside(dir, r) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut names: Vec<String> =
        entries.filter_map(Result::ok).take(MAX_ENTRIES).filter_map(|e| e.file_name().into_string().ok()).collect();
    names.sort();
    for name in names {
        let folder = dir.join(&name);
        if std::fs::metadata(&folder).is_ok_and(|m| m.is_dir()) {
            out.extend(load(&folder, &name, r));
        }
    }
}

/// A skill folder's `SKILL.md` (Cline's `loadSkillMetadata`): `None`, with a warning, when its
/// frontmatter lacks a `name` or `description` string or names another folder.
fn load(folder: &Path, folder_name: &str, r: &mut Reader) -> Option<Skill> {
    let path = folder.join("SKILL.md");
    let text = rules::read_trimmed(&path, r)?;
    let fm = frontmatter::parse(&text);
    let get = |key: &str| {
        fm.data.iter().find(|(k, _)| k == key).and_then(|(_, v)| match v {
            Value::Str(s) if !s.is_empty() => Some(s.clone()),
            _ => None,
        })
    };
    let problem = match (get("name"), get("description")) {
        (None, _) => "has no `name` in its frontmatter".to_string(),
        (_, None) => "has no `description` in its frontmatter".to_string(),
        (Some(n), _) if n != folder_name => format!("is named {n:?}, not as its folder"),
        (Some(name), Some(description)) => {
            let instructions = fm.body.trim().to_string();
            return Some(Skill { name, description, path, instructions });
        }
    };
    r.warnings.push(format!("skill {} {problem}; it is not offered", path.display()));
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::test_files::write;

    fn skill_md(name: &str, description: &str, body: &str) -> String {
        format!("---\nname: {name}\ndescription: {description}\n---\n\n{body}\n")
    }

    #[test]
    fn skills_are_found_in_clines_folders_and_order_and_a_global_one_wins_its_name() {
        let ws = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        write(ws.path(), ".cline/skills/b-tool/SKILL.md", &skill_md("b-tool", "B things", "Do B."));
        write(ws.path(), ".clinerules/skills/a-tool/SKILL.md", &skill_md("a-tool", "A things", "Do A."));
        write(ws.path(), ".claude/skills/shared/SKILL.md", &skill_md("shared", "workspace's", "ws"));
        // A folded description, as skills often have.
        write(
            ws.path(),
            ".agents/skills/z/SKILL.md",
            "---\nname: z\ndescription: >-\n  Zip files\n  when asked.\n---\nz",
        );
        write(ws.path(), ".agents/skills/a/SKILL.md", &skill_md("a", "A", "a"));
        write(home.path(), ".cline/skills/shared/SKILL.md", &skill_md("shared", "global's", "global"));
        write(home.path(), ".agents/skills/g/SKILL.md", &skill_md("g", "G", "g"));
        let mut r = Reader::new();
        let found = discover(ws.path(), Some(home.path()), &mut r);
        let names: Vec<(&str, &str)> = found.iter().map(|s| (s.name.as_str(), s.description.as_str())).collect();
        assert_eq!(
            names,
            [
                ("a-tool", "A things"),
                ("b-tool", "B things"),
                ("a", "A"),
                ("z", "Zip files when asked."),
                ("shared", "global's"),
                ("g", "G")
            ]
        );
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        assert_eq!(found[0].instructions, "Do A.");
        assert_eq!(found[0].path, ws.path().join(".clinerules/skills/a-tool/SKILL.md"));
    }

    #[test]
    fn a_skill_without_its_name_or_description_or_named_otherwise_is_left_out_with_a_warning() {
        let ws = tempfile::tempdir().unwrap();
        write(ws.path(), ".cline/skills/nameless/SKILL.md", "---\ndescription: d\n---\nbody");
        write(ws.path(), ".cline/skills/vague/SKILL.md", "---\nname: vague\n---\nbody");
        write(ws.path(), ".cline/skills/moved/SKILL.md", &skill_md("elsewhere", "d", "body"));
        write(ws.path(), ".cline/skills/plain/SKILL.md", "no frontmatter");
        write(ws.path(), ".cline/skills/empty/README.md", "not a skill");
        write(ws.path(), ".cline/skills/file.md", &skill_md("file.md", "d", "a file, not a folder"));
        let mut r = Reader::new();
        assert_eq!(discover(ws.path(), None, &mut r), Vec::new());
        let w = r.warnings.join("\n");
        assert!(w.contains("nameless/SKILL.md has no `name`"), "{w}");
        assert!(w.contains("vague/SKILL.md has no `description`"), "{w}");
        assert!(w.contains("moved/SKILL.md is named \"elsewhere\", not as its folder"), "{w}");
        assert!(w.contains("plain/SKILL.md has no `name`"), "{w}");
        assert_eq!(r.warnings.len(), 4, "{w}");
    }

    #[cfg(unix)]
    #[test]
    fn a_workspace_skill_leading_outside_the_workspace_is_not_read() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "secret/SKILL.md", &skill_md("secret", "d", "outside"));
        write(ws.path(), ".cline/skills/inside/SKILL.md", &skill_md("inside", "d", "inside"));
        std::os::unix::fs::symlink(outside.path().join("secret"), ws.path().join(".cline/skills/secret")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join(".agents")).unwrap();
        let mut r = Reader::new();
        let found = discover(ws.path(), None, &mut r);
        assert_eq!(found.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["inside"]);
        assert!(r.warnings.iter().any(|w| w.contains("leads outside the workspace")), "{:?}", r.warnings);
    }
}
