//! What the person sees and does: terminal output and approval prompts ([`term`]), Ctrl-C and
//! SIGTERM ([`interrupt`]), and the masking of API keys in everything shown ([`redact`]).
//!
//! Owns: the terminal, signals and the list of secrets to mask. May use: nothing else of the
//! agent (its tests check the `--json` events too).

pub mod interrupt;
pub mod redact;
pub mod shown;
pub mod term;
