//! The line diff of an approval prompt: what an edit will change, with 2 lines of context — all
//! of it, up to a bound in lines and bytes that only a very large change reaches.

use super::patch::{myers, Op};

/// Most lines a preview shows; past them (or past [`MAX_BYTES`]) a note says how many more
/// there are.
const MAX_LINES: usize = 5_000;

/// Most bytes of lines a preview shows.
const MAX_BYTES: usize = 256 * 1024;

/// Most steps spent comparing the changed lines (about their number × the edits found), and most
/// edits looked for (the comparison's memory is about their square): past them the changed lines
/// are shown removed whole and added whole.
const MAX_COMPARE_STEPS: usize = 20_000_000;
const MAX_EDITS: usize = 1_000;

/// What the note after a cut preview starts with ([`with_edit_hint`] finds it).
const CUT_NOTE: &str = "… and ";

/// Renders the change from `old` to `new` as `-`/`+` lines with context: the lines the two share
/// at the start and the end are set aside first, so an edit's cost is about the lines it
/// changes, whatever the file's length. A new file is shown whole. Every preview stops after
/// [`MAX_LINES`] lines or [`MAX_BYTES`] bytes, with a note naming how many lines are not shown.
pub(crate) fn unified(old: &str, new: &str, path: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    if a.is_empty() {
        let mut out = Shown::new(format!("new file {path}\n"));
        for l in &b {
            out.line('+', l);
        }
        return out.finish();
    }
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..].iter().rev().zip(b[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (old_mid, new_mid) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    if old_mid.is_empty() && new_mid.is_empty() {
        return format!("{path}: no changes\n");
    }
    let mut title = format!("--- {path}\n+++ {path}\n");
    let middle = if old_mid.is_empty() || new_mid.is_empty() {
        None
    } else {
        let steps = MAX_COMPARE_STEPS / (old_mid.len() + new_mid.len());
        myers(old_mid, new_mid, steps.min(MAX_EDITS))
    };
    let middle = middle.unwrap_or_else(|| {
        if !old_mid.is_empty() && !new_mid.is_empty() {
            title.push_str(&format!(
                "(lines {}–{} differ in too many places to compare line by line: all {} of them are shown removed, then the {} new ones added)\n",
                head + 1,
                head + old_mid.len(),
                old_mid.len(),
                new_mid.len()
            ));
        }
        let removed = old_mid.iter().map(|l| (Op::Del, *l));
        removed.chain(new_mid.iter().map(|l| (Op::Add, *l))).collect()
    });
    // The changes, with the 2 kept lines before and after them that may be shown.
    let before = &a[head.saturating_sub(2)..head];
    let after = &a[a.len() - tail..a.len() - tail + tail.min(2)];
    let mut ops: Vec<(char, &str)> = before.iter().map(|l| (' ', *l)).collect();
    ops.extend(middle.into_iter().map(|(op, l)| {
        let sign = match op {
            Op::Keep => ' ',
            Op::Del => '-',
            Op::Add => '+',
        };
        (sign, l)
    }));
    ops.extend(after.iter().map(|l| (' ', *l)));
    // The lines within 2 of a change, marked in one pass.
    let mut near = vec![false; ops.len()];
    for k in (0..ops.len()).filter(|&k| ops[k].0 != ' ') {
        for mark in &mut near[k.saturating_sub(2)..(k + 3).min(ops.len())] {
            #[cfg(test)]
            tests::STEPS.with(|n| n.set(n.get() + 1));
            *mark = true;
        }
    }
    let mut out = Shown::new(title);
    // Lines are left out before the first shown when the file has more before it.
    let mut last_shown: Option<usize> = None;
    let hidden_before = head > before.len();
    for (k, (op, line)) in ops.iter().enumerate() {
        if !near[k] {
            continue;
        }
        let gap = match last_shown {
            Some(l) => k > l + 1,
            None => k > 0 || hidden_before,
        };
        if gap {
            out.gap();
        }
        out.line(*op, line);
        last_shown = Some(k);
    }
    out.finish()
}

/// A preview being written: lines until the bounds, then only counted.
struct Shown {
    text: String,
    shown: usize,
    bytes: usize,
    left_out: usize,
}

impl Shown {
    fn new(title: String) -> Self {
        Shown { text: title, shown: 0, bytes: 0, left_out: 0 }
    }

    /// A line of the diff, `sign` then `line`, if the bounds allow it (a line that would pass
    /// the bound in bytes is shown as far as it fits, then ` …`, and counted as not shown).
    fn line(&mut self, sign: char, line: &str) {
        if self.left_out > 0 || self.shown >= MAX_LINES {
            self.left_out += 1;
            return;
        }
        if self.bytes + line.len() + 2 > MAX_BYTES {
            let mut fits = MAX_BYTES.saturating_sub(self.bytes + 2).min(line.len());
            while !line.is_char_boundary(fits) {
                fits -= 1;
            }
            if fits > 0 {
                self.text.push(sign);
                self.text.push_str(&line[..fits]);
                self.text.push_str(" …\n");
            }
            self.left_out += 1;
            return;
        }
        self.shown += 1;
        self.bytes += line.len() + 2;
        self.text.push(sign);
        self.text.push_str(line);
        self.text.push('\n');
    }

    /// The mark of kept lines left out between two shown ones.
    fn gap(&mut self) {
        if self.left_out == 0 {
            self.text.push_str("…\n");
        }
    }

    fn finish(mut self) -> String {
        if self.left_out > 0 {
            self.text.push_str(&format!(
                "{CUT_NOTE}{} not shown (a preview stops at {MAX_LINES} lines or {} KB)\n",
                crate::run::ui::count(self.left_out as u64, "more line"),
                MAX_BYTES / 1024
            ));
        }
        self.text
    }
}

/// `preview` with a way to see what it left out, for a prompt that offers `e` (open the proposed
/// file in the person's editor).
pub(crate) fn with_edit_hint(preview: &str) -> std::borrow::Cow<'_, str> {
    let last = preview.trim_end_matches('\n').rsplit('\n').next().unwrap_or("");
    if !last.starts_with(CUT_NOTE) {
        return preview.into();
    }
    format!("{}; answer e to see the whole proposed file in your editor\n", preview.trim_end_matches('\n')).into()
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
    /// took 10^10 steps, ~100 s at 400,000 lines. (Too many changes to compare: shown removed
    /// whole, then added whole, up to the bound.)
    #[test]
    fn the_context_of_many_changed_lines_costs_about_their_number() {
        let old: String = (0..10).map(|i| format!("old {i}\n")).collect();
        let new: String = (0..100_000).map(|i| format!("new {i}\n")).collect();
        STEPS.with(|n| n.set(0));
        let p = unified(&old, &new, "f");
        assert!(p.starts_with("--- f\n+++ f\n(lines 1–10 differ in too many places"), "{}", &p[..200]);
        assert!(p.contains("\n-old 0\n") && p.contains("-old 9\n+new 0\n") && p.contains("\n+new 4989\n"));
        assert!(
            p.ends_with("\n+new 4989\n… and 95010 more lines not shown (a preview stops at 5000 lines or 256 KB)\n")
        );
        let steps = STEPS.with(|n| n.get());
        assert!(steps <= 5 * 100_010, "{steps} steps for 100,010 lines");
    }

    /// An edit in a long file costs about the lines it changes: the lines the texts share at
    /// their start and end are not compared. (Past 4,000,000 old × new lines the preview was
    /// one line, "(too large to preview)", so a 2,100-line file's edit was approved unseen.)
    #[test]
    fn an_edit_of_a_long_file_is_shown_with_its_context() {
        let old: String = (1..=100_000).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 50000\n", "changed\nadded\n");
        assert_eq!(
            unified(&old, &new, "f"),
            "--- f\n+++ f\n…\n line 49998\n line 49999\n-line 50000\n+changed\n+added\n line 50001\n line 50002\n"
        );
        // Two edits far apart: compared in their span, shown as two hunks.
        let new = old.replace("line 10\n", "ten\n").replace("line 99990\n", "nine\n");
        let p = unified(&old, &new, "f");
        assert!(p.contains("\n line 9\n-line 10\n+ten\n line 11\n line 12\n…\n line 99988\n"), "{p}");
        assert!(p.ends_with(" line 99989\n-line 99990\n+nine\n line 99991\n line 99992\n"), "{p}");
        // At the very start and end, no context to leave out before.
        assert_eq!(unified("a\nb\n", "A\nb\n", "f"), "--- f\n+++ f\n-a\n+A\n b\n");
        assert_eq!(unified("a\nb\n", "a\nb\nc\n", "f"), "--- f\n+++ f\n a\n b\n+c\n");
        assert_eq!(unified("a\nb\n", "a\nb\n", "f"), "f: no changes\n");
        // Lines changed in too many places are named, and shown removed, then added.
        let scattered: String = (1..=100_000)
            .map(|i| if i % 40 == 0 && i < 99_990 { "x\n".to_string() } else { format!("line {i}\n") })
            .collect();
        let p = unified(&old, &scattered, "f");
        let want = "--- f\n+++ f\n(lines 40–99960 differ in too many places to compare line by line: all 99921 of them are shown removed, then the 99921 new ones added)\n…\n line 38\n line 39\n-line 40\n-line 41\n";
        assert!(p.starts_with(want), "{}", &p[..300]);
        assert!(
            p.ends_with("\n-line 5037\n… and 194846 more lines not shown (a preview stops at 5000 lines or 256 KB)\n"),
            "{}",
            &p[p.len() - 300..]
        );
    }

    /// A new file is shown whole up to the bound (it was its first 40 lines).
    #[test]
    fn a_new_file_is_shown_whole_up_to_the_bound() {
        let text: String = (1..=300).map(|i| format!("l{i}\n")).collect();
        let p = unified("", &text, "f");
        assert!(p.starts_with("new file f\n+l1\n") && p.ends_with("+l299\n+l300\n"), "{p}");
        let text: String = (1..=6_000).map(|i| format!("l{i}\n")).collect();
        let p = unified("", &text, "f");
        assert!(p.ends_with("+l5000\n… and 1000 more lines not shown (a preview stops at 5000 lines or 256 KB)\n"));
        assert_eq!(with_edit_hint(&p).lines().last().unwrap(), "… and 1000 more lines not shown (a preview stops at 5000 lines or 256 KB); answer e to see the whole proposed file in your editor");
        assert_eq!(with_edit_hint("new file f\n+x\n"), "new file f\n+x\n");
        // In bytes too: a long line is shown as far as the bound, then the rest counted.
        let text = format!("{}\n{}\nlast\n", "a".repeat(200 * 1024), "é".repeat(40 * 1024));
        let p = unified("", &text, "f");
        assert!(p.len() < MAX_BYTES + 200, "{}", p.len());
        assert!(
            p.ends_with("é …\n… and 2 more lines not shown (a preview stops at 5000 lines or 256 KB)\n"),
            "{}",
            &p[p.len() - 200..]
        );
    }

    /// The edit script: applied, it gives both texts, and it is as short as the longest common
    /// subsequence allows (checked against the quadratic table on small random texts).
    #[test]
    fn the_comparison_is_a_shortest_edit_script() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        const WORDS: [&str; 4] = ["a", "b", "c", "d"];
        for _ in 0..500 {
            let a: Vec<&str> = (0..next() % 12).map(|_| WORDS[next() % 4]).collect();
            let b: Vec<&str> = (0..next() % 12).map(|_| WORDS[next() % 4]).collect();
            let ops = myers(&a, &b, 100).unwrap();
            let old: Vec<&str> = ops.iter().filter(|o| o.0 != Op::Add).map(|o| o.1).collect();
            let new: Vec<&str> = ops.iter().filter(|o| o.0 != Op::Del).map(|o| o.1).collect();
            assert_eq!((&old, &new), (&a, &b));
            let (n, m) = (a.len(), b.len());
            let mut t = vec![vec![0usize; m + 1]; n + 1];
            for i in (0..n).rev() {
                for j in (0..m).rev() {
                    t[i][j] = if a[i] == b[j] { t[i + 1][j + 1] + 1 } else { t[i + 1][j].max(t[i][j + 1]) };
                }
            }
            let kept = ops.iter().filter(|o| o.0 == Op::Keep).count();
            assert_eq!(kept, t[0][0], "{a:?} {b:?}");
        }
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
