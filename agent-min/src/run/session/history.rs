//! One line of `agent-min history --json`: what a saved task shows of itself, typed, versioned;
//! `agent-min/schemas/history.schema.json` is generated from it. The command is
//! `crate::history_cmd`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::state::Record;
use crate::run::budget::accounting::Totals;

/// The version of the `history --json` format, in every line's `version` field.
pub(crate) const VERSION: u32 = 1;

/// One line of `agent-min history --json`: one saved task. `agent-min/schemas/history.schema.json`
/// is generated from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Entry {
    /// The format's version ([`VERSION`]).
    pub version: u32,
    /// The task id (what `agent-min resume` takes).
    pub id: String,
    /// `running`, `completed`, `failed`, `approval_needed`, or `interrupted` (saved as running by a
    /// run that is gone).
    #[schemars(extend("enum" = ["running", "completed", "failed", "approval_needed", "interrupted"]))]
    pub status: String,
    /// The result (completed) or the reason (failed).
    pub outcome: Option<String>,
    /// The task as given.
    pub task: String,
    /// The workspace.
    pub cwd: String,
    /// Provider name.
    pub provider: String,
    /// Model name.
    pub model: String,
    /// When it was created (Unix seconds).
    pub created: u64,
    /// Last save (Unix seconds).
    pub updated: u64,
    /// Turns (requests) so far.
    pub turns: u32,
    /// Requests the model answered, over all runs.
    pub requests: u64,
    /// Token and cost totals, over all runs.
    pub totals: Totals,
}

/// The `history --json` line of a saved task.
pub(crate) fn entry(r: &Record) -> Entry {
    Entry {
        version: VERSION,
        id: r.meta.id.clone(),
        status: r.shown_status().to_string(),
        outcome: r.outcome.clone(),
        task: r.meta.task.clone(),
        cwd: r.meta.cwd.clone(),
        provider: r.meta.provider.clone(),
        model: r.meta.model.clone(),
        created: r.meta.created,
        updated: r.updated,
        turns: r.turns,
        requests: r.requests(),
        totals: r.totals.clone(),
    }
}
