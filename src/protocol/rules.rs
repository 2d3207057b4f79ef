//! The rule each built-in check enforces, per protocol revision: its level (MUST, SHOULD or
//! not a rule) in every revision, and the spec text that says so.
//!
//! The table is the data file `rules.tsv` beside this module (embedded at build time); its
//! header says how to add a row. A step names its row with `rule: ID`; the revision the
//! connection **negotiated** (a legacy server may counter-offer an older one than asked)
//! picks the column: not a rule → the step is skipped with the reason, SHOULD → a failure is
//! a warning, MUST → a failure fails the run.

use std::sync::OnceLock;

/// The revisions the table has a column for, oldest first.
pub const REVISIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// A rule's level in one revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleLevel {
    Must,
    Should,
    /// The revision has no such rule: the check does not run.
    NotARule,
}

impl RuleLevel {
    fn parse(text: &str) -> Option<RuleLevel> {
        match text {
            "MUST" => Some(RuleLevel::Must),
            "SHOULD" => Some(RuleLevel::Should),
            "-" => Some(RuleLevel::NotARule),
            _ => None,
        }
    }

    /// `MUST`, `SHOULD` or `-`, as in the table.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleLevel::Must => "MUST",
            RuleLevel::Should => "SHOULD",
            RuleLevel::NotARule => "-",
        }
    }
}

/// One row of the table.
#[derive(Debug)]
pub struct Rule {
    pub id: &'static str,
    /// The level per revision, in the order of [`REVISIONS`].
    pub levels: [RuleLevel; 5],
    /// The spec text the levels rest on (may be empty: see the file's header).
    pub basis: &'static str,
}

impl Rule {
    /// The level at `revision`: its own column, or for a revision the table does not
    /// know, the newest column at or before it (the oldest column for an older one).
    pub fn level_at(&self, revision: &str) -> RuleLevel {
        self.levels[column_of(revision)]
    }

    /// The newest level that is a rule (the level a listing shows for the step), if any.
    pub fn newest_level(&self) -> Option<RuleLevel> {
        self.levels
            .iter()
            .rev()
            .copied()
            .find(|l| *l != RuleLevel::NotARule)
    }

    /// Why a step of this rule does not run at `revision` (not a rule there), if it does not.
    pub fn not_a_rule_at(&self, revision: &str) -> Option<String> {
        if self.level_at(revision) != RuleLevel::NotARule {
            return None;
        }
        let applies: Vec<&str> = REVISIONS
            .iter()
            .zip(self.levels)
            .filter(|(_, l)| *l != RuleLevel::NotARule)
            .map(|(r, _)| *r)
            .collect();
        let mut why = format!(
            "`{}` is not a rule in {revision}, the negotiated revision",
            self.id
        );
        if !applies.is_empty() {
            why.push_str(&format!(" (it applies in {})", applies.join(", ")));
        }
        if !self.basis.is_empty() {
            why.push_str(": ");
            why.push_str(self.basis);
        }
        Some(why)
    }
}

/// The column of `revision` in [`REVISIONS`].
pub fn column_of(revision: &str) -> usize {
    REVISIONS.iter().rposition(|r| *r <= revision).unwrap_or(0)
}

const TABLE: &str = include_str!("rules.tsv");

/// Every row, in file order. The table is part of the binary: a malformed row is a bug
/// caught by the unit test below, so it panics here.
pub fn all() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| parse(TABLE).unwrap_or_else(|e| panic!("src/protocol/rules.tsv: {e}")))
}

/// The row of `id`.
pub fn find(id: &str) -> Option<&'static Rule> {
    all().iter().find(|r| r.id == id)
}

fn parse(text: &'static str) -> Result<Vec<Rule>, String> {
    let mut rules: Vec<Rule> = Vec::new();
    let mut header_seen = false;
    for (i, line) in text.lines().enumerate() {
        let at = i + 1;
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let cells: Vec<&'static str> = line.split('\t').collect();
        if !header_seen {
            let want: Vec<&str> = ["rule"]
                .into_iter()
                .chain(REVISIONS)
                .chain(["basis"])
                .collect();
            if cells != want {
                return Err(format!("line {at}: the header must be {}", want.join(" ")));
            }
            header_seen = true;
            continue;
        }
        if cells.len() != 7 {
            return Err(format!(
                "line {at}: {} cells; a row is a rule id, a level for each of the {} revisions and a basis (may be empty)",
                cells.len(),
                REVISIONS.len()
            ));
        }
        let mut levels = [RuleLevel::NotARule; 5];
        for (k, cell) in cells[1..6].iter().enumerate() {
            levels[k] = RuleLevel::parse(cell).ok_or_else(|| {
                format!(
                    "line {at}: `{cell}` for {} is not MUST, SHOULD or -",
                    REVISIONS[k]
                )
            })?;
        }
        let rule = Rule {
            id: cells[0],
            levels,
            basis: cells[6],
        };
        let is_rule: Vec<RuleLevel> = levels
            .into_iter()
            .filter(|l| *l != RuleLevel::NotARule)
            .collect();
        let mixed = is_rule.windows(2).any(|w| w[0] != w[1]);
        if (mixed || is_rule.is_empty()) && rule.basis.is_empty() {
            return Err(format!(
                "line {at}: `{}` needs a basis (the spec text): its level differs between revisions, or it is a rule in none",
                rule.id
            ));
        }
        if rules.iter().any(|r| r.id == rule.id) {
            return Err(format!("line {at}: `{}` has a row already", rule.id));
        }
        rules.push(rule);
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses() {
        assert!(!all().is_empty());
    }

    #[test]
    fn a_revision_picks_its_column() {
        let r = find("resource_not_found_error").unwrap();
        assert_eq!(r.level_at("2024-11-05"), RuleLevel::Should);
        assert_eq!(r.level_at("2025-11-25"), RuleLevel::Should);
        assert_eq!(r.level_at("2026-07-28"), RuleLevel::Must);
        // A revision between two columns takes the older one; one before all, the first.
        assert_eq!(column_of("2025-05-01"), 1);
        assert_eq!(column_of("2023-01-01"), 0);
        let h = find("unsupported_version_header_rejected").unwrap();
        assert!(h.not_a_rule_at("2025-03-26").is_some());
        assert!(h.not_a_rule_at("2025-06-18").is_none());
    }

    #[test]
    fn malformed_rows_are_named() {
        let head = "rule\t2024-11-05\t2025-03-26\t2025-06-18\t2025-11-25\t2026-07-28\tbasis\n";
        let bad = |row: &str| -> String {
            let text: &'static str = Box::leak(format!("{head}{row}\n").into_boxed_str());
            parse(text).unwrap_err()
        };
        assert!(bad("x\tMUST\tMUST").contains("3 cells"));
        assert!(bad("x\tMUST\tMAY\tMUST\tMUST\tMUST\t").contains("`MAY` for 2025-03-26"));
        assert!(bad("x\tMUST\tSHOULD\tMUST\tMUST\tMUST\t").contains("needs a basis"));
        assert!(bad("x\t-\t-\t-\t-\t-\t").contains("needs a basis"));
    }
}
