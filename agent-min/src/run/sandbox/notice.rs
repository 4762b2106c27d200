//! What the model is told about the sandbox: after a command that failed in a way the sandbox
//! explains (a refused write, no network), how it was confined and how to ask for more.

use super::{Mode, Policy};

/// Output fragments of a write the sandbox refused or a connection it cut off.
const SYMPTOMS: &[&str] = &[
    "Permission denied",
    "Read-only file system",
    "Operation not permitted",
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Connection refused",
    "getaddrinfo",
];

/// The note for a command that exited with `code` and printed `output`, if the sandbox may be
/// why it failed.
pub(crate) fn for_failure(policy: &Policy, code: Option<i32>, output: &str) -> Option<String> {
    if policy.mode == Mode::Off || code == Some(0) || !SYMPTOMS.iter().any(|s| output.contains(s)) {
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
    Some(format!(
        "Note: this command ran in agent-min's sandbox (--sandbox {}: {writes}; {network}). If it failed because of that, do not try to work around the sandbox: use ask_followup_question to ask the user to rerun agent-min with --sandbox-allow-write DIR, --sandbox-network or --sandbox off.",
        policy.mode.name()
    ))
}
