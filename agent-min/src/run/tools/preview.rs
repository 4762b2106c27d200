//! A small line diff for approval prompts: what an edit will change, with 2 lines of context.

/// Renders the change from `old` to `new` as `-`/`+` lines with context. Large inputs fall back to
/// a one-line summary rather than spending quadratic time.
pub(crate) fn unified(old: &str, new: &str, path: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    if a.is_empty() {
        let mut s = format!("new file {path}\n");
        for l in b.iter().take(40) {
            s.push_str(&format!("+{l}\n"));
        }
        if b.len() > 40 {
            s.push_str(&format!("… and {} more lines\n", b.len() - 40));
        }
        return s;
    }
    if a.len().saturating_mul(b.len()) > 4_000_000 {
        return format!(
            "{path}: {} → {} (too large to preview)\n",
            crate::run::ui::count(a.len() as u64, "line"),
            crate::run::ui::count(b.len() as u64, "line")
        );
    }
    // LCS table, then walk it into a list of ops.
    let (n, m) = (a.len(), b.len());
    let mut t = vec![0u32; (n + 1) * (m + 1)];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i * (m + 1) + j] = if a[i] == b[j] {
                t[(i + 1) * (m + 1) + j + 1] + 1
            } else {
                t[(i + 1) * (m + 1) + j].max(t[i * (m + 1) + j + 1])
            };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || t[(i + 1) * (m + 1) + j] >= t[i * (m + 1) + j + 1]) {
            ops.push(('-', a[i]));
            i += 1;
        } else {
            ops.push(('+', b[j]));
            j += 1;
        }
    }
    // The lines within 2 of a change, marked in one pass.
    let mut near = vec![false; ops.len()];
    for k in (0..ops.len()).filter(|&k| ops[k].0 != ' ') {
        for mark in &mut near[k.saturating_sub(2)..(k + 3).min(ops.len())] {
            #[cfg(test)]
            tests::STEPS.with(|n| n.set(n.get() + 1));
            *mark = true;
        }
    }
    if !near.contains(&true) {
        return format!("{path}: no changes\n");
    }
    let mut s = format!("--- {path}\n+++ {path}\n");
    let mut last_shown: Option<usize> = None;
    for (k, (op, line)) in ops.iter().enumerate() {
        if !near[k] {
            continue;
        }
        if last_shown.is_some_and(|l| k > l + 1) || (last_shown.is_none() && k > 0) {
            s.push_str("…\n");
        }
        s.push_str(&format!("{op}{line}\n"));
        last_shown = Some(k);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// The steps spent finding which lines are near a change.
        pub(super) static STEPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// Finding the lines near a change costs about the lines shown, not their square: a
    /// 10-line file rewritten as 100,000 lines (a write_to_file, previewed even under --yolo)
    /// took 10^10 steps, ~100 s at 400,000 lines.
    #[test]
    fn the_context_of_many_changed_lines_costs_about_their_number() {
        let old: String = (0..10).map(|i| format!("old {i}\n")).collect();
        let new: String = (0..100_000).map(|i| format!("new {i}\n")).collect();
        STEPS.with(|n| n.set(0));
        let p = unified(&old, &new, "f");
        assert!(p.starts_with("--- f\n+++ f\n-old 0\n") && p.ends_with("+new 99999\n"));
        let steps = STEPS.with(|n| n.get());
        assert!(steps <= 5 * 100_010, "{steps} steps for 100,010 lines");
    }

    #[test]
    fn shows_changed_lines_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\n";
        let new = "a\nb\nc\nD\ne\nf\ng\n";
        let p = unified(old, new, "x");
        assert!(p.contains("-d\n+D\n"), "{p}");
        assert!(p.contains(" c\n") && p.contains(" e\n"));
        assert!(!p.contains(" a\n"));
    }

    #[test]
    fn new_file_shows_all_as_added() {
        assert_eq!(unified("", "x\ny", "f"), "new file f\n+x\n+y\n");
    }
}
