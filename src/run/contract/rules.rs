//! Contract rules applied: which changes of a diff fail the run, which are only reported,
//! and which are accepted. An accepted change that no longer occurs is stale and fails the
//! run until it is removed. The rules files themselves are read by [`crate::language::contract_rules`].

use super::diff::{Change, DiffReport};
use super::schema_diff::{Breaks, Models};
use crate::language::contract_rules::Rules;

/// What the rules make of one change.
#[derive(Debug, Clone, PartialEq)]
pub enum ChangeDecision {
    Fail,
    Report,
    Accepted { reason: String },
}

#[derive(Debug, Clone)]
pub struct Judged {
    pub change: Change,
    pub verdict: ChangeDecision,
    /// Set when an acceptance matched but has expired.
    pub note: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Judgement {
    pub changes: Vec<Judged>,
    /// Acceptance entries that matched nothing.
    pub stale: Vec<StaleAcceptance>,
}

/// An acceptance entry that matched nothing.
#[derive(Debug, Clone)]
pub struct StaleAcceptance {
    /// Where the entry is: `file:line:col`.
    pub pos: String,
    pub list: String,
    pub name: String,
    pub kind: String,
}

impl StaleAcceptance {
    /// `file:line:col: message`, as the text and JSON reports show it.
    pub fn message(&self) -> String {
        format!(
            "{}: accepted change `{}` of {} `{}` no longer occurs: remove this entry",
            self.pos, self.kind, self.list, self.name
        )
    }

    /// The change it accepts, as a JUnit testcase names it: `tools/divide removed` (no
    /// position, so the name survives edits of the rules file).
    pub fn change(&self) -> String {
        format!("{}/{} {}", self.list, self.name, self.kind)
    }
}

impl Judgement {
    pub fn fails(&self) -> bool {
        !self.stale.is_empty()
            || self
                .changes
                .iter()
                .any(|j| j.verdict == ChangeDecision::Fail)
    }
}

fn fails(rules: &Rules, c: &Change) -> bool {
    rules.fail.iter().any(|f| match f.as_str() {
        "any" => true,
        "breaking" => c.breaks_clients == Breaks::Yes,
        "unknown" => c.breaks_clients == Breaks::Unknown,
        "models" => c.affects_models == Models::Yes,
        kind => c.kind.as_str() == kind,
    })
}

/// Apply rules to a diff (`today` decides expiry).
pub fn judge(rules: &Rules, report: &DiffReport, today: chrono::NaiveDate) -> Judgement {
    let mut used = vec![false; rules.accept.len()];
    let mut changes = Vec::new();
    for c in report
        .changes
        .iter()
        .filter(|c| !rules.ignore.iter().any(|k| k == c.kind.as_str()))
    {
        let matching = rules.accept.iter().enumerate().find(|(_, a)| {
            a.list == c.list
                && a.name == c.name
                && a.kind == c.kind.as_str()
                && a.path.as_ref().is_none_or(|p| Some(p) == c.path.as_ref())
        });
        let mut note = None;
        let verdict = match matching {
            Some((i, a)) => {
                used[i] = true;
                match a.expires {
                    Some(d) if d < today => {
                        note = Some(format!("acceptance at {} expired on {d}", a.pos));
                        if fails(rules, c) {
                            ChangeDecision::Fail
                        } else {
                            ChangeDecision::Report
                        }
                    }
                    _ => ChangeDecision::Accepted {
                        reason: a.reason.clone(),
                    },
                }
            }
            None if fails(rules, c) => ChangeDecision::Fail,
            None => ChangeDecision::Report,
        };
        changes.push(Judged {
            change: c.clone(),
            verdict,
            note,
        });
    }
    let stale = rules
        .accept
        .iter()
        .zip(used)
        .filter(|(_, u)| !u)
        .map(|(a, _)| StaleAcceptance {
            pos: a.pos.to_string(),
            list: a.list.clone(),
            name: a.name.clone(),
            kind: a.kind.clone(),
        })
        .collect();
    Judgement { changes, stale }
}

#[cfg(test)]
mod tests {

    /// The rows of schema kinds say what the schema comparator decides (the kinds it does
    /// not decide, such as `output_schema_removed`, are classified where they are found).
    #[test]
    fn schema_rows_agree_with_the_comparator() {
        use crate::language::contract_rules::change_kind::TABLE;
        use crate::run::contract::schema_diff::{Breaks, Models, SchemaSide, verdict};
        let breaks = |b: Breaks| match b {
            Breaks::Yes => "true",
            Breaks::No => "false",
            Breaks::Unknown => "unknown",
        };
        let models = |m: Models| match m {
            Models::Yes => "true",
            Models::No => "false",
            Models::Possibly => "possibly",
        };
        let mut checked = 0;
        for row in TABLE {
            let dir = match row.list {
                "tools (input)" => SchemaSide::Input,
                "tools (output)" => SchemaSide::Output,
                _ => continue,
            };
            for kind in row.named() {
                let (b, m) = verdict(kind, dir);
                if b == Breaks::Unknown {
                    continue;
                }
                checked += 1;
                assert_eq!(
                    (breaks(b), models(m)),
                    (row.breaks_clients, row.affects_models),
                    "{kind} in {}",
                    row.list
                );
            }
        }
        assert!(checked > 40, "only {checked} schema kinds checked");
    }
}
