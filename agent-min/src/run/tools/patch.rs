//! The patch Cline shows the model when a person changed a proposed edit: jsdiff's
//! `createPatch` without its four header lines (Cline's `createPrettyPatch`) — hunks with 4
//! lines of context, `@@ -a,b +c,d @@` headers, `\ No newline at end of file` markers.

/// One line of the diff: kept, removed or added.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Op {
    Keep,
    Del,
    Add,
}

/// Lines with their ending, as jsdiff's `diffLines` compares them.
fn lines(s: &str) -> Vec<&str> {
    s.split_inclusive('\n').collect()
}

/// A shortest edit script (Myers' O(ND) greedy algorithm), removals before additions where
/// both are possible. Gives up (`None`) past `max_d` edits, so the cost stays bounded: time
/// about `(a.len() + b.len()) × max_d`, memory about `max_d²` (each step keeps only the
/// diagonals it reached, `2d + 1` of them; none beyond `max_d` is ever reached).
pub(super) fn myers<'a>(a: &[&'a str], b: &[&'a str], max_d: usize) -> Option<Vec<(Op, &'a str)>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    // The diagonals reached are -d..=d, and read one beyond.
    let most = ((n + m) as usize).min(max_d);
    let offset = most + 1;
    let mut v = vec![0isize; 2 * offset + 1];
    // trace[d]: the furthest x on the diagonals -d..=d before step d.
    let mut trace: Vec<Vec<isize>> = Vec::new();
    for d in 0..=most {
        trace.push(v[offset - d..=offset + d].to_vec());
        let d = d as isize;
        let mut k = -d;
        while k <= d {
            let i = (k + offset as isize) as usize;
            let mut x = if k == -d || (k != d && v[i - 1] < v[i + 1]) { v[i + 1] } else { v[i - 1] + 1 };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[i] = x;
            if x >= n && y >= m {
                return Some(backtrack(&trace, a, b, offset, d, &v));
            }
            k += 2;
        }
    }
    None
}

/// The edit script `myers` found in `d` steps, walked back from `last` (every diagonal after
/// step `d`) through `trace`.
fn backtrack<'a>(
    trace: &[Vec<isize>],
    a: &[&'a str],
    b: &[&'a str],
    offset: usize,
    d: isize,
    last: &[isize],
) -> Vec<(Op, &'a str)> {
    let mut ops = Vec::new();
    let (mut x, mut y) = (a.len() as isize, b.len() as isize);
    // The diagonals known at this step, and the diagonal its first value is on.
    let (mut v, mut lo) = (last, -(offset as isize));
    for d in (0..=d).rev() {
        let at = |k: isize| v[(k - lo) as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && at(k - 1) < at(k + 1)) { k + 1 } else { k - 1 };
        let prev_x = if d == 0 { 0 } else { at(prev_k) };
        let prev_y = prev_x - prev_k;
        while x > prev_x.max(0) && y > prev_y.max(0) && x > 0 && y > 0 && a[(x - 1) as usize] == b[(y - 1) as usize] {
            ops.push((Op::Keep, a[(x - 1) as usize]));
            x -= 1;
            y -= 1;
        }
        if d > 0 {
            if x == prev_x {
                ops.push((Op::Add, b[(y - 1) as usize]));
            } else {
                ops.push((Op::Del, a[(x - 1) as usize]));
            }
            x = prev_x;
            y = prev_y;
            (v, lo) = (&trace[d as usize], -d);
        }
    }
    while x > 0 && y > 0 {
        ops.push((Op::Keep, a[(x - 1) as usize]));
        x -= 1;
        y -= 1;
    }
    ops.reverse();
    ops
}

/// Cline's `createPrettyPatch(path, old, new)`; `None` when the texts are too different to
/// diff within a bounded time (more than 10,000 changed lines).
pub(crate) fn pretty_patch(old: &str, new: &str) -> Option<String> {
    const CONTEXT: usize = 4;
    let (a, b) = (lines(old), lines(new));
    let ops = myers(&a, &b, 10_000)?;
    let changed: Vec<usize> = (0..ops.len()).filter(|&i| ops[i].0 != Op::Keep).collect();
    let mut out = String::new();
    let mut k = 0;
    while k < changed.len() {
        // A hunk: changes whose gaps are at most 2 × CONTEXT kept lines.
        let first = changed[k];
        let mut last = first;
        while k + 1 < changed.len() && changed[k + 1] - last - 1 <= 2 * CONTEXT {
            k += 1;
            last = changed[k];
        }
        k += 1;
        let start = first.saturating_sub(CONTEXT);
        let end = (last + CONTEXT + 1).min(ops.len());
        let (mut old_start, mut new_start) = (1, 1);
        for (op, _) in &ops[..start] {
            old_start += usize::from(*op != Op::Add);
            new_start += usize::from(*op != Op::Del);
        }
        let old_len = ops[start..end].iter().filter(|o| o.0 != Op::Add).count();
        let new_len = ops[start..end].iter().filter(|o| o.0 != Op::Del).count();
        let shown = |s: usize, n: usize| if n == 0 { s - 1 } else { s };
        out.push_str(&format!(
            "@@ -{},{old_len} +{},{new_len} @@\n",
            shown(old_start, old_len),
            shown(new_start, new_len)
        ));
        for (op, line) in &ops[start..end] {
            let sign = match op {
                Op::Keep => ' ',
                Op::Del => '-',
                Op::Add => '+',
            };
            out.push(sign);
            match line.strip_suffix('\n') {
                Some(l) => {
                    out.push_str(l);
                    out.push('\n');
                }
                None => {
                    out.push_str(line);
                    out.push_str("\n\\ No newline at end of file\n");
                }
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::pretty_patch;

    #[test]
    fn hunks_as_jsdiff_prints_them() {
        // Expected texts printed by jsdiff 8.0.4 (Cline's version): createPatch(...) minus
        // its four header lines.
        let old: String = (1..=18).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l3\n", "L3\n").replace("l17\n", "l17 changed\n");
        assert_eq!(
            pretty_patch(&old, &new).unwrap(),
            "@@ -1,7 +1,7 @@\n l1\n l2\n-l3\n+L3\n l4\n l5\n l6\n l7\n@@ -13,6 +13,6 @@\n l13\n l14\n l15\n l16\n-l17\n+l17 changed\n l18\n"
        );
        let old: String = (1..=12).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l3\n", "L3\n").replace("l12\n", "l12 changed\nl13\n");
        assert_eq!(
            pretty_patch(&old, &new).unwrap(),
            "@@ -1,12 +1,13 @@\n l1\n l2\n-l3\n+L3\n l4\n l5\n l6\n l7\n l8\n l9\n l10\n l11\n-l12\n+l12 changed\n+l13\n"
        );
        assert_eq!(pretty_patch("a\n", "a\n").unwrap(), "");
    }
}
