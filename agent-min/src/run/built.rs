//! What is said when a run asks for a part of agent-min that this build left out: the parts
//! that are cargo features (`agent-min/Cargo.toml`) (a leaf everyone may use).
//!
//! A build without a part refuses what needs it, naming the feature and how to rebuild: it
//! never does less than was asked and says nothing (no unsandboxed command for `--sandbox`, no
//! unchecked result for `--output-schema`).

/// Why `what` cannot be done by this build: it needs the cargo feature `feature`, which was
/// left out (`--no-default-features`).
pub(crate) fn not_built_in(feature: &str, what: &str) -> String {
    format!(
        "{what} is not built into this agent-min (it was built without the cargo feature `{feature}`); rebuild with `cargo build --release -p agent-min --features {feature}`, or with the default features"
    )
}
