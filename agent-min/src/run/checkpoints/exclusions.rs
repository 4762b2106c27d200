//! What checkpoints leave out: Cline's `CheckpointExclusions` patterns (build outputs, media,
//! caches, environment files, archives, databases, geospatial data, logs), the workspace's Git
//! LFS patterns, and files over [`MAX_FILE_BYTES`]. The workspace's own `.gitignore` files apply
//! as well: git reads them from the work tree.

use std::path::Path;

/// The suffix Cline gives a nested `.git` directory while a checkpoint is taken.
pub(crate) const GIT_DISABLED_SUFFIX: &str = "_disabled";

/// Files larger than this are left out of checkpoints (and reported).
pub(crate) const MAX_FILE_BYTES: u64 = 10 << 20;

/// Cline's default exclusions, in Cline's order (`getDefaultExclusions`).
const DEFAULT: &[&str] = &[
    ".git/",
    ".git_disabled/",
    // Build and development artifacts
    ".gradle/",
    ".idea/",
    ".parcel-cache/",
    ".pytest_cache/",
    ".next/",
    ".nuxt/",
    ".sass-cache/",
    ".vs/",
    ".vscode/",
    ".clinerules/",
    "Pods/",
    "__pycache__/",
    "bin/",
    "build/",
    "bundle/",
    "coverage/",
    "deps/",
    "dist/",
    "env/",
    "node_modules/",
    "obj/",
    "out/",
    "pycache/",
    "target/dependency/",
    "temp/",
    "vendor/",
    "venv/",
    // Media
    "*.jpg",
    "*.jpeg",
    "*.png",
    "*.gif",
    "*.bmp",
    "*.ico",
    "*.webp",
    "*.tiff",
    "*.tif",
    "*.raw",
    "*.heic",
    "*.avif",
    "*.eps",
    "*.psd",
    "*.3gp",
    "*.aac",
    "*.aiff",
    "*.asf",
    "*.avi",
    "*.divx",
    "*.flac",
    "*.m4a",
    "*.m4v",
    "*.mkv",
    "*.mov",
    "*.mp3",
    "*.mp4",
    "*.mpeg",
    "*.mpg",
    "*.ogg",
    "*.opus",
    "*.rm",
    "*.rmvb",
    "*.vob",
    "*.wav",
    "*.webm",
    "*.wma",
    "*.wmv",
    // Cache and temporary files
    "*.DS_Store",
    "*.bak",
    "*.cache",
    "*.crdownload",
    "*.dmp",
    "*.dump",
    "*.eslintcache",
    "*.lock",
    "*.log",
    "*.old",
    "*.part",
    "*.partial",
    "*.pyc",
    "*.pyo",
    "*.stackdump",
    "*.swo",
    "*.swp",
    "*.temp",
    "*.tmp",
    "*.Thumbs.db",
    // Environment and config files
    "*.env*",
    "*.local",
    "*.development",
    "*.production",
    // Large data files
    "*.zip",
    "*.tar",
    "*.gz",
    "*.rar",
    "*.7z",
    "*.iso",
    "*.bin",
    "*.exe",
    "*.dll",
    "*.so",
    "*.dylib",
    "*.dat",
    "*.dmg",
    "*.msi",
    // Databases
    "*.arrow",
    "*.accdb",
    "*.aof",
    "*.avro",
    "*.bak",
    "*.bson",
    "*.csv",
    "*.db",
    "*.dbf",
    "*.dmp",
    "*.frm",
    "*.ibd",
    "*.mdb",
    "*.myd",
    "*.myi",
    "*.orc",
    "*.parquet",
    "*.pdb",
    "*.rdb",
    "*.sqlite",
    // Geospatial datasets
    "*.shp",
    "*.shx",
    "*.dbf",
    "*.prj",
    "*.sbn",
    "*.sbx",
    "*.shp.xml",
    "*.cpg",
    "*.gdb",
    "*.mdb",
    "*.gpkg",
    "*.kml",
    "*.kmz",
    "*.gml",
    "*.geojson",
    "*.dem",
    "*.asc",
    "*.img",
    "*.ecw",
    "*.las",
    "*.laz",
    "*.mxd",
    "*.qgs",
    "*.grd",
    "*.csv",
    "*.dwg",
    "*.dxf",
    // Logs
    "*.error",
    "*.log",
    "*.logs",
    "*.npm-debug.log*",
    "*.out",
    "*.stdout",
    "yarn-debug.log*",
    "yarn-error.log*",
];

/// Added to Cline's: a submodule's `.git` *file*, while disabled, is a file `.git_disabled`
/// (Cline's `.git_disabled/` matches directories only).
const DISABLED_FILE: &str = ".git_disabled";

/// Cline's `getLfsPatterns`: the first word of each `.gitattributes` line with `filter=lfs`.
pub(crate) fn lfs_patterns(workspace: &Path) -> Vec<String> {
    let Ok(text) = crate::run::checkpoints::read_small(&workspace.join(".gitattributes"), 1 << 20) else {
        return Vec::new();
    };
    text.split('\n')
        .filter(|l| l.contains("filter=lfs"))
        .map(|l| l.split(' ').next().unwrap_or_default().trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// The `info/exclude` file's text (Cline's `writeExcludesFile`: patterns joined by newlines),
/// and the state directory when it is inside the workspace (`state`, relative to it; empty
/// when it is the workspace: then what it keeps, its tasks, checkpoints and hook approvals).
pub(crate) fn exclude_file(workspace: &Path, state: Option<&Path>) -> String {
    let lfs = lfs_patterns(workspace);
    let state: Vec<String> = match state {
        Some(rel) if rel.as_os_str().is_empty() => {
            vec!["/tasks/".into(), "/checkpoints/".into(), "/hook-approvals.json".into()]
        }
        Some(rel) => vec![format!("/{}/", escape_pattern(&rel.to_string_lossy()))],
        None => vec![],
    };
    DEFAULT.iter().chain([&DISABLED_FILE]).map(|s| s.to_string()).chain(lfs).chain(state).collect::<Vec<_>>().join("\n")
}

/// `path` as a gitignore pattern that matches only itself.
fn escape_pattern(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '!' | '#') || (c == ' ' && out.is_empty()) {
            out.push('\\');
        }
        out.push(c);
    }
    // A trailing space is dropped by git unless escaped.
    if out.ends_with(' ') {
        out.insert(out.len() - 1, '\\');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clines_patterns_then_lfs_ones() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join(".gitattributes"),
            "*.psd filter=lfs diff=lfs merge=lfs -text\n*.md text\nassets/** filter=lfs\n",
        )
        .unwrap();
        let text = exclude_file(d.path(), None);
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines[0], ".git/");
        assert!(lines.contains(&"node_modules/") && lines.contains(&"*.env*") && lines.contains(&"*.log"));
        assert!(!lines.contains(&"*.svg"), "Cline keeps SVGs");
        assert_eq!(&lines[lines.len() - 2..], &["*.psd", "assets/**"]);
        // A state directory inside the workspace: anchored, its special characters escaped.
        let text = exclude_file(d.path(), Some(Path::new("state/#1 [x]*")));
        assert_eq!(text.split('\n').next_back(), Some(r"/state/\#1 \[x\]\*/"));
    }

    #[test]
    fn lfs_patterns_survive_a_gitattributes_that_is_not_utf8() {
        let d = tempfile::tempdir().unwrap();
        let bytes = b"# caf\xe9 (Latin-1)\n*.bin filter=lfs diff=lfs\n\xff\xfe.dat filter=lfs\n";
        std::fs::write(d.path().join(".gitattributes"), bytes).unwrap();
        assert_eq!(lfs_patterns(d.path()), vec!["*.bin", "\u{fffd}\u{fffd}.dat"]);
    }
}
