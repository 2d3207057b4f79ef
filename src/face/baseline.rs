//! Expected failures: a YAML baseline of known failures, compatible with the official MCP
//! conformance suite's `--expected-failures` file.
//!
//! ```yaml
//! server:
//!   - tools-call-with-progress                                # the whole scenario may fail
//!   - server-stateless:sep-2575-server-implements-discover    # only this check (step name)
//!   - tools@2026-07-28                                        # only in that era (mcpspec)
//!   - tools@legacy:lists the tools                            # era and check
//! client: []                                                  # accepted and ignored
//! ```
//!
//! Applied to a finished run ([`apply`]), a listed failure becomes an expected failure and an
//! entry whose failure is gone is *stale* (it must be removed, so a fix is never forgotten).
//! The rules follow the conformance suite (`evaluateBaseline`):
//!
//! | entry          | result                                | outcome               |
//! |----------------|---------------------------------------|-----------------------|
//! | whole scenario | a step fails (or setup error)         | expected              |
//! | whole scenario | it ran and no step fails              | stale                 |
//! | none           | a step fails                          | unexpected            |
//! | `scn:check`    | that step fails                       | expected              |
//! | `scn:check`    | another step of `scn` fails           | unexpected            |
//! | `scn:check`    | that step passes                      | stale                 |
//! | `scn:check`    | that step is absent or skipped        | tolerated             |
//!
//! An entry whose scenario did not run at all (filtered out, other era) is tolerated, so
//! a filtered run never makes entries stale. An entry that names no scenario (or no check of
//! its scenario) of the files and packs loaded is an error ([`Baseline::check_known`]).

mod apply;
mod parse;
mod write;

use crate::ground::source::Pos;

pub(crate) use apply::fails_run;
pub use apply::{Applied, Relabel, Stale, apply, relabel_suite, stale};
pub use write::{Unconnected, unconnected_eras, write_from};

/// Top-level keys of a baseline file.
const KEYS: &[&str] = &["server", "client"];

const ENTRY_FORMS: &str = "an entry is `scenario`, `scenario:check` or `scenario@era:check`";

/// A loaded expected-failures file.
#[derive(Debug, Clone)]
pub struct Baseline {
    /// The `server` entries, in file order.
    pub entries: Vec<Entry>,
    /// File name as the user named it.
    pub file: String,
}

/// One `server` entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Scenario id (never contains `:`).
    pub scenario: String,
    /// Era qualifier (`legacy`, `modern`, `auto` or a revision date), when given.
    pub era: Option<String>,
    /// Check id (step name), when the entry names a single check.
    pub check: Option<String>,
    /// The entry as written (the string value), shown in reports.
    pub text: String,
    pub pos: Pos,
}

impl Entry {
    fn matches_suite(&self, scenario: &str, era: &str) -> bool {
        self.scenario == scenario && self.era.as_deref().is_none_or(|e| e == era)
    }

    /// Lower is more specific: the label of an expected failure is its most specific entry.
    fn rank(&self) -> u8 {
        match (&self.check, &self.era) {
            (Some(_), Some(_)) => 0,
            (Some(_), None) => 1,
            (None, Some(_)) => 2,
            (None, None) => 3,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::write::HEADER;
    use super::*;
    use crate::ground::load_error::LoadErrors;
    use crate::ground::source::SourceFile;
    use crate::results::outcome::{Failure, Finding, Level, Outcome};
    use crate::results::report::result::{RunReport, StepResult, SuiteResult, Summary};
    use crate::results::report::testdata::{bare_step, bare_suite as suite};

    fn parse(text: &str) -> Result<Baseline, LoadErrors> {
        Baseline::parse(SourceFile::new("baseline.yaml", text))
    }

    fn ok(text: &str) -> Baseline {
        match parse(text) {
            Ok(b) => b,
            Err(e) => panic!("unexpected errors:\n{}", e.render()),
        }
    }

    /// `file:line:col: message` of every error, and the rendering (for help texts).
    fn errors(text: &str) -> (Vec<String>, String) {
        match parse(text) {
            Ok(b) => panic!("expected errors, parsed {b:?}"),
            Err(e) => (e.0.iter().map(|e| e.to_string()).collect(), e.render()),
        }
    }

    fn failure() -> Failure {
        Failure {
            kind: "path".into(),
            finding: Finding::new("expected 1, got 2".into(), "1", "2"),
            snippet: String::new(),
            file: "s.yaml".into(),
            line: 3,
            column: 5,
        }
    }

    fn failed() -> Outcome {
        Outcome::Failed {
            failures: vec![failure()],
        }
    }

    fn warning() -> Outcome {
        Outcome::Warning {
            failures: vec![failure()],
        }
    }

    fn error() -> Outcome {
        Outcome::Error {
            message: "timed out after 5s".into(),
            detail: Some("no reply".into()),
        }
    }

    fn skipped() -> Outcome {
        Outcome::Skipped {
            reason: "not in this era".into(),
        }
    }

    fn step(name: &str, outcome: Outcome) -> StepResult {
        let level = if matches!(outcome, Outcome::Warning { .. }) {
            Level::Should
        } else {
            Level::Must
        };
        StepResult {
            line: 2,
            column: 5,
            level,
            ..bare_step(name, outcome)
        }
    }

    fn broken(id: &str) -> SuiteResult {
        let mut s = suite(id, vec![]);
        s.setup_error = Some("server exited".into());
        s.setup_error_kind = Some("start".into());
        s
    }

    fn run(suites: Vec<SuiteResult>) -> RunReport {
        RunReport {
            mcpspec_version: "0".into(),
            target: "stdio: server".into(),
            transport: "stdio".into(),
            started_at: String::new(),
            duration: Duration::ZERO,
            summary: Summary::from_suites(&suites),
            stale_entries: Vec::new(),
            interrupted: None,
            shard: None,
            servers: None,
            models: Vec::new(),
            suites,
        }
    }

    /// Apply `baseline` (text) and return the result with the outcome status of every step
    /// as `suite/step=status`.
    fn check(text: &str, mut report: RunReport, strict: bool) -> (Applied, Vec<String>) {
        let applied = apply(&ok(text), &mut report, strict);
        let statuses = report
            .suites
            .iter()
            .flat_map(|s| {
                s.steps
                    .iter()
                    .map(move |st| format!("{}/{}={}", s.id, st.name, st.outcome.status()))
            })
            .collect();
        (applied, statuses)
    }

    fn stale(applied: &Applied) -> Vec<&str> {
        applied.stale.iter().map(|s| s.entry.as_str()).collect()
    }

    // ---- parsing ----

    #[test]
    fn parses_every_entry_form() {
        let b = ok(
            "# known failures\nserver:\n  - tools-call-with-progress\n  - server-stateless:sep-2575-server-implements-discover\n  - tools@2026-07-28\n  - tools@legacy:lists the tools\n  - packs/core/ping:a:b\nclient: []\n",
        );
        assert_eq!(b.file, "baseline.yaml");
        let got: Vec<_> = b
            .entries
            .iter()
            .map(|e| {
                (
                    e.scenario.as_str(),
                    e.era.as_deref(),
                    e.check.as_deref(),
                    e.text.as_str(),
                    e.pos.to_string(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "tools-call-with-progress",
                    None,
                    None,
                    "tools-call-with-progress",
                    "baseline.yaml:3:5".to_string()
                ),
                (
                    "server-stateless",
                    None,
                    Some("sep-2575-server-implements-discover"),
                    "server-stateless:sep-2575-server-implements-discover",
                    "baseline.yaml:4:5".to_string()
                ),
                (
                    "tools",
                    Some("2026-07-28"),
                    None,
                    "tools@2026-07-28",
                    "baseline.yaml:5:5".to_string()
                ),
                (
                    "tools",
                    Some("legacy"),
                    Some("lists the tools"),
                    "tools@legacy:lists the tools",
                    "baseline.yaml:6:5".to_string()
                ),
                (
                    "packs/core/ping",
                    None,
                    Some("a:b"),
                    "packs/core/ping:a:b",
                    "baseline.yaml:7:5".to_string()
                ),
            ]
        );
    }

    #[test]
    fn empty_files_and_lists_are_empty_baselines() {
        for text in [
            "",
            "  \n",
            "# nothing yet\n",
            "server:\n",
            "server: []\n",
            "server: []\nclient:\n  - sse-retry\n",
        ] {
            assert!(ok(text).entries.is_empty(), "{text:?}");
        }
        assert_eq!(ok("client: [a]\nserver: [x]\n").entries.len(), 1);
    }

    #[test]
    fn top_level_must_be_a_mapping() {
        let (errs, rendered) = errors("- tools\n");
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:1:1: expected a mapping with `server` and `client` lists, found a list"
            ]
        );
        assert!(rendered.contains("write `server:`"), "{rendered}");
        let (errs, _) = errors("tools\n");
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0].starts_with("baseline.yaml:1:1: expected a mapping"),
            "{errs:?}"
        );
    }

    #[test]
    fn lists_must_be_lists_of_strings() {
        let (errs, rendered) = errors("server: tools\nclient: {a: 1}\n");
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:1:9: `server` must be a list of strings, found a string",
                "baseline.yaml:2:9: `client` must be a list of strings, found a mapping",
            ]
        );
        assert!(
            rendered.contains("one `- entry` per line under `server:`"),
            "{rendered}"
        );
        let (errs, _) = errors("server:\n  - 123\n  - [a]\nclient:\n  - true\n");
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:2:5: entry must be a string, found a number",
                "baseline.yaml:3:5: entry must be a string, found a list",
                "baseline.yaml:5:5: entry must be a string, found a boolean",
            ]
        );
    }

    #[test]
    fn unknown_keys_suggest_the_right_one() {
        let (errs, rendered) = errors("server: []\nsever:\n  - tools\nextra: 1\n");
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:2:1: unknown key `sever`",
                "baseline.yaml:4:1: unknown key `extra`",
            ]
        );
        assert!(rendered.contains("did you mean `server`?"), "{rendered}");
    }

    #[test]
    fn a_space_after_the_colon_is_rejected_with_a_hint() {
        let (errs, rendered) = errors(
            "server:\n  - server-stateless: sep-2575-server-implements-discover\n  - \"tools: lists\"\n  - \"tools :lists\"\n  - ping:\n",
        );
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:2:5: entry `server-stateless: sep-2575-server-implements-discover` is a mapping, not a string",
                "baseline.yaml:3:5: entry `tools: lists` has a space around the colon",
                "baseline.yaml:4:5: entry `tools :lists` has a space around the colon",
                "baseline.yaml:5:5: entry `ping:` is a mapping, not a string",
            ]
        );
        assert!(
            rendered.contains(
                "write `server-stateless:sep-2575-server-implements-discover` with no space after the colon"
            ),
            "{rendered}"
        );
        assert!(
            rendered.contains("write `tools:lists` with no space after the colon"),
            "{rendered}"
        );
        assert!(
            rendered.contains("write `ping` for the whole scenario"),
            "{rendered}"
        );
    }

    #[test]
    fn malformed_entries_are_rejected() {
        let (errs, rendered) = errors(
            "server:\n  - \"\"\n  - \"tools:\"\n  - \"@legacy:x\"\n  - tools@yesterday:x\n  - \" tools\"\n",
        );
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:2:5: empty entry",
                "baseline.yaml:3:5: entry `tools:` has no check id after the colon",
                "baseline.yaml:4:5: entry `@legacy:x` has no scenario id",
                "baseline.yaml:5:5: invalid era qualifier in entry `tools@yesterday:x`",
                "baseline.yaml:6:5: entry ` tools` has leading or trailing spaces",
            ]
        );
        assert!(rendered.contains("`yesterday` is not an era"), "{rendered}");
        assert!(rendered.contains("5 errors found"), "{rendered}");
        // Every era form is accepted.
        let b = ok("server: [a@legacy, a@modern, a@auto, a@2025-06-18:x]\n");
        let eras: Vec<_> = b.entries.iter().map(|e| e.era.clone().unwrap()).collect();
        assert_eq!(eras, ["legacy", "modern", "auto", "2025-06-18"]);
    }

    #[test]
    fn whole_and_per_check_of_one_scenario_is_rejected() {
        let (errs, rendered) =
            errors("server:\n  - tools:lists\n  - tools\n  - ping@legacy\n  - ping@legacy:pong\n");
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:3:5: scenario `tools` is listed both as a whole (line 3) and per check (line 2: `tools:lists`)",
                "baseline.yaml:5:5: scenario `ping@legacy` is listed both as a whole (line 4) and per check (line 5: `ping@legacy:pong`)",
            ]
        );
        assert!(
            rendered.contains("keep either the whole-scenario entry `tools`"),
            "{rendered}"
        );
        // Different era qualifiers do not conflict.
        assert_eq!(
            ok("server: [tools@legacy, tools:lists, tools@modern:lists]\n")
                .entries
                .len(),
            3
        );
    }

    #[test]
    fn duplicates_are_rejected() {
        let (errs, rendered) =
            errors("server:\n  - tools\n  - ping:pong\n  - tools\n  - \"ping:pong\"\n");
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:4:5: duplicate entry `tools`",
                "baseline.yaml:5:5: duplicate entry `ping:pong`",
            ]
        );
        assert!(rendered.contains("already listed at line 2"), "{rendered}");
    }

    #[test]
    fn yaml_errors_are_positioned() {
        let (errs, _) = errors("server:\n  - tools\nserver: []\n");
        assert_eq!(errs, vec!["baseline.yaml:3:1: duplicate key `server`"]);
        let (errs, _) = errors("server: [tools\n");
        assert_eq!(errs.len(), 1);
        assert!(errs[0].starts_with("baseline.yaml:"), "{errs:?}");
    }

    #[test]
    fn load_reads_a_file_or_says_why_not() {
        let dir = std::env::temp_dir().join(format!("mcpspec-baseline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("expected.yaml");
        std::fs::write(&path, "server:\n  - tools\n").unwrap();
        let b = Baseline::load(&path).unwrap();
        assert_eq!(b.file, path.display().to_string());
        assert_eq!(b.entries[0].pos.line, 2);
        let missing = Baseline::load(&dir.join("missing.yaml")).unwrap_err();
        assert!(
            missing.0[0].to_string().contains("cannot read"),
            "{:?}",
            missing.0
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    // ---- applying: the four exit rules, whole scenario ----

    #[test]
    fn whole_scenario_failing_is_expected() {
        let report = run(vec![suite(
            "tools@legacy",
            vec![
                step("a", failed()),
                step("b", Outcome::Passed),
                step("c", error()),
            ],
        )]);
        let (applied, statuses) = check("server: [tools]\n", report, false);
        assert_eq!(applied.unexpected, 0);
        assert!(applied.stale.is_empty());
        assert!(applied.is_ok());
        assert_eq!(
            statuses,
            [
                "tools@legacy/a=expectedFailure",
                "tools@legacy/b=passed",
                "tools@legacy/c=expectedFailure"
            ]
        );
    }

    #[test]
    fn whole_scenario_passing_is_stale() {
        let report = run(vec![suite(
            "tools@legacy",
            vec![step("a", Outcome::Passed)],
        )]);
        let (applied, _) = check("# x\nserver:\n  - ping\n  - tools\n", report, false);
        assert_eq!(applied.unexpected, 0);
        assert_eq!(applied.stale.len(), 1);
        let s = &applied.stale[0];
        assert_eq!(s.entry, "tools");
        assert_eq!(s.pos.to_string(), "baseline.yaml:4:5");
        assert_eq!(
            s.message,
            "`tools` passes now: remove line 4 of baseline.yaml"
        );
        assert!(!applied.is_ok());
        let rendered = s.render();
        assert!(
            rendered.starts_with("error: `tools` passes now: remove line 4 of baseline.yaml"),
            "{rendered}"
        );
        assert!(rendered.contains("baseline.yaml:4:5"), "{rendered}");
    }

    #[test]
    fn unlisted_failure_is_unexpected_and_unlisted_pass_is_fine() {
        let report = run(vec![
            suite(
                "tools@legacy",
                vec![step("a", failed()), step("b", error())],
            ),
            suite("ping@legacy", vec![step("p", Outcome::Passed)]),
        ]);
        let (applied, statuses) = check("server: []\n", report, false);
        assert_eq!(applied.unexpected, 2);
        assert!(applied.stale.is_empty());
        assert_eq!(
            statuses,
            [
                "tools@legacy/a=failed",
                "tools@legacy/b=error",
                "ping@legacy/p=passed"
            ]
        );
    }

    #[test]
    fn entries_for_scenarios_that_did_not_run_are_tolerated() {
        let report = run(vec![suite("ping@legacy", vec![step("p", Outcome::Passed)])]);
        let (applied, _) = check(
            "server: [tools, tools2:x, ping@modern, ping@auto:p]\n",
            report,
            false,
        );
        assert!(applied.is_ok(), "{applied:?}");
        // A scenario whose steps were all skipped did not really run.
        let report = run(vec![suite("tools@legacy", vec![step("a", skipped())])]);
        let (applied, _) = check("server: [tools]\n", report, false);
        assert!(applied.is_ok(), "{applied:?}");
    }

    // ---- applying: per check ----

    #[test]
    fn listed_check_failing_is_expected_other_checks_still_fail() {
        let report = run(vec![suite(
            "tools@legacy",
            vec![
                step("a", failed()),
                step("b", failed()),
                step("c", Outcome::Passed),
            ],
        )]);
        let (applied, statuses) = check("server: [\"tools:a\"]\n", report, false);
        assert_eq!(applied.unexpected, 1);
        assert!(applied.stale.is_empty());
        assert_eq!(
            statuses,
            [
                "tools@legacy/a=expectedFailure",
                "tools@legacy/b=failed",
                "tools@legacy/c=passed"
            ]
        );
    }

    #[test]
    fn listed_check_passing_is_stale() {
        let report = run(vec![suite(
            "tools@legacy",
            vec![step("a", Outcome::Passed), step("b", failed())],
        )]);
        let (applied, _) = check("server:\n  - tools:b\n  - tools:a\n", report, false);
        assert_eq!(applied.unexpected, 0);
        assert_eq!(stale(&applied), ["tools:a"]);
        assert_eq!(
            applied.stale[0].message,
            "`tools:a` passes now: remove line 3 of baseline.yaml"
        );
    }

    #[test]
    fn listed_check_absent_or_skipped_is_tolerated() {
        let report = run(vec![suite(
            "tools@legacy",
            vec![step("a", skipped()), step("b", Outcome::Passed)],
        )]);
        let (applied, statuses) = check("server: [\"tools:a\", \"tools:gone\"]\n", report, false);
        assert!(applied.is_ok(), "{applied:?}");
        assert_eq!(
            statuses,
            ["tools@legacy/a=skipped", "tools@legacy/b=passed"]
        );
    }

    #[test]
    fn a_check_failing_in_one_era_and_passing_in_another_is_not_stale() {
        let report = run(vec![
            suite("tools@legacy", vec![step("a", failed())]),
            suite("tools@modern", vec![step("a", Outcome::Passed)]),
        ]);
        let (applied, statuses) = check("server: [\"tools:a\", tools@legacy]\n", report, false);
        assert!(applied.is_ok(), "{applied:?}");
        assert_eq!(
            statuses,
            ["tools@legacy/a=expectedFailure", "tools@modern/a=passed"]
        );
    }

    // ---- era qualifiers ----

    #[test]
    fn era_qualifiers_match_the_requested_era_only() {
        let report = || {
            run(vec![
                suite(
                    "tools@legacy",
                    vec![step("a", failed()), step("b", failed())],
                ),
                suite(
                    "tools@2026-07-28",
                    vec![step("a", failed()), step("b", Outcome::Passed)],
                ),
            ])
        };
        let (applied, statuses) = check("server: [\"tools@legacy:a\"]\n", report(), false);
        assert_eq!(applied.unexpected, 2);
        assert_eq!(
            statuses,
            [
                "tools@legacy/a=expectedFailure",
                "tools@legacy/b=failed",
                "tools@2026-07-28/a=failed",
                "tools@2026-07-28/b=passed"
            ]
        );
        let (applied, _) = check(
            "server: [tools@legacy, \"tools@2026-07-28:a\", \"tools@2026-07-28:b\"]\n",
            report(),
            false,
        );
        assert_eq!(applied.unexpected, 0);
        assert_eq!(stale(&applied), ["tools@2026-07-28:b"]);
        // `modern` is a label of its own: it does not match a run requested as a date.
        let (applied, _) = check("server: [tools@modern]\n", report(), false);
        assert_eq!(applied.unexpected, 3);
        assert!(applied.stale.is_empty());
        // A whole-scenario entry for one era is stale when that era passes.
        let report = run(vec![
            suite("tools@legacy", vec![step("a", failed())]),
            suite("tools@modern", vec![step("a", Outcome::Passed)]),
        ]);
        let (applied, _) = check("server: [tools@legacy, tools@modern]\n", report, false);
        assert_eq!(applied.unexpected, 0);
        assert_eq!(stale(&applied), ["tools@modern"]);
    }

    #[test]
    fn the_most_specific_entry_labels_the_expected_failure() {
        let labels = |text: &str| {
            let mut report = run(vec![suite(
                "tools@legacy",
                vec![step("a", failed()), step("b", failed())],
            )]);
            let applied = apply(&ok(text), &mut report, false);
            assert!(applied.is_ok(), "{applied:?}");
            report.suites[0]
                .steps
                .iter()
                .map(|s| match &s.outcome {
                    Outcome::ExpectedFailure { entry, failures } => {
                        assert_eq!(failures.len(), 1);
                        entry.clone()
                    }
                    other => panic!("{other:?}"),
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            labels("server: [tools@legacy, \"tools:a\"]\n"),
            ["tools:a", "tools@legacy"]
        );
        assert_eq!(
            labels("server: [tools, tools@legacy:a]\n"),
            ["tools@legacy:a", "tools"]
        );
        assert_eq!(
            labels("server: [\"tools:a\", tools@legacy:a, \"tools:b\"]\n"),
            ["tools@legacy:a", "tools:b"]
        );
    }

    // ---- warnings ----

    #[test]
    fn unlisted_warnings_fail_only_when_strict() {
        let report = || run(vec![suite("tools@legacy", vec![step("w", warning())])]);
        let (applied, statuses) = check("server: []\n", report(), false);
        assert!(applied.is_ok());
        assert_eq!(statuses, ["tools@legacy/w=warning"]);
        let (applied, statuses) = check("server: []\n", report(), true);
        assert_eq!(applied.unexpected, 1);
        assert_eq!(statuses, ["tools@legacy/w=warning"]);
    }

    #[test]
    fn listed_warnings_are_expected_with_or_without_strict() {
        for strict in [false, true] {
            for entry in ["tools", "\"tools:w\""] {
                let report = run(vec![suite(
                    "tools@legacy",
                    vec![step("w", warning()), step("p", Outcome::Passed)],
                )]);
                let (applied, statuses) = check(&format!("server: [{entry}]\n"), report, strict);
                assert!(applied.is_ok(), "{entry} strict={strict}: {applied:?}");
                assert_eq!(
                    statuses,
                    ["tools@legacy/w=expectedFailure", "tools@legacy/p=passed"]
                );
            }
        }
    }

    // ---- errors and setup errors ----

    #[test]
    fn errors_keep_their_message_as_a_failure() {
        let mut report = run(vec![suite("tools@legacy", vec![step("e", error())])]);
        apply(&ok("server: [\"tools:e\"]\n"), &mut report, false);
        match &report.suites[0].steps[0].outcome {
            Outcome::ExpectedFailure { failures, entry } => {
                assert_eq!(entry, "tools:e");
                assert_eq!(failures.len(), 1);
                assert_eq!(failures[0].kind, "error");
                assert_eq!(failures[0].finding.message, "timed out after 5s");
                assert_eq!(failures[0].finding.actual.as_deref(), Some("no reply"));
                assert_eq!((failures[0].line, failures[0].column), (2, 5));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn setup_errors_are_covered_by_whole_scenario_entries_only() {
        let report = || {
            run(vec![
                broken("tools@legacy"),
                suite("tools@modern", vec![step("a", Outcome::Passed)]),
            ])
        };
        let (applied, _) = check("server: []\n", report(), false);
        assert_eq!(applied.unexpected, 1);
        let (applied, _) = check("server: [tools@legacy]\n", report(), false);
        assert!(applied.is_ok(), "{applied:?}");
        // Unqualified: the setup error counts as a failure, so the entry is not stale.
        let (applied, _) = check("server: [tools]\n", report(), false);
        assert!(applied.is_ok(), "{applied:?}");
        // A check entry does not cover a setup error; with no steps it is tolerated.
        let (applied, _) = check("server: [\"tools@legacy:a\"]\n", report(), false);
        assert_eq!(applied.unexpected, 1);
        assert!(applied.stale.is_empty());
        // The setup error stays on the suite.
        let mut r = report();
        apply(&ok("server: [tools]\n"), &mut r, false);
        assert!(r.suites[0].setup_error.is_some());
    }

    #[test]
    fn summary_is_recomputed() {
        let mut report = run(vec![suite(
            "tools@legacy",
            vec![
                step("a", failed()),
                step("b", error()),
                step("c", Outcome::Passed),
            ],
        )]);
        assert_eq!((report.summary.failed, report.summary.errors), (1, 1));
        apply(&ok("server: [tools]\n"), &mut report, false);
        let s = &report.summary;
        assert_eq!(
            (s.failed, s.errors, s.passed, s.expected_failures),
            (0, 0, 1, 2)
        );
        assert!(s.is_green());
    }

    #[test]
    fn applying_twice_changes_nothing() {
        let mut report = run(vec![suite("tools@legacy", vec![step("a", failed())])]);
        let b = ok("server: [\"tools:a\"]\n");
        apply(&b, &mut report, false);
        let again = apply(&b, &mut report, false);
        assert!(again.is_ok(), "{again:?}");
        assert_eq!(report.summary.expected_failures, 1);
    }

    // ---- writing ----

    fn matrix() -> RunReport {
        run(vec![
            suite(
                "tools@legacy",
                vec![
                    step("lists the tools", failed()),
                    step("calls", failed()),
                    step("warns", warning()),
                    step("ok", Outcome::Passed),
                ],
            ),
            suite(
                "tools@2026-07-28",
                vec![
                    step("lists the tools", failed()),
                    step("calls", Outcome::Passed),
                    step("warns", warning()),
                ],
            ),
            broken("ping@legacy"),
            suite(
                "ping@2026-07-28",
                vec![step("pong", error()), step("skip", skipped())],
            ),
            broken("dead@legacy"),
            broken("dead@2026-07-28"),
            suite("green@legacy", vec![step("ok", Outcome::Passed)]),
            suite(
                "z/odd@legacy",
                vec![step("a: b # c", failed()), step("-x", error())],
            ),
        ])
    }

    #[test]
    fn writes_current_failures_sorted_and_qualified_only_when_needed() {
        let text = write_from(&matrix(), false);
        assert!(text.starts_with(HEADER), "{text}");
        let body = &text[HEADER.len()..];
        assert_eq!(
            body,
            "server:\n  - dead\n  - ping@2026-07-28:pong\n  - ping@legacy\n  - tools:lists the tools\n  - tools@legacy:calls\n  - z/odd:-x\n  - \"z/odd:a: b # c\"\nclient: []\n"
        );
        let strict = write_from(&matrix(), true);
        assert!(strict.contains("  - tools:warns\n"), "{strict}");
        assert!(strict.contains("(strict)"), "{strict}");
    }

    #[test]
    fn written_baselines_round_trip() {
        for strict in [false, true] {
            let text = write_from(&matrix(), strict);
            let baseline = ok(&text);
            let mut report = matrix();
            let applied = apply(&baseline, &mut report, strict);
            assert_eq!(applied.unexpected, 0, "strict={strict}\n{text}");
            assert!(
                applied.stale.is_empty(),
                "strict={strict}: {applied:?}\n{text}"
            );
            // Writing again from the relabelled run gives the same file.
            assert_eq!(write_from(&report, strict), text);
        }
        // A single-era run never needs qualifiers.
        let single = run(vec![suite("tools@legacy", vec![step("a", failed())])]);
        assert!(write_from(&single, false).contains("\n  - tools:a\n"));
    }

    #[test]
    fn a_green_run_writes_an_empty_baseline() {
        let report = run(vec![suite(
            "green@legacy",
            vec![step("ok", Outcome::Passed)],
        )]);
        let text = write_from(&report, false);
        assert!(text.ends_with("server: []\nclient: []\n"), "{text}");
        assert!(ok(&text).entries.is_empty());
    }

    #[test]
    fn ids_that_do_not_fit_the_syntax_are_written_as_comments() {
        let report = run(vec![
            suite("a:b@legacy", vec![step("x", failed())]),
            suite("at@home@legacy", vec![step("x", failed())]),
        ]);
        let text = write_from(&report, false);
        assert!(
            text.contains("  # cannot be listed (the id does not fit the entry syntax): a:b:x\n"),
            "{text}"
        );
        // `@` in a scenario id is always qualified, so it reads back as the same scenario.
        assert!(text.contains("  - at@home@legacy:x\n"), "{text}");
        let mut r = report.clone();
        let applied = apply(&ok(&text), &mut r, false);
        assert_eq!(applied.unexpected, 1);
        assert!(applied.stale.is_empty());
    }
}
