//! The agent's SEARCH/REPLACE applier never panics; a failure leaves nothing half-applied (it
//! returns an error, never a partial result), and an empty diff is an error, not a change.
#![no_main]

use agent_min::run::tools::diff;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Case<'a> {
    original: &'a str,
    diff: &'a str,
}

fuzz_target!(|case: Case<'_>| {
    if let Ok(new) = diff::apply(case.original, case.diff) {
        // Applying the same diff is deterministic.
        assert_eq!(diff::apply(case.original, case.diff).ok().as_deref(), Some(new.as_str()));
    }
});
