//! A text as its line differences from another (binary size: Cline's next-gen and GPT-5 XML
//! prompts are its generic one but for a few lines, so only those lines are built in).
//!
//! A patch is hunks, in order; each is a header line `@@ AT DELETE` — at line `AT` of the base
//! (0-based), `DELETE` lines go — then the lines put there, each after a `+`. The texts
//! themselves stay in the repository (`prompt/system/*.txt`): a test rebuilds each patch from
//! them and fails when the committed one differs.

/// `base` with `patch` applied; `None` if the patch does not fit it.
pub(crate) fn apply(base: &str, patch: &str) -> Option<String> {
    let base: Vec<&str> = base.split('\n').collect();
    let mut out: Vec<&str> = Vec::with_capacity(base.len());
    let mut next = 0; // the first base line not yet taken
    for line in patch.split('\n').filter(|l| !l.is_empty()) {
        if let Some(added) = line.strip_prefix('+') {
            out.push(added);
            continue;
        }
        let mut head = line.strip_prefix("@@ ")?.split(' ');
        let at: usize = head.next()?.parse().ok()?;
        let delete: usize = head.next()?.parse().ok()?;
        out.extend(base.get(next..at)?);
        next = at.checked_add(delete).filter(|&e| e <= base.len())?;
    }
    out.extend(&base[next..]);
    Some(out.join("\n"))
}

/// The patch that makes `to` of `from`: its lines' longest common subsequence kept, the rest
/// deleted and put (for the test that writes and checks the committed patches).
#[cfg(test)]
pub(crate) fn diff(from: &str, to: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (from.split('\n').collect(), to.split('\n').collect());
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            (i, j) = (i + 1, j + 1);
            continue;
        }
        let (at, mut added) = (i, Vec::new());
        while i < a.len() || j < b.len() {
            if i < a.len() && j < b.len() && a[i] == b[j] {
                break;
            }
            if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
                added.push(b[j]);
                j += 1;
            } else {
                i += 1;
            }
        }
        out.push_str(&format!("@@ {at} {}\n", i - at));
        for l in added {
            out.push_str(&format!("+{l}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_applied_gives_the_text_back() {
        let cases = [
            ("a\nb\nc", "a\nb\nc"),
            ("a\nb\nc", "a\nB\nc"),
            ("a\nb\nc", "x\na\nc\ny"),
            ("", "a\n"),
            ("a\n\nb\n", "\n"),
            ("one\ntwo", ""),
        ];
        for (from, to) in cases {
            let p = diff(from, to);
            assert_eq!(apply(from, &p).as_deref(), Some(to), "{from:?} -> {to:?}: {p:?}");
        }
        assert_eq!(diff("a\nb", "a\nb"), "");
        assert_eq!(diff("a\nb\nc", "a\nB\nc"), "@@ 1 1\n+B\n");
    }

    #[test]
    fn a_patch_that_does_not_fit_is_none() {
        assert_eq!(apply("a\nb", "@@ 5 1\n"), None);
        assert_eq!(apply("a\nb", "@@ 1 9\n"), None);
        assert_eq!(apply("a\nb", "@@ 1 1\n@@ 0 1\n"), None);
        assert_eq!(apply("a\nb", "junk\n"), None);
    }
}
