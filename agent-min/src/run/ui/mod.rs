//! What the person sees and does: terminal output and approval prompts ([`term`]), Ctrl-C and
//! SIGTERM (`interrupt`), and the masking of API keys in everything shown (`redact`).
//!
//! Owns: the terminal, signals and the list of secrets to mask. May use: nothing else of the
//! agent (its tests check the `--json` events too).

pub(crate) mod interrupt;
pub(crate) mod redact;
pub(crate) mod shown;
pub mod term;

/// `n` and the noun, singular for one: "1 line", "3 lines" (the noun takes an "s").
pub(crate) fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_is_singular() {
        assert_eq!(super::count(1u32, "line"), "1 line");
        assert_eq!(super::count(0u32, "file"), "0 files");
        assert_eq!(super::count(2u64, "request"), "2 requests");
    }
}
