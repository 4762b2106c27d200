//! End-to-end: Cline's `@` mentions in the task (`parseMentions`) through the real binary, real
//! curl, real git and the scripted server: the first request carries what they name.

use crate::common;

use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn a_file_mention_and_git_changes_reach_the_model_in_the_first_request() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = ws.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.rs"), "fn answer() -> u32 { 42 }\n").unwrap();
    std::fs::write(root.join("notes.txt"), "first\n").unwrap();
    git(root, &["init", "-q"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "start"]);
    std::fs::write(root.join("notes.txt"), "first\nsecond\n").unwrap();
    std::fs::write(root.join("outside.txt"), "x").unwrap();

    let server = Server::start(vec![anthropic(&completion("explained"))]);
    let h = home.path().display().to_string();
    let envs = [("HOME", h.as_str())];
    let task = "Explain @/src/a.rs, then review @git-changes. Not @/../etc/passwd";
    let r = run_agent(root, &args_with(&anthropic_args(&server), &[task]), &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let first = server.requests()[0].body["messages"][0]["content"].clone();
    let first = text_of(&first);
    assert!(
        first.starts_with(
            "<task>\nExplain 'src/a.rs' (see below for file content), then review Working directory changes (see below for details). Not '../etc/passwd' (see below for file content)\n</task>\n\n<file_content path=\"src/a.rs\">\nfn answer() -> u32 { 42 }\n\n</file_content>\n\n<git_working_state>\nWorking directory changes:\n\n M notes.txt\n?? outside.txt\n\n\ndiff --git a/notes.txt b/notes.txt"
        ),
        "{first}"
    );
    assert!(first.contains(" first\n+second\n</git_working_state>"), "{first}");
    assert!(
        first.contains("<file_content path=\"../etc/passwd\">\nError fetching content: Failed to access path \"../etc/passwd\": it resolves outside the workspace"),
        "{first}"
    );
    assert!(!first.contains("root:"), "{first}");
    // The blocks come before the environment details, which stay last.
    assert!(first.find("</git_working_state>") < first.find("<environment_details>"), "{first}");
    // Cline's `# Workspace Configuration`: the workspace's path, name and HEAD (no remote).
    let head = git(root, &["rev-parse", "HEAD"]);
    let path = root.display().to_string();
    let name = root.file_name().unwrap().to_str().unwrap();
    let configuration = format!(
        "\n\n# Workspace Configuration\n{{\n  \"workspaces\": {{\n    \"{path}\": {{\n      \"hint\": \"{name}\",\n      \"latestGitCommitHash\": \"{}\"\n    }}\n  }}\n}}\n\n# Detected CLI Tools",
        head.trim()
    );
    assert!(first.contains(&configuration), "{first}");
}

/// A file a mention added is watched, as Cline's `parseMentions` tracks it: changed by a
/// command later, it is in the next environment details' `# Recently Modified Files`.
#[test]
fn a_mentioned_file_changed_later_is_reported_as_recently_modified() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", "echo two >> a.txt"), ("requires_approval", "false")])),
        anthropic(&completion("ok")),
    ]);
    let r = run_agent(ws.path(), &args_with(&anthropic_args(&server), &["Tidy @/a.txt"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let users: Vec<String> = server.requests().iter().map(|q| q.last_user()).collect();
    let section = "# Recently Modified Files\nThese files have been modified since you last accessed them (file was just edited so you may need to re-read it before editing):\na.txt\n\n# Current Time";
    assert!(!users[0].contains("# Recently Modified Files"), "{}", users[0]);
    assert!(users[1].contains(section), "after the command changed it: {}", users[1]);
}

/// So is a file named in the person's answer to a question, typed at the terminal.
#[test]
fn a_file_mentioned_in_an_answer_and_changed_later_is_reported_as_recently_modified() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    let server = Server::start(vec![
        anthropic(&tool("ask_followup_question", &[("question", "Which file?")])),
        anthropic(&tool("execute_command", &[("command", "echo two >> a.txt"), ("requires_approval", "false")])),
        anthropic(&completion("ok")),
    ]);
    let base: Vec<String> = anthropic_args(&server).into_iter().filter(|a| a != "--yolo").collect();
    let r = run_interactive(ws.path(), &args_with(&base, &["--no-save", "t"]), b"@/a.txt\ny\n", LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let users: Vec<String> = server.requests().iter().map(|q| q.last_user()).collect();
    assert!(users[1].contains("<file_content path=\"a.txt\">"), "{}", users[1]);
    let section = "# Recently Modified Files\nThese files have been modified since you last accessed them (file was just edited so you may need to re-read it before editing):\na.txt\n\n# Current Time";
    assert!(users[2].contains(section), "after the command changed it: {}", users[2]);
}
