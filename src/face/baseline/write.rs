//! Writing a baseline from a run's current failures.

use std::collections::{BTreeMap, BTreeSet};

use super::apply::{fails_run, has_setup_error_only};
use super::parse::{ParsedEntry, parse_entry};
use crate::results::outcome::Outcome;
use crate::results::report::result::RunReport;

pub(super) const HEADER: &str = "\
# Expected failures for mcpspec (the format of the MCP conformance suite's
# --expected-failures file). One entry per line:
#   scenario              the whole scenario may fail
#   scenario:check        only this check (step name) may fail; no space after the colon
#   scenario@era:check    only in that era (matrix runs)
# A listed failure does not fail the run. An entry that passes again is stale and fails
# the run until its line is removed.
";

/// An era in which no scenario connected: every suite of it ended in a setup error
/// (start, unreachable, auth, protocol). A baseline of it would list every scenario and
/// turn "the server does not speak this era" into a green run.
#[derive(Debug, PartialEq)]
pub struct Unconnected {
    pub era: String,
    pub suites: usize,
    /// The first suite's reason.
    pub reason: String,
}

/// The eras of the run in which no scenario connected (none when the run was interrupted).
pub fn unconnected_eras(report: &RunReport) -> Vec<Unconnected> {
    let mut eras: BTreeMap<&str, (usize, Option<&str>)> = BTreeMap::new();
    for suite in &report.suites {
        let connect_error = suite.setup_error.as_deref().filter(|_| {
            has_setup_error_only(suite)
                && !matches!(
                    suite.setup_error_kind.as_deref(),
                    Some("load" | "interrupted")
                )
        });
        let entry = eras
            .entry(suite.era.requested.as_str())
            .or_insert((0, Some("")));
        entry.0 += 1;
        entry.1 = match (entry.1, connect_error) {
            (Some(""), Some(why)) => Some(why),
            (Some(first), Some(_)) => Some(first),
            _ => None,
        };
    }
    eras.into_iter()
        .filter_map(|(era, (suites, reason))| {
            reason.map(|why| Unconnected {
                era: era.to_string(),
                suites,
                reason: crate::ground::redact::excerpt(why).to_string(),
            })
        })
        .collect()
}

/// A baseline listing the current failures of a run: one `scenario:check` per failing step
/// (failed, errored, already expected, and warning when `strict`), a whole-scenario entry
/// per setup error, with `@era` only when the failure happened in some of the eras the
/// scenario ran in but not all. Entries are sorted; the file starts with a header comment.
/// Applying it to the same run gives no unexpected failure and no stale entry.
pub fn write_from(report: &RunReport, strict: bool) -> String {
    let mut ran: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut setup: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut checks: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
    for suite in &report.suites {
        let (scenario, era) = (suite.scenario.as_str(), suite.era.requested.as_str());
        ran.entry(scenario).or_default().insert(era);
        if has_setup_error_only(suite) {
            setup.entry(scenario).or_default().insert(era);
        }
        for step in &suite.steps {
            if fails_run(&step.outcome, strict)
                || matches!(step.outcome, Outcome::ExpectedFailure { .. })
            {
                checks
                    .entry((scenario, step.name.as_str()))
                    .or_default()
                    .insert(era);
            }
        }
    }
    // An `@` in the scenario id would read as an era qualifier: always qualify those.
    let qualify = |scenario: &str, eras: &BTreeSet<&str>| {
        scenario.contains('@') || ran.get(scenario) != Some(eras)
    };
    let mut entries: BTreeSet<ParsedEntry> = BTreeSet::new();
    for (scenario, eras) in &setup {
        if qualify(scenario, eras) {
            for era in eras {
                entries.insert((scenario.to_string(), Some(era.to_string()), None));
            }
        } else {
            entries.insert((scenario.to_string(), None, None));
        }
    }
    for ((scenario, check), eras) in &checks {
        // A setup error in an era is already listed as a whole-scenario entry.
        let covered = |era: &str| setup.get(scenario).is_some_and(|s| s.contains(era));
        if qualify(scenario, eras) {
            for era in eras.iter().filter(|e| !covered(e)) {
                entries.insert((
                    scenario.to_string(),
                    Some(era.to_string()),
                    Some(check.to_string()),
                ));
            }
        } else {
            entries.insert((scenario.to_string(), None, Some(check.to_string())));
        }
    }

    let mut out = String::from(HEADER);
    if strict {
        out.push_str("# Warnings (should-level steps) are listed too (strict).\n");
    }
    let mut listed = Vec::new();
    let mut unlisted = Vec::new();
    for entry in entries {
        let text = entry_text(&entry);
        // A scenario id with `:` (or a check id with a leading space) cannot be written.
        if parse_entry(&text).as_ref() == Ok(&entry) {
            listed.push(text);
        } else {
            unlisted.push(text);
        }
    }
    if listed.is_empty() {
        out.push_str("server: []\n");
    } else {
        out.push_str("server:\n");
        for text in &listed {
            out.push_str(&format!(
                "  - {}\n",
                crate::ground::yaml::write::block_item(text)
            ));
        }
    }
    for text in &unlisted {
        out.push_str(&format!(
            "  # cannot be listed (the id does not fit the entry syntax): {}\n",
            text.replace('\n', " ")
        ));
    }
    out.push_str("client: []\n");
    out
}

pub(super) fn entry_text((scenario, era, check): &ParsedEntry) -> String {
    let mut text = scenario.clone();
    if let Some(era) = era {
        text.push('@');
        text.push_str(era);
    }
    if let Some(check) = check {
        text.push(':');
        text.push_str(check);
    }
    text
}
