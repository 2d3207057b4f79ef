//! Reading on after a structural error: the entries of a YAML document (from its
//! indentation), the innermost one holding each error blanked out — lines kept — until the
//! document reads, so one run reports every independent mistake of a file, and what only
//! follows from a blanked entry is told apart ([`Blanked::may_follow`]).

use std::sync::{Arc, LazyLock};

use regex::Regex;

use super::read::yaml_error;
use super::{de, tree};
use crate::ground::load_error::{LoadError, LoadErrors};
use crate::ground::source::SourceFile;

/// A document read with the entries holding its structural errors blanked out (lines
/// kept, so positions in it are positions in the file).
pub struct Recovered<T> {
    pub doc: T,
    /// What was blanked out.
    pub blanked: Blanked,
}

/// The entries blanked out of a recovered document.
pub struct Blanked {
    /// First lines (1-based) of the mappings that lost a key: an error there is about the
    /// mapping as a whole (a step with no action, a `path` with no predicate left), and
    /// may follow from the blanked key.
    tainted: Vec<usize>,
    /// The blanked lines' text.
    text: String,
}

impl Blanked {
    /// Whether an error found in the recovered document may follow from what was blanked
    /// out — at the head of a mapping that lost a key, or about a name the blanked text
    /// mentions (a variable captured or declared there, a target defined there) — and so
    /// is left out: one root cause, one error. Errors elsewhere, also in the same step,
    /// are independent and reported.
    pub fn may_follow(&self, e: &LoadError) -> bool {
        let Some(line) = e.pos.as_ref().map(|p| p.line as usize) else {
            return false;
        };
        if self.tainted.contains(&line) {
            return true;
        }
        ["undefined template variable `", "no target named `"]
            .iter()
            .filter_map(|head| e.message.strip_prefix(head))
            .filter_map(|rest| rest.split('`').next())
            .any(|name| mentions(&self.text, name))
    }

    /// `errors` and those of `more` that do not follow from the blanked entries, in the
    /// order of the file.
    pub fn merge(&self, mut errors: LoadErrors, more: LoadErrors) -> LoadErrors {
        errors
            .0
            .extend(more.0.into_iter().filter(|e| !self.may_follow(e)));
        errors
            .0
            .sort_by_key(|e| e.pos.as_ref().map(|p| (p.line, p.col)));
        errors
    }
}

/// Whether `text` holds `name` as a whole word.
fn mentions(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    !name.is_empty()
        && text.match_indices(name).any(|(i, _)| {
            !text[..i].chars().next_back().is_some_and(word)
                && !text[i + name.len()..].chars().next().is_some_and(word)
        })
}

/// At most this many structural errors are reported per file.
const MAX_STRUCTURAL_ERRORS: usize = 20;

/// Most text read again, in all, to find a file's further errors: each is found by
/// reading the whole file once more, and a hostile file of a million unknown keys (16 MB)
/// took minutes that way. A file of 400 KB still gets all its errors; a larger one fewer.
const MAX_REREAD_BYTES: usize = 8 << 20;

/// serde stops at the first error; to report the others of the file, the innermost entry
/// that holds it (a key with its value, at any depth, or an item of a list) is blanked out
/// — line numbers kept — and the document parsed again, until it parses (the recovered
/// document) or an error cannot be blanked out. An entry whose blanking would leave the
/// text unreadable, or a required key missing, gives way to the entry around it; the
/// last item of a list is kept (a list emptied that way would be an error of its own).
/// Only for text that reads as YAML (the caller read it: a syntax error stays single), and
/// only on this error path.
pub(super) fn more_structural_errors<T: serde::de::DeserializeOwned>(
    file: &Arc<SourceFile>,
    first: LoadError,
) -> (LoadErrors, Option<Recovered<T>>) {
    let mut errors = LoadErrors::from(first);
    let entries = yaml_entries(&file.text);
    let original: Vec<&str> = file.lines().collect();
    let mut lines = original.clone();
    let mut masked: Vec<usize> = Vec::new();
    let at = |e: &LoadError| e.pos.as_ref().map(|p| (p.line as usize, p.col));
    let mut reread = 0;
    while errors.0.len() <= MAX_STRUCTURAL_ERRORS {
        let current = errors.0.last().expect("one error at least");
        let Some((line, _)) = at(current) else { break };
        let blanked = |i: usize, masked: &[usize]| {
            let mut up = Some(i);
            while let Some(j) = up {
                if masked.contains(&j) {
                    return true;
                }
                up = entries[j].parent;
            }
            false
        };
        // Innermost first: an entry comes after the entries holding it.
        let holding: Vec<usize> = (0..entries.len())
            .rev()
            .filter(|&i| (entries[i].first..=entries[i].last).contains(&line))
            .filter(|&i| !blanked(i, &masked))
            // A document that is a list where a mapping is expected is one mistake.
            .filter(|&i| {
                let mut top = i;
                while let Some(p) = entries[top].parent {
                    top = p;
                }
                !entries[top].item
            })
            .collect();
        let mut next = None;
        for i in holding {
            let entry = &entries[i];
            if entry.item {
                let left = (0..entries.len())
                    .filter(|&j| entries[j].item && entries[j].parent == entry.parent)
                    .filter(|&j| !blanked(j, &masked))
                    .count();
                if left <= 1 {
                    continue;
                }
            }
            let mut trial = lines.clone();
            for l in &mut trial[entry.first - 1..entry.last] {
                *l = "";
            }
            let text = trial.join("\n");
            reread += text.len();
            if reread > MAX_REREAD_BYTES {
                break;
            }
            let Ok(node) = tree::read(&text) else {
                continue;
            };
            match de::from_node::<T>(&node) {
                Ok(doc) => {
                    masked.push(i);
                    return (errors, Some(recovered(doc, &entries, &masked, &original)));
                }
                Err(e) => {
                    let error = yaml_error(file, &e);
                    // A key removed with its entry is no error of the user's; the same
                    // error again was not inside this entry.
                    let same = at(&error) == at(current) && error.message == current.message;
                    if error.message.starts_with("missing required key") || same {
                        continue;
                    }
                    next = Some((i, trial, error));
                    break;
                }
            }
        }
        let Some((i, trial, error)) = next else { break };
        masked.push(i);
        lines = trial;
        errors.push(error);
    }
    errors.0.truncate(MAX_STRUCTURAL_ERRORS);
    (errors, None)
}

/// The recovered document with what [`Recovered::may_follow`] needs: the mappings that
/// lost a key (a blanked list item leaves its list whole) and the blanked text.
fn recovered<T>(
    doc: T,
    entries: &[YamlEntry],
    masked: &[usize],
    original: &[&str],
) -> Recovered<T> {
    // A mapping left with no key is gone too: its own holder lost a key.
    let mut tainted = Vec::new();
    for &i in masked.iter().filter(|&&i| !entries[i].item) {
        let mut up = entries[i].parent;
        while let Some(p) = up {
            tainted.push(entries[p].first);
            let emptied = (0..entries.len())
                .filter(|&c| entries[c].parent == Some(p))
                .all(|c| masked.contains(&c));
            up = if emptied { entries[p].parent } else { None };
        }
    }
    let text = masked
        .iter()
        .flat_map(|&i| original[entries[i].first - 1..entries[i].last].iter())
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    Recovered {
        doc,
        blanked: Blanked { tainted, text },
    }
}

/// A block of lines (1-based, inclusive) of a YAML document: a key with its value (at any
/// depth), or an item of a block list.
#[derive(Debug)]
struct YamlEntry {
    first: usize,
    last: usize,
    /// A list item (else a key).
    item: bool,
    /// The entry holding it (for an item: its list's key, or the item holding the list).
    parent: Option<usize>,
}

/// A block key at the start of `rest` (`name:` followed by a space or the line's end):
/// whether its value is on the next lines (nothing after the colon).
fn block_key(rest: &str) -> Option<bool> {
    static KEY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r#"^(?:"[^"]*"|'[^']*'|[^\s#{}\[\],&*!|>'"%@`-][^:#]*?|-[^\s:#][^:#]*?):(?:\s+(.*))?$"#,
        )
        .unwrap()
    });
    let c = KEY.captures(rest)?;
    let value = c.get(1).map_or("", |m| m.as_str()).trim();
    Some(value.is_empty() || value.starts_with('#'))
}

/// The entries of a block-style document, each after the entries holding it, from the
/// indentation of its lines: a key's value is the lines indented more than it (or, for a
/// list, the `- ` items at its own indentation); an item's is the lines indented more
/// than its `-`.
fn yaml_entries(text: &str) -> Vec<YamlEntry> {
    let content = |l: &str| !l.trim().is_empty() && !l.trim_start().starts_with('#');
    let mut entries: Vec<YamlEntry> = Vec::new();
    // Open entries: (index, column, a key whose value is on the next lines).
    let mut open: Vec<(usize, usize, bool)> = Vec::new();
    let mut last_content = 0;
    let mut in_block_scalar: Option<usize> = None;
    for (i, line) in crate::ground::source::lines(text).enumerate() {
        let n = i + 1;
        if !content(line) {
            continue;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        // The lines of a `|` or `>` scalar are its key's, whatever they look like.
        if let Some(col) = in_block_scalar {
            if indent > col {
                last_content = n;
                continue;
            }
            in_block_scalar = None;
        }
        if line.starts_with("---") || line.starts_with("...") {
            for (j, _, _) in open.drain(..) {
                entries[j].last = last_content;
            }
            last_content = n;
            continue;
        }
        let is_item = {
            let t = line.trim_start();
            t.starts_with("- ") || t == "-"
        };
        while let Some(&(j, col, block)) = open.last() {
            let continues = indent > col || (indent == col && block && is_item && !entries[j].item);
            if continues {
                break;
            }
            entries[j].last = last_content;
            open.pop();
        }
        let mut col = indent;
        let mut rest = &line[indent..];
        loop {
            let item = rest == "-" || rest.starts_with("- ");
            if !item {
                break;
            }
            entries.push(YamlEntry {
                first: n,
                last: n,
                item: true,
                parent: open.last().map(|&(j, _, _)| j),
            });
            open.push((entries.len() - 1, col, false));
            let after = rest[1..].trim_start_matches(' ');
            col += rest.len() - after.len();
            rest = after;
        }
        if let Some(block) = block_key(rest) {
            entries.push(YamlEntry {
                first: n,
                last: n,
                item: false,
                parent: open.last().map(|&(j, _, _)| j),
            });
            open.push((entries.len() - 1, col, block));
            let value = rest.split_once(':').map_or("", |(_, v)| v).trim();
            if value.starts_with('|') || value.starts_with('>') {
                in_block_scalar = Some(col);
            }
        }
        last_content = n;
    }
    for (j, _, _) in open {
        entries[j].last = last_content;
    }
    entries
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    /// A document shaped like a scenario: top-level keys, a list of steps.
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)] // read only by serde
    struct Doc {
        scenario: String,
        steps: Vec<Step>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Step {
        name: String,
        request: Request,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Request {
        method: String,
        #[serde(default)]
        paginate: bool,
    }

    fn lines(text: &str) -> Vec<u32> {
        let file = SourceFile::new("t.yaml", text);
        match super::super::parse::<Doc>(&file) {
            Ok(_) => Vec::new(),
            Err(e) => {
                e.0.iter()
                    .map(|e| e.pos.as_ref().map_or(0, |p| p.line))
                    .collect()
            }
        }
    }

    /// Every bad step is reported, also the last; a YAML syntax error and a removed
    /// required key stay out of it.
    #[test]
    fn structural_errors_of_every_entry() {
        let two_bad = "scenario: s\nsteps:\n  - name: a\n    reqest: {}\n  - name: b\n    request: { method: x, paginate: 3 }\n";
        assert_eq!(lines(two_bad), [4, 6]);
        let with_good = "scenario: s\nsteps:\n  - name: a\n    reqest: {}\n  - name: ok\n    request: { method: x }\n  - name: b\n    requst: {}\n";
        assert_eq!(lines(with_good), [4, 8]);
        // `scenario: [1]` is wrong; blanking it out would only add "missing `scenario`".
        let bad_required = "scenario: [1]\nsteps:\n  - name: a\n    request: { method: x }\n";
        assert_eq!(lines(bad_required), [1]);
        let syntax =
            "scenario: s\nsteps:\n  - name: a\n    reqest: {\n  - name: b\n    requst: {}\n";
        assert_eq!(lines(syntax).len(), 1);
        // A list where the document is a mapping: one error, not one per item.
        assert_eq!(lines("- name: a\n- name: b\n- name: c\n"), [1]);
        let entries = yaml_entries(with_good);
        let spans: Vec<(usize, usize, bool, Option<usize>)> = entries
            .iter()
            .map(|e| (e.first, e.last, e.item, e.parent))
            .collect();
        assert_eq!(
            spans,
            [
                (1, 1, false, None),
                (2, 8, false, None),
                (3, 4, true, Some(1)),
                (3, 3, false, Some(2)),
                (4, 4, false, Some(2)),
                (5, 6, true, Some(1)),
                (5, 5, false, Some(5)),
                (6, 6, false, Some(5)),
                (7, 8, true, Some(1)),
                (7, 7, false, Some(8)),
                (8, 8, false, Some(8)),
            ]
        );
    }

    /// A mapping of 300,000 unknown keys: the first error, and as many more as reading
    /// the file again within the bound finds — not 20 readings of 5 MB (issue #40: a
    /// million keys took minutes).
    #[test]
    fn a_large_file_is_read_again_within_a_bound() {
        let mut text = String::from("scenario: s\nsteps: []\n");
        for i in 0..300_000 {
            text.push_str(&format!("k{i}: {i}\n"));
        }
        let started = crate::ground::platform::thread_cpu();
        let found = lines(&text);
        let took = crate::ground::platform::thread_cpu() - started;
        // The file is 4.6 MB: read once more within the bound.
        assert_eq!(found, [3, 4], "{found:?}");
        assert!(took < std::time::Duration::from_secs(60), "took {took:?}");
    }

    /// Several mistakes in one entry (one step) are all reported: the innermost entry
    /// holding each is blanked out, not the whole step.
    #[test]
    fn several_structural_errors_in_one_entry() {
        let one_step = "scenario: s\nsteps:\n  - name: a\n    request:\n      method: x\n      paginat: true\n    reqest: {}\n    bogus: 1\n  - name: b\n    request: { method: y }\n";
        assert_eq!(lines(one_step), [6, 7, 8]);
        // A list at the indentation of its key, a block scalar, a comment.
        let text = "a:\n- x: |\n    - not: an entry\n  y: 1\n# c\nb: 2\n";
        let spans: Vec<(usize, usize, bool)> = yaml_entries(text)
            .iter()
            .map(|e| (e.first, e.last, e.item))
            .collect();
        assert_eq!(
            spans,
            [
                (1, 4, false),
                (2, 4, true),
                (2, 3, false),
                (4, 4, false),
                (6, 6, false)
            ]
        );
    }
}
