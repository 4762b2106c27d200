//! A person editing a proposed file edit before approving it (`e`), and what the model is told:
//! Cline's `fileEditWithUserChanges` with the person's changes as a jsdiff patch.

use crate::common;

use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(60);

/// Runs an interactive task whose person types `input`, with `editor` as `$EDITOR`.
fn run_with_editor(ws: &std::path::Path, server: &Server, editor: &str, input: &[u8]) -> Run {
    let url = server.anthropic_url();
    let args = ["--no-save", "--provider", "anthropic", "--base-url", &url, "--tool-calls", "xml", "t"];
    run_interactive_env(ws, &args, &[("EDITOR", editor), ("VISUAL", "")], input, LIMIT)
}

#[test]
fn the_persons_edit_is_saved_and_sent_back_as_clines_user_changes() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "\nhello world\nbye\n")])),
        anthropic(&completion("ok")),
    ]);
    let r = run_with_editor(ws.path(), &server, "sed -i s/world/there/", b"e\n");
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("[e]dit first"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(ws.path().join("a.txt")).unwrap(), "hello there\nbye");
    let next = server.requests()[1].last_user();
    let want = "[write_to_file for 'a.txt'] Result:\nThe user made the following updates to your content:\n\n@@ -1,2 +1,2 @@\n-hello world\n+hello there\n bye\n\n\nThe updated content, which includes both your original modifications and the additional edits, has been successfully saved to a.txt. Here is the full, updated content of the file that was saved:\n\n<final_file_content path=\"a.txt\">\nhello there\nbye\n</final_file_content>\n\nPlease note:\n1. You do not need to re-write the file with these changes, as they have already been applied.";
    assert!(next.starts_with(want), "{next}");
    // Cline's `user_edited`: the next details list the file.
    let section = "# Recently Modified Files\nThese files have been modified since you last accessed them (file was just edited so you may need to re-read it before editing):\na.txt\n\n# Current Time";
    assert!(next.contains(section), "{next}");
}

#[test]
fn an_edit_that_changes_nothing_is_a_plain_success_and_a_failed_editor_writes_nothing() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "x\n")])),
        anthropic(&tool("write_to_file", &[("path", "b.txt"), ("content", "y\n")])),
        anthropic(&completion("ok")),
    ]);
    let r = run_with_editor(ws.path(), &server, "true", b"e\n");
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert!(
        reqs[1]
            .last_user()
            .starts_with("[write_to_file for 'a.txt'] Result:\nThe content was successfully saved to a.txt."),
        "{}",
        reqs[1].last_user()
    );
    // The same editor for the second file, which the person answers with end of input: denied.
    assert!(
        reqs[2].last_user().starts_with(
            "[write_to_file for 'b.txt'] Result:\nThe user denied this operation. The file was not created."
        ),
        "{}",
        reqs[2].last_user()
    );

    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "x\n")])),
        anthropic(&completion("ok")),
    ]);
    let r = run_with_editor(ws.path(), &server, "false", b"e\n");
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!ws.path().join("a.txt").exists());
    let next = server.requests()[1].last_user();
    assert!(next.contains("The person's editor failed (the editor `false` exited with exit status: 1"), "{next}");
}

/// An edit of a long file is shown to the person who approves it: past 4,000,000 old × new
/// lines the preview was one line, "(too large to preview)".
#[test]
fn an_edit_of_a_long_file_shows_its_lines_at_the_prompt() {
    let ws = tempfile::tempdir().unwrap();
    let text: String = (1..=5_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ws.path().join("big.txt"), &text).unwrap();
    let diff = "------- SEARCH\nline 2500\n=======\nchanged 2500\n+++++++ REPLACE";
    let server = Server::start(vec![
        anthropic(&tool("replace_in_file", &[("path", "big.txt"), ("diff", diff)])),
        anthropic(&completion("ok")),
    ]);
    let r = run_with_editor(ws.path(), &server, "true", b"y\n");
    assert_eq!(r.code, Some(0), "{}", r.all());
    let shown = r.all();
    assert!(shown.contains("  │ -line 2500\n  │ +changed 2500\n"), "{shown}");
    assert!(shown.contains("  │  line 2499\n") && shown.contains("  │  line 2501\n"), "{shown}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("big.txt")).unwrap(),
        text.replace("line 2500\n", "changed 2500\n")
    );
}

/// A new file is shown whole to the person who approves it (it was its first 40 lines), up to
/// a bound past which the prompt says how to see the rest.
#[test]
fn a_new_file_is_shown_whole_at_the_prompt() {
    let ws = tempfile::tempdir().unwrap();
    let content: String = (1..=100).map(|i| format!("echo line {i}\n")).collect();
    let huge: String = (1..=6_000).map(|i| format!("row {i}\n")).collect();
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "run.sh"), ("content", &content)])),
        anthropic(&tool("write_to_file", &[("path", "huge.txt"), ("content", &huge)])),
        anthropic(&completion("ok")),
    ]);
    let r = run_with_editor(ws.path(), &server, "true", b"y\ny\n");
    assert_eq!(r.code, Some(0), "{}", r.all());
    let shown = r.all();
    assert!(shown.contains("  │ +echo line 99\n  │ +echo line 100\n"), "{shown}");
    let cut = "  │ +row 5000\n  │ … and 1000 more lines not shown (a preview stops at 5000 lines or 256 KB); answer e to see the whole proposed file in your editor\n";
    assert!(shown.contains(cut), "{}", &shown[shown.len().saturating_sub(2000)..]);
    assert_eq!(shown.matches("more lines not shown").count(), 1);
}
