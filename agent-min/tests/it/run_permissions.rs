//! `CLINE_COMMAND_PERMISSIONS` end to end, through real curl and the scripted server: a refused
//! command never runs and the model's next request carries Cline's refusal text; an allowed one
//! still runs.

use crate::common;

use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(60);

fn exec(cmd: &str) -> Resp {
    anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")]))
}

#[test]
fn a_refused_chain_never_runs_and_the_model_gets_clines_text() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        exec("echo ok && touch pwned"),
        exec("echo hi & touch pwned2"),
        exec("echo fine"),
        anthropic(&completion("Done.")),
    ]);
    let base = anthropic_args(&server);
    let rules = r#"{"allow": ["echo *"], "deny": ["rm *"]}"#;
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[("CLINE_COMMAND_PERMISSIONS", rules)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!ws.path().join("pwned").exists() && !ws.path().join("pwned2").exists(), "a refused command ran");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    assert_eq!(
        common::without_reminder(&reqs[1].last_user()).split("\n\n<environment_details>").next().unwrap(),
        "[execute_command for 'echo ok && touch pwned'] Result:\nThe tool execution failed with the following error:\n<error>\nCommand execution blocked by CLINE_COMMAND_PERMISSIONS: Command \"echo ok && touch pwned\" was denied by CLINE_COMMAND_PERMISSIONS. Segment \"touch pwned\" segment_no_match.. You must try a different approach or ask the user to update the permission settings.\n</error>"
    );
    // Ours: Cline glues `echo hi touch pwned2` together across `&` and lets it run.
    assert!(
        reqs[2].last_user().contains("Segment \"touch pwned2\" segment_no_match.. You must try"),
        "{}",
        reqs[2].last_user()
    );
    assert!(
        reqs[3].last_user().contains(
            "[execute_command for 'echo fine'] Result:\nCommand executed successfully (exit code 0).\nOutput:\nfine"
        ),
        "{}",
        reqs[3].last_user()
    );
    // The terminal shows what Cline says (`command_permission_denied`).
    assert!(
        r.stderr.contains("✗ Command \"echo ok && touch pwned\" was denied by CLINE_COMMAND_PERMISSIONS. Segment \"touch pwned\" segment_no_match."),
        "{}",
        r.stderr
    );
}

#[test]
fn an_unreadable_variable_refuses_every_command_and_names_the_fix() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![exec("touch pwned"), anthropic(&completion("Done."))]);
    let base = anthropic_args(&server);
    let r =
        run_agent(ws.path(), &args_with(&base, &["t"]), &[("CLINE_COMMAND_PERMISSIONS", "{allow: [npm *]}")], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!ws.path().join("pwned").exists(), "the command ran under a broken CLINE_COMMAND_PERMISSIONS");
    let answer = server.requests()[1].last_user();
    assert!(
        answer.contains("Command \"touch pwned\" was denied by CLINE_COMMAND_PERMISSIONS. Reason: CLINE_COMMAND_PERMISSIONS is not valid JSON ("),
        "{answer}"
    );
    assert!(answer.contains("fix or unset CLINE_COMMAND_PERMISSIONS"), "{answer}");
    assert!(
        r.stderr.contains("is not valid JSON") && r.stderr.contains("fix or unset CLINE_COMMAND_PERMISSIONS"),
        "{}",
        r.stderr
    );
}

#[test]
fn unset_or_empty_means_no_rules() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![exec("touch made > log"), anthropic(&completion("Done."))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[("CLINE_COMMAND_PERMISSIONS", "")], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(ws.path().join("made").exists(), "{}", r.all());
}

#[test]
fn run_help_teaches_the_variable() {
    let out = std::process::Command::new(bin()).args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("CLINE_COMMAND_PERMISSIONS='{\"allow\": [\"npm *\""), "{help}");
    assert!(help.contains("\"allowRedirects\": true"), "{help}");
}

/// Issue 25, finding 4: `$(…)` inside double quotes (also inside `${…}`, after escaped quotes,
/// around a subshell) hid a command from `{"allow": ["echo *"]}`; none of them may run.
#[test]
fn command_substitution_in_double_quotes_does_not_pass_an_echo_rule() {
    let ws = tempfile::tempdir().unwrap();
    let cmds = [
        r#"echo "$(touch m1)""#,
        r#"echo "${x:-$(touch m3)}""#,
        r#"echo \'a\'"$(touch m10)""#,
        r#"echo "$( (touch m32) )""#,
    ];
    let mut replies: Vec<Resp> = cmds.iter().map(|c| exec(c)).collect();
    replies.push(anthropic(&completion("Done.")));
    let server = Server::start(replies);
    let base = anthropic_args(&server);
    let rules = r#"{"allow": ["echo *"]}"#;
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[("CLINE_COMMAND_PERMISSIONS", rules)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    for m in ["m1", "m3", "m10", "m32"] {
        assert!(!ws.path().join(m).exists(), "{m}: a refused command ran\n{}", r.all());
    }
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5);
    for (i, c) in cmds.iter().enumerate() {
        assert!(
            reqs[i + 1].last_user().contains(&format!("Command \"{c}\" was denied by CLINE_COMMAND_PERMISSIONS")),
            "{}",
            reqs[i + 1].last_user()
        );
    }
}

/// As Cline (`consecutiveMistakeCount = 0` once a command's parameters are valid, before the
/// permission check): a refused command clears the count of replies without a tool, so the run
/// goes on where a count carried past it would have reached `--max-mistakes`.
#[test]
fn a_refused_command_with_valid_parameters_clears_the_mistake_count() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        anthropic("no tool"),
        anthropic("no tool again"),
        exec("touch pwned"),
        anthropic("still no tool"),
        anthropic(&completion("Done.")),
    ]);
    let base = anthropic_args(&server);
    let rules = r#"{"allow": ["echo *"]}"#;
    let args = args_with(&base, &["--max-mistakes", "3", "t"]);
    let r = run_agent(ws.path(), &args, &[("CLINE_COMMAND_PERMISSIONS", rules)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!ws.path().join("pwned").exists());
    assert_eq!(server.requests().len(), 5);
}
