//! End-to-end: a Cline project's own setup — rules, `.clineignore`, hooks — through the real
//! binary, real curl and the scripted server: what reaches the model is what Cline would send.
//! Each test has its own HOME, so the global Cline directories are the test's.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(60);

/// A workspace and a home of its own.
struct Env {
    ws: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env { ws: tempfile::tempdir().unwrap(), home: tempfile::tempdir().unwrap() }
    }
    fn ws(&self) -> &Path {
        self.ws.path()
    }
    fn home(&self) -> &Path {
        self.home.path()
    }
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        write(self.ws(), rel, text)
    }
    fn vars(&self) -> Vec<(String, String)> {
        let h = self.home().display().to_string();
        vec![
            ("HOME".into(), h.clone()),
            ("XDG_CONFIG_HOME".into(), format!("{h}/.config")),
            ("XDG_STATE_HOME".into(), format!("{h}/.state")),
        ]
    }
    fn run(&self, server: &Server, extra: &[&str]) -> Run {
        let base = anthropic_args(server);
        let vars = self.vars();
        let envs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        run_agent(self.ws(), &args_with(&base, extra), &envs, LIMIT)
    }
    /// A run without --yolo where the person types `input`.
    fn run_typing(&self, server: &Server, extra: &[&str], input: &[u8]) -> Run {
        use std::io::Write;
        let base: Vec<String> = anthropic_args(server).into_iter().filter(|a| a != "--yolo").collect();
        let mut cmd = std::process::Command::new(bin());
        cmd.arg("run")
            .args(&base)
            .args(extra)
            .current_dir(self.ws())
            .env("ANTHROPIC_API_KEY", KEY)
            .env("NO_COLOR", "1");
        for (k, v) in self.vars() {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        wait_limited(child, LIMIT)
    }
}

fn write(root: &Path, rel: &str, text: &str) -> PathBuf {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

fn system(req: &Req) -> String {
    req.body["system"].as_str().expect("system prompt").to_string()
}

/// The custom-instructions part of a system prompt.
fn instructions(req: &Req) -> String {
    let s = system(req);
    let at =
        s.find("\n\n====\n\nUSER'S CUSTOM INSTRUCTIONS\n\n").unwrap_or_else(|| panic!("no custom instructions in {s}"));
    s[at..].to_string()
}

const PREAMBLE: &str = "\n\n====\n\nUSER'S CUSTOM INSTRUCTIONS\n\nThe following additional instructions are provided by the user, and should be followed to the best of your ability without interfering with the TOOL USE guidelines.\n\n";

#[test]
fn rules_from_every_source_reach_the_system_prompt_under_clines_headings_in_clines_order() {
    let e = Env::new();
    write(e.home(), "Documents/Cline/Rules/style.md", "Global: write short functions.\n");
    write(e.home(), ".config/agent-min/rules/mine.md", "Mine: British spelling.");
    let extra = write(e.home(), "extra.md", "Extra: be brief.");
    e.write(".clinerules/01-core.md", "Core rule.");
    e.write(".clinerules/02-web.md", "---\npaths: [\"web/**\"]\n---\nWeb rule.");
    e.write(".clinerules/hooks/README.md", "not a rule");
    e.write(".clinerules/workflows/release.md", "not a rule");
    e.write(".cursorrules", "Cursor file rule.");
    e.write(".cursor/rules/react.mdc", "---\ndescription: React\nglobs: \"*.tsx\"\n---\nCursor dir rule.");
    e.write(".windsurfrules", "Windsurf rule.");
    e.write("AGENTS.md", "Top agents.");
    e.write("pkg/AGENTS.md", "Pkg agents.");
    e.write(".clineignore", "secrets/\n");
    let server = Server::start(vec![anthropic(&completion("ok"))]);
    let r = e.run(&server, &["--rules", &extra.display().to_string(), "do it"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let cwd = e.ws().display().to_string();
    let home = e.home().display().to_string();
    let want = format!(
        "{PREAMBLE}# .clinerules/\n\nThe following is provided by a global .clinerules/ directory, located at {home}/Documents/Cline/Rules, where the user has specified instructions for all working directories:\n\nstyle.md\nGlobal: write short functions.\n\n\
# .clinerules/\n\nThe following is provided by a global .clinerules/ directory, located at {home}/.config/agent-min/rules, where the user has specified instructions for all working directories:\n\nmine.md\nMine: British spelling.\n\n\
# --rules\n\nThe following is provided by rule files given on the command line (--rules), where the user has specified instructions for this task:\n\n{home}/extra.md\nExtra: be brief.\n\n\
# .clinerules/\n\nThe following is provided by a root-level .clinerules/ directory where the user has specified instructions for this working directory ({cwd})\n\n.clinerules/01-core.md\nCore rule.\n\n\
# .cursorrules\n\nThe following is provided by a root-level .cursorrules file where the user has specified instructions for this working directory ({cwd})\n\nCursor file rule.\n\n\
# .cursor/rules\n\nThe following is provided by a root-level .cursor/rules directory where the user has specified instructions for this working directory ({cwd})\n\n.cursor/rules/react.mdc\nCursor dir rule.\n\n\
# .windsurfrules\n\nThe following is provided by a root-level .windsurfrules file where the user has specified instructions for this working directory ({cwd})\n\nWindsurf rule.\n\n\
# AGENTS.md\n\nThe following is provided by AGENTS.md files found recursively throughout this working directory ({cwd}) where the user has specified instructions. Nested AGENTS.md will be combined below, and you should only apply the instructions for each AGENTS.md file that is directly applicable to the current task, i.e. if you are reading or writing to a file in that directory.\n\n## AGENTS.md\n\nTop agents.\n\n## pkg/AGENTS.md\n\nPkg agents.\n\n\
# .clineignore\n\n(The following is provided by a root-level .clineignore file where the user has specified files and directories that should not be accessed. When using list_files, you'll notice a 🔒 next to files that are blocked. Attempting to access the file's contents e.g. through read_file will result in an error.)\n\nsecrets/\n\n.clineignore"
    );
    let reqs = server.requests();
    assert_eq!(instructions(&reqs[0]), want);
    assert!(system(&reqs[0]).starts_with("You are Cline"));
}

#[test]
fn a_conditional_rule_applies_from_the_request_after_the_model_touches_its_paths() {
    let e = Env::new();
    e.write(".clinerules", "---\npaths:\n  - \"web/**\"\n---\n\nWeb rule: use tabs.\n");
    e.write("web/app.ts", "let x = 1;\n");
    let server =
        Server::start(vec![anthropic(&tool("read_file", &[("path", "web/app.ts")])), anthropic(&completion("ok"))]);
    let r = e.run(&server, &["tidy the code"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert!(!system(&reqs[0]).contains("USER'S CUSTOM INSTRUCTIONS"), "no path of web/ yet");
    let cwd = e.ws().display().to_string();
    assert_eq!(
        instructions(&reqs[1]),
        format!("{PREAMBLE}# .clinerules\n\nThe following is provided by a root-level .clinerules file where the user has specified instructions for this working directory ({cwd})\n\nWeb rule: use tabs.")
    );
    // A path named in the task activates it on the first request.
    let server = Server::start(vec![anthropic(&completion("ok"))]);
    let r = e.run(&server, &["fix web/app.ts"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(system(&server.requests()[0]).ends_with("\n\nWeb rule: use tabs."));
}

#[test]
fn a_rule_whose_frontmatter_does_not_parse_is_sent_whole() {
    let e = Env::new();
    e.write(".clinerules/scoped.md", "---\npaths: [web/**\n---\nScoped rule.");
    let server = Server::start(vec![anthropic(&completion("ok"))]);
    assert_eq!(e.run(&server, &["t"]).code, Some(0));
    assert!(instructions(&server.requests()[0])
        .ends_with("\n\n.clinerules/scoped.md\n---\npaths: [web/**\n---\nScoped rule."));
}

#[test]
fn no_rules_keeps_only_the_rules_files_and_the_clineignore_and_a_missing_rules_file_is_a_usage_error() {
    let e = Env::new();
    write(e.home(), "Documents/Cline/Rules/g.md", "Global.");
    e.write(".clinerules", "Local.");
    e.write("AGENTS.md", "Agents.");
    e.write(".clineignore", "*.pem");
    let only = write(e.home(), "ci.md", "CI rule.");
    let server = Server::start(vec![anthropic(&completion("ok"))]);
    let r = e.run(&server, &["--no-rules", "--rules", &only.display().to_string(), "t"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let s = instructions(&server.requests()[0]);
    assert!(s.contains("CI rule.") && s.contains("# .clineignore"), "{s}");
    assert!(!s.contains("Global.") && !s.contains("Local.") && !s.contains("Agents."), "{s}");

    let server = Server::start(vec![]);
    let r = e.run(&server, &["--rules", "missing.md", "t"]);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(r.stderr.contains("--rules missing.md") && r.stderr.contains("existing rule file"), "{}", r.stderr);
    assert!(server.requests().is_empty());
}

#[test]
fn clineignore_walls_files_off_from_every_tool_and_an_edit_applies_on_the_next_call() {
    let e = Env::new();
    e.write(".clineignore", "# keep out\nsecrets/\n*.key\n!public.key\n");
    e.write("secrets/token.txt", "TOKEN=hunter2\n");
    e.write("app.key", "KEYDATA\n");
    e.write("public.key", "PUBLIC\n");
    e.write("src/main.rs", "fn main() {} // hunter2\n");
    let server = Server::start(vec![
        anthropic(&tool("read_file", &[("path", "secrets/token.txt")])),
        anthropic(&tool("list_files", &[("path", "."), ("recursive", "true")])),
        anthropic(&tool("search_files", &[("path", "."), ("regex", "hunter2|KEYDATA|PUBLIC")])),
        anthropic(&tool("execute_command", &[("command", "cat app.key"), ("requires_approval", "false")])),
        anthropic(&tool("write_to_file", &[("path", "new.key"), ("content", "x")])),
        anthropic(&tool(
            "replace_in_file",
            &[("path", ".clineignore"), ("diff", "------- SEARCH\nsecrets/\n=======\n+++++++ REPLACE")],
        )),
        anthropic(&tool(
            "execute_command",
            &[("command", "printf '*.key\\n' > .clineignore"), ("requires_approval", "false")],
        )),
        anthropic(&tool("read_file", &[("path", "secrets/token.txt")])),
        anthropic(&completion("ok")),
    ]);
    let r = e.run(&server, &["look around"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let blocked = |p: &str| {
        format!("The tool execution failed with the following error:\n<error>\nAccess to {p} is blocked by the .clineignore file settings. You must try to continue in the task without using this file, or ask the user to update the .clineignore file.\n</error>")
    };
    assert!(reqs[1]
        .last_user()
        .starts_with(&format!("[read_file for 'secrets/token.txt'] Result:\n{}", blocked("secrets/token.txt"))));
    let listing = reqs[2].last_user();
    for line in ["🔒 .clineignore", "🔒 app.key", "public.key", "secrets/", "🔒 secrets/token.txt", "src/main.rs"]
    {
        assert!(listing.lines().any(|l| l == line), "{line:?} in {listing}");
    }
    let found = reqs[3].last_user();
    assert!(found.contains("src/main.rs:1:") && found.contains("public.key:1: PUBLIC"), "{found}");
    assert!(!found.contains("token.txt") && !found.contains("app.key"), "{found}");
    assert!(reqs[4]
        .last_user()
        .starts_with(&format!("[execute_command for 'cat app.key'] Result:\n{}", blocked("app.key"))));
    assert!(reqs[5].last_user().contains(&blocked("new.key")));
    assert!(!e.ws().join("new.key").exists());
    assert!(reqs[6].last_user().contains(&blocked(".clineignore")));
    // The first-turn file listing carries the locks too.
    assert!(reqs[0].last_user().contains("\n🔒 app.key\n"), "{}", reqs[0].last_user());
    // After the edit, secrets/ is readable on the very next call.
    assert!(reqs[8].last_user().contains("1 | TOKEN=hunter2"), "{}", reqs[8].last_user());
    assert!(instructions(&reqs[8]).ends_with("\n\n*.key\n\n.clineignore"));
}
