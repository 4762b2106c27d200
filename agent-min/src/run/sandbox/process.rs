//! Hardening the agent's own process once its keys are read: the secret variables are wiped
//! from its environment — in place, since `/proc/PID/environ` shows the memory the process
//! started with, not the current variable list — and the process is made non-dumpable, so
//! another process of the same user cannot read its `/proc` files or attach to it.

use super::env::EnvPolicy;
use super::sys;
use crate::run::ui::redact;

/// Registers the value of every withheld secret-looking variable for masking and keeps it by
/// name ([`redact::withheld`]: a later session of `agent-min acp` sets up its provider from a
/// key, and a person's MCP settings may name any of them), wipes those variables from the
/// agent's environment (in place, then from the variable list) and turns off dumping.
/// Call it once, early, after the API key has been read.
pub(crate) fn harden(policy: &EnvPolicy) -> Result<(), String> {
    let secret = |n: &str| super::env::looks_secret(n) || redact::KEY_VARS.contains(&n);
    for name in policy.withheld().into_iter().filter(|n| secret(&n.to_string_lossy())) {
        if let Some(value) = std::env::var_os(&name) {
            redact::add(&value.to_string_lossy());
            if let (Some(n), Some(v)) = (name.to_str(), value.to_str()) {
                redact::withhold(n, v);
            }
        }
        sys::wipe_env_value(&name);
        std::env::remove_var(&name);
    }
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
        .map_err(|e| format!("cannot make the agent non-dumpable (prctl PR_SET_DUMPABLE): {e}"))
}
