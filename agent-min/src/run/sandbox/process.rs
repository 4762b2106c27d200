//! Hardening the agent's own process once its keys are read: the secret variables are wiped
//! from its environment — in place, since `/proc/PID/environ` shows the memory the process
//! started with, not the current variable list — and the process is made non-dumpable, so
//! another process of the same user cannot read its `/proc` files or attach to it.

use std::sync::Mutex;

use super::env::EnvPolicy;
use super::sys;
use crate::run::ui::redact;

/// The provider keys ([`redact::KEY_VARS`]) as they were when [`harden`] wiped them: a later
/// session of the same process (`agent-min acp` opens one per editor thread) sets up its
/// provider from them.
static KEPT: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// The provider key variable `name`: from the environment, else as it was before [`harden`].
pub(crate) fn key_var(name: &str) -> Option<String> {
    std::env::var(name).ok().or_else(|| {
        let kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
    })
}

/// Registers the value of every withheld secret-looking variable for masking, wipes those variables from the
/// agent's environment (in place, then from the variable list) and turns off dumping.
/// Call it once, early, after the API key has been read.
pub(crate) fn harden(policy: &EnvPolicy) -> Result<(), String> {
    let secret = |n: &str| super::env::looks_secret(n) || redact::KEY_VARS.contains(&n);
    for name in policy.withheld().into_iter().filter(|n| secret(n)) {
        if let Some(value) = std::env::var_os(&name) {
            redact::add(&value.to_string_lossy());
            if let (true, Some(v)) = (redact::KEY_VARS.contains(&name.as_str()), value.to_str()) {
                KEPT.lock().unwrap_or_else(|e| e.into_inner()).push((name.clone(), v.to_string()));
            }
        }
        sys::wipe_env_value(&name);
        std::env::remove_var(&name);
    }
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
        .map_err(|e| format!("cannot make the agent non-dumpable (prctl PR_SET_DUMPABLE): {e}"))
}
