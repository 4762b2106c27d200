//! Walking the workspace the way ripgrep does, with ripgrep's own `ignore` crate: `.gitignore`
//! (in a git repository or not), `.ignore`, `.git/info/exclude`, git's global excludes, the
//! ignore files of the directories above, and never a symlink followed (a link inside the
//! workspace may point anywhere).

use std::path::Path;

use ignore::WalkBuilder;

/// A walker over `root` with those rules; `hidden` skips dot files and directories too.
pub(crate) fn builder(root: &Path, hidden: bool) -> WalkBuilder {
    let mut b = WalkBuilder::new(root);
    b.hidden(hidden)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        // A demanding user's .gitignore counts before `git init` too.
        .require_git(false)
        .follow_links(false);
    b
}
