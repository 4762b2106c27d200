//! The invariants the docs state about the code, checked on the code itself: each folder of
//! `src/run/` uses only what its `mod.rs` says it "May use", the folders import each other in no
//! circle, `unsafe` stays in the listed files with a `// SAFETY:` comment on every block, module
//! docs cite no issue numbers, and `docs/architecture.md` lists every dependency of agent-min.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rs_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The folders of `src/run/`: those with a `mod.rs`.
fn folders() -> Vec<String> {
    let run = src().join("run");
    let mut v: Vec<String> = std::fs::read_dir(&run)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("mod.rs").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    v.sort();
    assert!(v.len() >= 10, "expected the concern folders under {}, found {v:?}", run.display());
    v
}

/// A file's code without comments and without its `#[cfg(test)]` modules (inline ones, up to
/// their closing brace at column 0, as rustfmt writes them). Names of `#[cfg(test)] mod x;`
/// files are added to `test_files`.
fn code_of(text: &str, test_files: &mut BTreeSet<String>) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") {
            let next = lines.peek().map(|l| l.trim()).unwrap_or("");
            if let Some(file) = next.strip_prefix("#[path = \"").and_then(|n| n.strip_suffix("\"]")) {
                test_files.insert(file.to_string());
                lines.next();
                lines.next();
                continue;
            }
            // `mod x;`, `pub(crate) mod x {`, …
            let item = next.split_once("mod ").map(|(vis, rest)| (vis.trim(), rest));
            let item = item.filter(|(vis, _)| vis.is_empty() || vis.starts_with("pub"));
            if let Some(name) = item.and_then(|(_, n)| n.strip_suffix(';')) {
                test_files.insert(format!("{name}.rs"));
                lines.next();
                continue;
            }
            if item.is_some() && next.ends_with('{') {
                for l in lines.by_ref() {
                    if l == "}" {
                        break;
                    }
                }
                continue;
            }
        }
        if t.starts_with("//") {
            continue;
        }
        // A trailing comment is not code either (a `//` inside a string literal is cut too,
        // which only loses text, never invents a path).
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// Every path into `crate::run` a piece of code names, as segments below `run`
/// (`crate::run::ui::term::Term` → `["ui", "term", "Term"]`), `use` groups expanded one level;
/// `super::` chains are resolved from `module` (the file's module path below `run`).
fn run_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let plain = Regex::new(r"crate::run::((?:[A-Za-z_][A-Za-z0-9_]*::)*)(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)").unwrap();
    let supers =
        Regex::new(r"(?m)(?:^|[^A-Za-z0-9_:])((?:super::)+)([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)")
            .unwrap();
    let mut out = Vec::new();
    for c in plain.captures_iter(code) {
        let prefix: Vec<String> = c[1].split("::").filter(|s| !s.is_empty()).map(str::to_string).collect();
        let last = &c[2];
        if let Some(group) = last.strip_prefix('{').and_then(|g| g.strip_suffix('}')) {
            for item in group.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let mut p = prefix.clone();
                p.extend(item.split("::").map(|s| s.trim().to_string()).filter(|s| s != "self" && !s.is_empty()));
                out.push(p);
            }
        } else {
            let mut p = prefix;
            p.push(last.to_string());
            out.push(p);
        }
    }
    for c in supers.captures_iter(code) {
        let n = c[1].matches("super::").count();
        if n > module.len() {
            continue; // beyond `run`: caught as a `crate::` path, or not a path into run
        }
        let mut p: Vec<String> = module[..module.len() - n].to_vec();
        p.extend(c[2].split("::").map(str::to_string));
        out.push(p);
    }
    out
}

/// What a folder's `mod.rs` says it may use: the `crate::run::…` paths named in its doc's
/// "May use:" paragraph (`None` if it has no such paragraph).
fn may_use(folder: &str) -> Option<Vec<Vec<String>>> {
    let text = std::fs::read_to_string(src().join("run").join(folder).join("mod.rs")).unwrap();
    let doc: Vec<&str> =
        text.lines().take_while(|l| l.starts_with("//!")).map(|l| l.trim_start_matches("//!").trim()).collect();
    let start = doc.iter().position(|l| l.contains("May use:"))?;
    let mut para = String::new();
    for (i, l) in doc[start..].iter().enumerate() {
        if l.is_empty() {
            break;
        }
        let l = if i == 0 { &l[l.find("May use:").unwrap()..] } else { l };
        para.push_str(l);
        para.push(' ');
    }
    let names = Regex::new(r"crate::run::([a-z_]+(?:::[a-z_]+)*)").unwrap();
    Some(names.captures_iter(&para).map(|c| c[1].split("::").map(str::to_string).collect()).collect())
}

/// For each folder, each path outside it that its (non-test) code uses, with where.
fn uses_by_folder() -> BTreeMap<String, Vec<(Vec<String>, String)>> {
    let run = src().join("run");
    let other = Regex::new(r"crate::([a-z_]+)::").unwrap();
    let mut all = BTreeMap::new();
    for folder in folders() {
        let dir = run.join(&folder);
        let files = rs_files(&dir);
        let mut test_files = BTreeSet::new();
        let codes: Vec<(PathBuf, String)> =
            files.iter().map(|f| (f.clone(), code_of(&std::fs::read_to_string(f).unwrap(), &mut test_files))).collect();
        let mut uses = Vec::new();
        for (file, code) in codes {
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            if test_files.contains(&name) || name == "testutil.rs" {
                continue;
            }
            let rel = file.strip_prefix(&run).unwrap();
            let mut module: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
            let last = module.pop().unwrap();
            if last != "mod.rs" {
                module.push(last.trim_end_matches(".rs").to_string());
            }
            let shown = format!("src/run/{}", rel.display());
            for p in run_paths(&code, &module) {
                if p.first().is_some_and(|f| f != &folder) {
                    uses.push((p, shown.clone()));
                }
            }
            // Nothing in a folder reaches up to the commands beside `run`.
            for c in other.captures_iter(&code) {
                assert_eq!(&c[1], "run", "{shown} uses crate::{}: a folder of run/ may not use a command", &c[1]);
            }
        }
        all.insert(folder, uses);
    }
    all
}

#[test]
fn each_folder_uses_only_what_its_mod_rs_says_it_may_use() {
    let mut wrong = Vec::new();
    for (folder, uses) in uses_by_folder() {
        let Some(allowed) = may_use(&folder) else {
            wrong.push(format!("src/run/{folder}/mod.rs has no \"May use:\" line in its module doc"));
            continue;
        };
        for (path, file) in uses {
            // `use crate::run::ui::term::Term`: allowed by `ui` or `ui::term`, not by `ui::redact`.
            let ok = allowed.iter().any(|a| a.len() <= path.len() && path[..a.len()] == a[..]);
            if !ok {
                wrong.push(format!(
                    "{file} uses crate::run::{}, which src/run/{folder}/mod.rs does not list under \"May use:\" ({})",
                    path.join("::"),
                    allowed.iter().map(|a| a.join("::")).collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_folders_import_each_other_in_no_circle() {
    let uses = uses_by_folder();
    let folders: BTreeSet<String> = uses.keys().cloned().collect();
    let graph: BTreeMap<String, BTreeSet<String>> = uses
        .iter()
        .map(|(f, u)| (f.clone(), u.iter().map(|(p, _)| p[0].clone()).filter(|t| folders.contains(t)).collect()))
        .collect();
    // Depth-first search; a node met again on the current path closes a circle.
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        circles: &mut Vec<String>,
    ) {
        if let Some(i) = path.iter().position(|p| p == n) {
            circles.push(format!("{} → {n}", path[i..].join(" → ")));
            return;
        }
        if !done.insert(n.to_string()) {
            return;
        }
        path.push(n.to_string());
        for m in &g[n] {
            visit(m, g, path, done, circles);
        }
        path.pop();
    }
    let mut circles = Vec::new();
    for f in &folders {
        visit(f, &graph, &mut Vec::new(), &mut BTreeSet::new(), &mut circles);
    }
    circles.sort();
    circles.dedup();
    assert!(circles.is_empty(), "folders of src/run import each other in a circle:\n{}", circles.join("\n"));
}

#[test]
fn the_may_use_check_sees_paths_groups_and_supers() {
    let code =
        "use crate::run::ui::term::Term;\nuse crate::run::{llm::Message, clock};\nlet x = super::super::prompt::f();\n";
    let got = run_paths(code, &["tools".to_string(), "exec".to_string()]);
    let want: Vec<Vec<String>> = [&["ui", "term", "Term"][..], &["llm", "Message"], &["clock"], &["prompt", "f"]]
        .iter()
        .map(|p| p.iter().map(|s| s.to_string()).collect())
        .collect();
    assert_eq!(got, want);
    let mut tf = BTreeSet::new();
    let code = code_of("use a;\n// use crate::run::x;\n#[cfg(test)]\nmod tests {\n    use crate::run::y;\n}\n#[cfg(test)]\nmod more_tests;\n", &mut tf);
    assert_eq!(code, "use a;\n");
    assert!(tf.contains("more_tests.rs"));
}

/// Files of agent-min that may hold `unsafe` outside tests: the `sys` modules, and two that
/// set up a child between fork and exec or make a pipe for curl.
const UNSAFE_FILES: &[&str] = &[
    "run/sandbox/sys.rs",
    "run/llm/curl.rs",     // the key's pipe (pipe2, fcntl, OwnedFd::from_raw_fd) and curl's pre_exec
    "run/ui/interrupt.rs", // kill(2) and the pre_exec that ties a child's life to the agent's
    "run/spawn/sys.rs",    // the child's pre-exec setup and the watchdog (fork, prctl, Landlock)
    "run/project/hooks/sys.rs", // the sealed memory copy a hook runs from (memfd, seals)
    "run/clock/sys.rs",    // localtime_r, for the machine's offset from UTC
];

#[test]
fn unsafe_is_only_in_the_listed_files_and_every_block_says_why() {
    let word = Regex::new(r"\bunsafe\b").unwrap();
    let mut wrong = Vec::new();
    for file in rs_files(&src()) {
        let rel = file.strip_prefix(src()).unwrap().display().to_string();
        let mut test_files = BTreeSet::new();
        let text = std::fs::read_to_string(&file).unwrap();
        let code = code_of(&text, &mut test_files);
        if !word.is_match(&code) {
            continue;
        }
        if !UNSAFE_FILES.contains(&rel.as_str()) {
            wrong.push(format!(
                "src/{rel} has `unsafe`; it belongs in a small sys module (or in UNSAFE_FILES with a reason)"
            ));
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let code_part = l.split("//").next().unwrap_or("");
            if !word.is_match(code_part) || code_part.trim_start().starts_with("#!") {
                continue;
            }
            // A block says why in a `// SAFETY:` comment; an `unsafe fn` in its `# Safety` doc.
            let said = lines[i.saturating_sub(8)..=i].iter().any(|l| l.contains("// SAFETY:"))
                || code_part.contains("unsafe fn")
                    && lines[i.saturating_sub(8)..i].iter().any(|l| l.trim() == "/// # Safety");
            if !said {
                wrong.push(format!("src/{rel}:{}: an `unsafe` without a `// SAFETY:` comment above it", i + 1));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn module_docs_cite_no_issue_numbers() {
    let issue = Regex::new(r"(?i)\bissues? #?[0-9]+").unwrap();
    let mut wrong = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in rs_files(&src()).into_iter().chain(rs_files(&root.join("examples"))) {
        for (i, l) in std::fs::read_to_string(&file).unwrap().lines().enumerate() {
            if l.trim_start().starts_with("//") && issue.is_match(l) {
                wrong.push(format!("{}:{}: {}", file.display(), i + 1, l.trim()));
            }
        }
    }
    assert!(wrong.is_empty(), "say what the code does, not which issue asked for it:\n{}", wrong.join("\n"));
}

#[test]
fn architecture_md_lists_every_dependency_of_agent_min() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let deps: Vec<&str> = manifest
        .split("[dependencies]")
        .nth(1)
        .expect("a [dependencies] table")
        .lines()
        .take_while(|l| !l.starts_with('['))
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.trim()))
        .filter(|k| !k.is_empty() && !k.starts_with('#'))
        .collect();
    assert!(deps.len() >= 5, "{deps:?}");
    let arch = std::fs::read_to_string(root.join("../docs/architecture.md")).unwrap();
    let row = arch.lines().find(|l| l.starts_with("| `agent-min/`")).expect("architecture.md's agent-min row");
    let listed = row.rsplit('|').nth(1).unwrap();
    let names: BTreeSet<&str> = listed.split(',').map(|s| s.trim()).collect();
    let missing: Vec<&&str> = deps.iter().filter(|d| !names.contains(**d)).collect();
    assert!(missing.is_empty(), "docs/architecture.md's agent-min row does not list {missing:?}: {row}");
    let extra: Vec<&&str> = names.iter().filter(|n| !deps.contains(n)).collect();
    assert!(extra.is_empty(), "docs/architecture.md's agent-min row lists {extra:?}, which Cargo.toml does not have");
}
