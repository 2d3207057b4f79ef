//! The line diff the reports show between an expected and an actual JSON document: the
//! lines of a unified diff, three lines of context, `...` between hunks.
//!
//! Myers' O(ND) algorithm on the lines between the common prefix and suffix, with the
//! number of differences bounded ([`MAX_EDITS`]): past it the middle is shown removed, then
//! added — a diff that large reads as "different", not line by line. The bounds on edits
//! and on work keep a hostile pair of multi-megabyte replies from taking quadratic time.
//! Within a run of changed lines, the removed lines come first (as `git diff` shows them).
//!
//! Our own rather than a diff crate's: one non-generic function, where the crate's
//! algorithms were instantiated about fifty times in mcpspec's code generation (a tenth of
//! the crate's LLVM IR) for this one use (BENCHMARKS.md, "Clean release build").

/// What a line of the diff is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// In both documents (context).
    Equal,
    /// Only in the expected document.
    Delete,
    /// Only in the actual document.
    Insert,
}

/// Lines of context around each hunk.
const CONTEXT: usize = 3;

/// Most differing lines the algorithm looks for the shortest edit through (its trace
/// holds about `MAX_EDITS²` positions).
const MAX_EDITS: usize = 1_000;
/// Most line comparisons and diagonal steps one diff may take (a few tens of ms).
const MAX_WORK: usize = 20_000_000;

/// The unified-diff lines between `old` and `new` (split at `\n`, line ends dropped): each
/// hunk with up to [`CONTEXT`] equal lines around its changes, hunks separated by an
/// `Equal` line `...`. Empty when the texts have the same lines.
pub fn unified(old: &str, new: &str) -> Vec<(Tag, String)> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let changes = line_changes(&a, &b);
    let changed: Vec<usize> = (0..changes.len())
        .filter(|&i| changes[i].0 != Tag::Equal)
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < changed.len() {
        // One hunk: changes whose equal gaps are at most two contexts long.
        let mut j = i;
        while j + 1 < changed.len() && changed[j + 1] - changed[j] - 1 <= 2 * CONTEXT {
            j += 1;
        }
        if !out.is_empty() {
            out.push((Tag::Equal, "...".to_string()));
        }
        let from = changed[i].saturating_sub(CONTEXT);
        let to = (changed[j] + 1 + CONTEXT).min(changes.len());
        out.extend(
            changes[from..to]
                .iter()
                .map(|&(tag, line)| (tag, line.to_string())),
        );
        i = j + 1;
    }
    out
}

/// Every line of `a` and `b` in diff order: equal, removed (from `a`) or added (from `b`).
fn line_changes<'t>(a: &[&'t str], b: &[&'t str]) -> Vec<(Tag, &'t str)> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (mid_a, mid_b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut out: Vec<(Tag, &str)> = a[..prefix].iter().map(|&l| (Tag::Equal, l)).collect();
    match shortest_edit(mid_a, mid_b) {
        Some(middle) => push_grouped(&mut out, middle),
        None => {
            out.extend(mid_a.iter().map(|&l| (Tag::Delete, l)));
            out.extend(mid_b.iter().map(|&l| (Tag::Insert, l)));
        }
    }
    out.extend(a[a.len() - suffix..].iter().map(|&l| (Tag::Equal, l)));
    out
}

/// Appends `changes`, each run of changed lines reordered: removals, then additions.
fn push_grouped<'t>(out: &mut Vec<(Tag, &'t str)>, changes: Vec<(Tag, &'t str)>) {
    let mut added = Vec::new();
    for (tag, line) in changes {
        match tag {
            Tag::Insert => added.push((tag, line)),
            Tag::Delete => out.push((tag, line)),
            Tag::Equal => {
                out.append(&mut added);
                out.push((tag, line));
            }
        }
    }
    out.append(&mut added);
}

/// Myers' shortest edit script from `a` to `b`, or `None` past [`MAX_EDITS`] differences
/// or [`MAX_WORK`] steps.
fn shortest_edit<'t>(a: &[&'t str], b: &[&'t str]) -> Option<Vec<(Tag, &'t str)>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (a.len() + b.len()).min(MAX_EDITS) as isize;
    // v[k + offset]: the furthest x reached on diagonal k (y = x - k).
    let offset = max + 1;
    let mut v = vec![0isize; 2 * offset as usize + 1];
    // v as it was before each round d, diagonals -d..=d only (what the walk back reads).
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut found = None;
    let mut work = 0usize;
    'rounds: for d in 0..=max {
        trace.push(v[(offset - d) as usize..=(offset + d) as usize].to_vec());
        for k in (-d..=d).step_by(2) {
            let at = (k + offset) as usize;
            let mut x = if k == -d || (k != d && v[at - 1] < v[at + 1]) {
                v[at + 1]
            } else {
                v[at - 1] + 1
            };
            let mut y = x - k;
            let start = x;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            work += 1 + (x - start) as usize;
            if work > MAX_WORK {
                return None;
            }
            v[at] = x;
            if x >= n && y >= m {
                found = Some(d);
                break 'rounds;
            }
        }
    }
    let rounds = found?;
    // Walk back from (n, m) through the rounds, collecting the script in reverse.
    let mut script = Vec::with_capacity((n + m) as usize);
    let (mut x, mut y) = (n, m);
    for d in (0..=rounds).rev() {
        let before = &trace[d as usize];
        let at = |k: isize| before[(k + d) as usize];
        let k = x - y;
        let previous_k = if k == -d || (k != d && at(k - 1) < at(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let (previous_x, previous_y) = if d == 0 {
            (0, 0)
        } else {
            let px = at(previous_k);
            (px, px - previous_k)
        };
        while x > previous_x && y > previous_y {
            x -= 1;
            y -= 1;
            script.push((Tag::Equal, a[x as usize]));
        }
        if d > 0 {
            if x == previous_x {
                script.push((Tag::Insert, b[(y - 1) as usize]));
            } else {
                script.push((Tag::Delete, a[(x - 1) as usize]));
            }
        }
        (x, y) = (previous_x, previous_y);
    }
    script.reverse();
    Some(script)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The old and the new text put back together from a script.
    fn sides<'t>(script: &[(Tag, &'t str)]) -> (Vec<&'t str>, Vec<&'t str>) {
        let old = script
            .iter()
            .filter(|c| c.0 != Tag::Insert)
            .map(|c| c.1)
            .collect();
        let new = script
            .iter()
            .filter(|c| c.0 != Tag::Delete)
            .map(|c| c.1)
            .collect();
        (old, new)
    }

    /// The length of the longest common subsequence, by dynamic programming.
    fn lcs(a: &[&str], b: &[&str]) -> usize {
        let mut row = vec![0usize; b.len() + 1];
        for x in a {
            let mut diagonal = 0;
            for (j, y) in b.iter().enumerate() {
                let above = row[j + 1];
                row[j + 1] = if x == y {
                    diagonal + 1
                } else {
                    row[j + 1].max(row[j])
                };
                diagonal = above;
            }
        }
        row[b.len()]
    }

    /// A small deterministic generator (xorshift), so failures reproduce.
    fn lines(seed: &mut u64, len: usize, alphabet: u64) -> Vec<String> {
        (0..len)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                format!("l{}", *seed % alphabet)
            })
            .collect()
    }

    #[test]
    fn every_script_rebuilds_both_sides_with_the_fewest_changes() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        for round in 0..400 {
            let (la, lb) = (round % 23, (round * 7) % 19);
            let a = lines(&mut seed, la, 1 + (round as u64 % 5));
            let b = lines(&mut seed, lb, 1 + (round as u64 % 5));
            let (a, b): (Vec<&str>, Vec<&str>) = (
                a.iter().map(String::as_str).collect(),
                b.iter().map(String::as_str).collect(),
            );
            let script = line_changes(&a, &b);
            assert_eq!(sides(&script), (a.clone(), b.clone()), "{a:?} / {b:?}");
            let changed = script.iter().filter(|c| c.0 != Tag::Equal).count();
            assert_eq!(
                changed,
                a.len() + b.len() - 2 * lcs(&a, &b),
                "{a:?} / {b:?}"
            );
        }
    }

    #[test]
    fn removals_come_before_additions_in_a_changed_run() {
        let script = line_changes(&["a", "x", "y", "b"], &["a", "p", "b"]);
        let tags: Vec<Tag> = script.iter().map(|c| c.0).collect();
        use Tag::*;
        assert_eq!(tags, [Equal, Delete, Delete, Insert, Equal]);
    }

    #[test]
    fn hunks_keep_three_lines_of_context_and_split_on_longer_gaps() {
        let text = |changed: &[(usize, &str)]| -> String {
            (0..20)
                .map(|i| match changed.iter().find(|c| c.0 == i) {
                    Some((_, word)) => format!("{word}\n"),
                    None => format!("{i}\n"),
                })
                .collect()
        };
        let old = text(&[]);
        let new = text(&[(2, "two"), (17, "seventeen")]);
        let diff = unified(&old, &new);
        let shown: Vec<String> = diff
            .iter()
            .map(|(tag, line)| {
                let sign = match tag {
                    Tag::Equal => ' ',
                    Tag::Delete => '-',
                    Tag::Insert => '+',
                };
                format!("{sign}{line}")
            })
            .collect();
        assert_eq!(
            shown.join(","),
            " 0, 1,-2,+two, 3, 4, 5, ..., 14, 15, 16,-17,+seventeen, 18, 19"
        );
        // Six equal lines between two changes: one hunk.
        let close = text(&[(2, "two"), (9, "nine")]);
        assert!(!unified(&old, &close).iter().any(|(_, l)| l == "..."));
        assert!(unified(&old, &old).is_empty());
    }

    #[test]
    fn past_the_bound_the_middle_is_removed_then_added() {
        let a: Vec<String> = (0..3 * MAX_EDITS).map(|i| format!("a{i}")).collect();
        let b: Vec<String> = (0..3 * MAX_EDITS).map(|i| format!("b{i}")).collect();
        let (a, b): (Vec<&str>, Vec<&str>) = (
            a.iter().map(String::as_str).collect(),
            b.iter().map(String::as_str).collect(),
        );
        let script = line_changes(&a, &b);
        assert_eq!(sides(&script), (a.clone(), b.clone()));
        assert!(script[..a.len()].iter().all(|c| c.0 == Tag::Delete));
    }
}
