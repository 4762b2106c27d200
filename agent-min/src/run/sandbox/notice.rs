//! What the model is told about the sandbox: after a command that failed in a way the sandbox
//! explains (a refused write, no network), how it was confined and how to ask for more.

use super::{Mode, Policy};

/// Output fragments (lower case; matched whatever the case: Node and Go print `EACCES` and
/// `permission denied`) of a write the sandbox refused.
const WRITE_SYMPTOMS: &[&str] =
    &["permission denied", "read-only file system", "operation not permitted", "eacces", "erofs", "eperm"];

/// Output fragments of a connection the sandbox cut off: looked for only when commands have no
/// network. In its network namespace a connection, to 127.0.0.1 too, is unreachable (curl:
/// "Couldn't connect to server"; Node: `ENETUNREACH`), never refused: a "Connection refused" is
/// a server that is not running, which the sandbox does not explain.
const NETWORK_SYMPTOMS: &[&str] = &[
    "network is unreachable",
    "enetunreach",
    "couldn't connect to server",
    "could not resolve host",
    "temporary failure in name resolution",
    "name or service not known",
    "getaddrinfo",
];

/// The note for a command that exited with `code` and printed `output`, if the sandbox may be
/// why it failed. `yolo`: nobody answers questions (`--yolo` offers no ask_followup_question),
/// so the model is asked to say what the run needs when it completes, not to ask.
pub(crate) fn for_failure(policy: &Policy, code: Option<i32>, output: &str, yolo: bool) -> Option<String> {
    if policy.mode == Mode::Off || code == Some(0) {
        return None;
    }
    let lower = output.to_lowercase();
    let seen = |symptoms: &[&str]| symptoms.iter().any(|s| lower.contains(s));
    if !seen(WRITE_SYMPTOMS) && (policy.network || !seen(NETWORK_SYMPTOMS)) {
        return None;
    }
    let writes = match policy.mode {
        Mode::ReadOnly => "it may not write files anywhere".to_string(),
        _ => {
            let dirs: Vec<String> = policy.writable.iter().map(|d| d.display().to_string()).collect();
            format!("it may write only inside {}", dirs.join(", "))
        }
    };
    let network = if policy.network { "network allowed" } else { "no network access" };
    let ask = match yolo {
        false => "use ask_followup_question to ask the user to rerun agent-min with",
        true => "nobody can answer a question in this run (--yolo), so say in your attempt_completion result that it needs agent-min rerun with",
    };
    Some(format!(
        "Note: this command ran in agent-min's sandbox (--sandbox {}: {writes}; {network}). If it failed because of that, do not try to work around the sandbox: {ask} --sandbox-allow-write DIR, --sandbox-network or --sandbox off.",
        policy.mode.name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandboxed(network: bool) -> Policy {
        Policy { mode: Mode::WorkspaceWrite, writable: vec!["/w".into()], network, ..Policy::default() }
    }

    /// The failures a sandbox causes are told in the words programs print them in, whatever
    /// the case; a connection refused (a server not running) or cut off with the network
    /// allowed is not the sandbox's doing.
    #[test]
    fn the_sandboxs_own_failures_get_the_note_and_others_do_not() {
        let noted = |network: bool, out: &str| for_failure(&sandboxed(network), Some(1), out, false).is_some();
        for out in [
            "npm ERR! code EACCES",
            "Error: EACCES: permission denied, mkdir '/root/.npm'",
            "open /root/go/pkg: permission denied",
            "touch: cannot touch '/etc/x': Read-only file system",
        ] {
            assert!(noted(true, out) && noted(false, out), "{out}");
        }
        for out in [
            "curl: (7) Failed to connect to 127.0.0.1 port 3000 after 0 ms: Couldn't connect to server",
            "Error: connect ENETUNREACH 127.0.0.1:3000 - Local (0.0.0.0:0)",
            "curl: (6) Could not resolve host: example.com",
        ] {
            assert!(noted(false, out) && !noted(true, out), "{out}");
        }
        assert!(!noted(false, "psql: error: connection to server failed: Connection refused"));
        assert!(for_failure(&sandboxed(false), Some(0), "EACCES", false).is_none(), "it succeeded");
        assert!(for_failure(&Policy::default(), Some(1), "EACCES", false).is_none(), "no sandbox");
    }

    /// Under `--yolo` there is no ask_followup_question to use: the note asks for the need to
    /// be said at completion instead.
    #[test]
    fn under_yolo_the_note_names_no_tool_the_model_lacks() {
        let note = for_failure(&sandboxed(false), Some(1), "Permission denied", true).unwrap();
        assert!(!note.contains("ask_followup_question") && note.contains("attempt_completion"), "{note}");
        let note = for_failure(&sandboxed(false), Some(1), "Permission denied", false).unwrap();
        assert!(note.contains("ask_followup_question"), "{note}");
    }
}
