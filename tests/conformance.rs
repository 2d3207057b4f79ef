//! The built-in conformance packs against the real example server, no mocks:
//!
//! 1. the clean server passes both packs (`conformance-2026-07-28`, `conformance-2025-11-25`)
//!    in both eras, over stdio and over HTTP, with no warning and no failure; the skips
//!    are exactly the expected ones;
//! 2. every check fails at its level (MUST → `failed`, SHOULD → `warning`) under a
//!    seeded `--defect` that breaks its rule (the rows of `tests/defects/conformance.tsv`);
//! 3. `mcpspec list conformance` lists every check id (`tests/defects/conformance-checks.tsv`).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{LazyLock, Mutex};
use std::thread;

use common::{HttpServer, Run, read_json, run, stdio_target, table};
use serde_json::Value;

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "legacy";

/// Every check of both packs, as `scenario:step` (the check id is the step name).
static CHECKS: LazyLock<Vec<&str>> = LazyLock::new(|| {
    table::read_as("tests/defects/conformance-checks.tsv", &["check"], |row| {
        row.get("check")
    })
});

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Transport {
    Stdio,
    Http,
}

/// Where a case runs.
#[derive(Clone, Copy, Debug)]
enum On {
    Stdio,
    Http,
    Both,
}

impl On {
    fn transports(self) -> &'static [Transport] {
        match self {
            On::Stdio => &[Transport::Stdio],
            On::Http => &[Transport::Http],
            On::Both => &[Transport::Stdio, Transport::Http],
        }
    }
}

/// The expected (non-passing) status of a check under a defect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// A MUST check whose expectation failed.
    Failed,
    /// A SHOULD check whose expectation failed.
    Warning,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Failed => "failed",
            Status::Warning => "warning",
        }
    }
}

use On::{Both, Http as HttpOnly, Stdio as StdioOnly};
use Status::{Failed, Warning};

/// One seeded defect (server flags) and one check it must break:
/// `(server flags, era, transport, check, status)`. `check` is `scenario:step`;
/// `*:step` means every scenario of that era holding the step.
type Case = (&'static str, &'static str, On, &'static str, Status);

/// A modern-only server that refuses initialize with -32602 (it validates `_meta` first):
/// conformant to the MUST (an error, no result), short of the SHOULD (-32601 / -32022).
const INITIALIZE_32602: &str = "--change drop-legacy --defect initialize-invalid-params";

/// The eras a run against a server started with `flags` covers: a modern-only server
/// (`--change drop-legacy`) refuses `initialize`, so it runs in the modern era alone.
fn eras_for(flags: &str) -> &'static [&'static str] {
    if flags.contains("drop-legacy") {
        &[MODERN]
    } else {
        &[MODERN, LEGACY]
    }
}

/// The rows of `tests/defects/conformance.tsv`.
static CASES: LazyLock<Vec<Case>> = LazyLock::new(|| {
    let columns = &["flags", "era", "on", "check", "status"];
    table::read_as("tests/defects/conformance.tsv", columns, |row| {
        (
            row.get("flags"),
            row.pick("era", &[("modern", MODERN), ("legacy", LEGACY)]),
            row.pick(
                "on",
                &[("stdio", StdioOnly), ("http", HttpOnly), ("both", Both)],
            ),
            row.get("check").split(" after ").next().expect("a check"),
            row.pick("status", &[("failed", Failed), ("warning", Warning)]),
        )
    })
});

/// `(flags, check) → scenarios` of the rows whose check judges what other scenarios'
/// connections received (`check after scenario…`): those scenarios run too.
static AFTER: LazyLock<BTreeMap<(&str, &str), Vec<&str>>> = LazyLock::new(|| {
    let columns = &["flags", "era", "on", "check", "status"];
    table::read_as("tests/defects/conformance.tsv", columns, |row| {
        let mut words = row.get("check").split(" after ");
        let check = words.next().expect("a check");
        let after = words
            .next()
            .map(|w| w.split_whitespace().collect())
            .unwrap_or_default();
        ((row.get("flags"), check), after)
    })
    .into_iter()
    .collect()
});

// ---------------------------------------------------------------------------
// Running the packs
// ---------------------------------------------------------------------------

/// One run of both packs in both eras: the exit code and the `--json` report.
struct PackRun {
    run: Run,
    report: Value,
}

impl PackRun {
    /// `(suite id, step name) → (status, level)` of every step.
    fn outcomes(&self) -> BTreeMap<(String, String), (String, String)> {
        let mut out = BTreeMap::new();
        for suite in self.report["suites"].as_array().expect("suites") {
            let id = suite["id"].as_str().expect("suite id").to_string();
            for step in suite["steps"].as_array().expect("steps") {
                let name = step["name"].as_str().expect("step name").to_string();
                let status = step["outcome"]["status"].as_str().expect("status");
                let level = step["level"].as_str().unwrap_or("must");
                out.insert((id.clone(), name), (status.to_string(), level.to_string()));
            }
        }
        out
    }

    /// Setup errors of suites (none expected: every defect leaves the connection usable).
    fn setup_errors(&self) -> Vec<String> {
        self.report["suites"]
            .as_array()
            .expect("suites")
            .iter()
            .filter(|suite| !suite["setupError"].is_null())
            .map(|suite| format!("{}: {}", suite["id"], suite["setupError"]))
            .collect()
    }

    /// The steps that did not pass or skip, one per line (for failure messages).
    fn non_passing(&self) -> String {
        self.outcomes()
            .into_iter()
            .filter(|(_, (status, _))| status != "passed" && status != "skipped")
            .map(|((suite, step), (status, _))| format!("  {status:8} {suite}:{step}"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Runs `mcpspec run conformance` against the example server started with `flags`;
/// `filters` (`--filter`) select scenarios (none: all of them).
fn run_packs(flags: &str, transport: Transport, filters: &[String]) -> PackRun {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("result.json");
    let json = json.to_str().expect("utf-8 path");
    let words: Vec<&str> = flags.split_whitespace().collect();
    let mut common = vec!["--timeout", "10s"];
    for era in eras_for(flags) {
        common.extend(["--era", era]);
    }
    common.extend(["--jobs", "4", "--json", json]);
    for filter in filters {
        common.extend(["--filter", filter.as_str()]);
    }
    let run = match transport {
        Transport::Stdio => {
            let target = stdio_target(&words);
            let mut args = vec!["run", "conformance", "--stdio", &target];
            args.extend(&common);
            run(&args)
        }
        Transport::Http => {
            let server = HttpServer::start(&words);
            let mut args = vec!["run", "conformance", "--url", &server.url];
            args.extend(&common);
            run(&args)
        }
    };
    assert!(
        std::path::Path::new(json).exists(),
        "no JSON report for `{flags}` over {transport:?}: {run:?}"
    );
    let report = read_json(std::path::Path::new(json));
    PackRun { run, report }
}

/// One run: server flags, transport and the scenarios to run (`--filter`; empty: all).
type Job = (&'static str, Transport, Vec<String>);

/// Runs every job once, several at a time (they mostly wait on processes and pipes).
fn run_all(jobs: Vec<Job>) -> BTreeMap<(&'static str, Transport), PackRun> {
    let queue = Mutex::new(jobs);
    let done = Mutex::new(BTreeMap::new());
    let workers = thread::available_parallelism()
        .map_or(4, |n| n.get() * 2)
        .clamp(4, 12);
    thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let Some((flags, transport, filters)) = queue.lock().expect("queue").pop()
                    else {
                        break;
                    };
                    let result = run_packs(flags, transport, &filters);
                    done.lock()
                        .expect("results")
                        .insert((flags, transport), result);
                }
            });
        }
    });
    done.into_inner().expect("results")
}

/// The era a check's scenario runs in (`modern-*` or `legacy-*`).
fn era_of_scenario(scenario: &str) -> &'static str {
    if scenario.starts_with("modern-") {
        MODERN
    } else {
        LEGACY
    }
}

/// The scenarios a case's `check` names in `era` (`*:step`: all that hold the step).
fn scenarios_of(check: &str, era: &str) -> Vec<String> {
    let (scenario, step) = check.split_once(':').expect("scenario:step");
    if scenario != "*" {
        return vec![scenario.to_string()];
    }
    CHECKS
        .iter()
        .filter_map(|c| c.split_once(':'))
        .filter(|(s, name)| *name == step && era_of_scenario(s) == era)
        .map(|(s, _)| s.to_string())
        .collect()
}

/// The era part of a suite id (`scenario@era`).
fn era_of_suite(suite: &str) -> &str {
    suite.rsplit_once('@').map_or("", |(_, era)| era)
}

// ---------------------------------------------------------------------------
// 1. The clean server
// ---------------------------------------------------------------------------

/// Checks the clean server legitimately skips: HTTP-only rules over stdio (and the
/// reverse), undeclared-capability rules (it declares tools, prompts and resources), and
/// the page comparison of lists that fit in one page.
fn expected_skips(transport: Transport, paginated: bool) -> BTreeSet<String> {
    let mut skips: Vec<&str> = vec![
        "modern-undeclared@2026-07-28:undeclared_tools_not_served",
        "modern-undeclared@2026-07-28:undeclared_prompts_not_served",
        "modern-undeclared@2026-07-28:undeclared_resources_not_served",
        // Tasks: the clean server (without `--interactive`) declares no `tasks` capability.
        "legacy-tasks@legacy:task_status_forward",
        // The clean server is dual-era: the modern-only rules do not apply.
        "modern-only@2026-07-28:removed_initialize_rejected",
        "modern-only@2026-07-28:removed_initialize_error_code",
        "modern-only@2026-07-28:removed_ping_not_found",
        "modern-only@2026-07-28:removed_logging_set_level_not_found",
        "modern-only@2026-07-28:removed_resources_subscribe_not_found",
        "modern-only@2026-07-28:removed_resources_unsubscribe_not_found",
        "modern-only-http@2026-07-28:http_get_405",
        "modern-only-http@2026-07-28:http_delete_405",
        "modern-only-http@2026-07-28:removed_method_http_404",
        "modern-only-http@2026-07-28:initialize_no_session_id",
        // The utilities (tests/coverage.rs): undeclared without `--utilities`, and no
        // `elicitation_tool` set.
        "modern-utilities@2026-07-28:log_requires_log_level",
        "modern-utilities@2026-07-28:log_level_respected",
        "modern-utilities@2026-07-28:completion_prompt_listed",
        "modern-utilities@2026-07-28:completion_values_valid",
        "modern-utilities@2026-07-28:tools_list_changed_only_when_subscribed",
        "modern-utilities@2026-07-28:prompts_list_changed_only_when_subscribed",
        "modern-utilities@2026-07-28:resources_list_changed_only_when_subscribed",
        "modern-utilities@2026-07-28:missing_capability_rejected",
        "modern-utilities@2026-07-28:input_required_result_valid",
        "modern-utilities@2026-07-28:input_required_state",
        "modern-utilities@2026-07-28:input_required_reasks",
        "legacy-utilities@legacy:set_level_served",
        "legacy-utilities@legacy:set_level_invalid_level_invalid_params",
        "legacy-utilities@legacy:log_level_respected",
        "legacy-utilities@legacy:completion_prompt_listed",
        "legacy-utilities@legacy:completion_values_valid",
        "legacy-utilities@legacy:subscribe_resource_listed",
        "legacy-utilities@legacy:resources_subscribe_served",
        "legacy-utilities@legacy:resources_unsubscribe_served",
        // ... nor `progress_tool` / `list_change_tool`, and no `listChanged` is declared.
        "modern-utilities@2026-07-28:progress_increases",
        "modern-utilities@2026-07-28:listen_acknowledged",
        "modern-utilities@2026-07-28:listen_delivers_list_changed",
        "modern-utilities@2026-07-28:listen_only_requested",
        "modern-utilities@2026-07-28:listen_ends_on_cancel",
        "legacy-utilities@legacy:progress_increases",
        "legacy-utilities@legacy:tools_list_changed_sent",
        // No tool answers `input_required` without `--interactive` (tests/client_side.rs
        // runs them there).
        "modern-elicitation@2026-07-28:extra_responses_ignored",
        "modern-elicitation@2026-07-28:request_state_tampered_refused",
        // HTTP-only probes (stdio), or no OAuth metadata served (HTTP).
        "modern-deprecated@2026-07-28:deprecated_dynamic_client_registration",
    ];
    if !paginated {
        skips.extend([
            "modern-tools@2026-07-28:cache_scope_consistent_across_pages",
            "modern-prompts@2026-07-28:cache_scope_consistent_across_pages",
            "modern-resources@2026-07-28:cache_scope_consistent_across_pages",
            "modern-resource-templates@2026-07-28:cache_scope_consistent_across_pages",
        ]);
    }
    match transport {
        Transport::Stdio => skips.extend([
            "modern-http@2026-07-28:header_mismatch_rejected",
            "modern-http@2026-07-28:name_header_mismatch_rejected",
            "modern-http@2026-07-28:missing_method_header_rejected",
            "modern-http@2026-07-28:version_header_mismatch_rejected",
            "modern-http@2026-07-28:http_status_unsupported_version_400",
            "modern-http@2026-07-28:http_status_missing_meta_400",
            "modern-http@2026-07-28:http_status_method_not_found_404",
            "modern-http@2026-07-28:no_session_id",
            "modern-http@2026-07-28:invalid_origin_rejected",
            "modern-http@2026-07-28:foreign_host_rejected",
            "legacy-http@legacy:session_id_visible_ascii",
            "legacy-http@legacy:unsupported_version_header_rejected",
            "legacy-http@legacy:invalid_origin_rejected",
            "legacy-http@legacy:invalid_origin_refused",
            "legacy-http@legacy:foreign_host_rejected",
            "legacy-sessions@legacy:missing_session_id_rejected",
            "legacy-sessions@legacy:terminated_session_not_found",
            "legacy-http@legacy:sse_priming_event",
            "modern-deprecated@2026-07-28:deprecated_http_sse_transport",
            "legacy-deprecated@legacy:deprecated_http_sse_transport",
        ]),
        Transport::Http => skips.extend([
            "modern-stdio@2026-07-28:stdout_clean",
            "legacy-stdio@legacy:stdout_clean",
        ]),
    }
    skips.into_iter().map(str::to_string).collect()
}

/// Asserts a clean run in `eras`: exit 0, no setup error, every step passed or skipped,
/// no warning, and exactly `skips` skipped.
fn assert_clean(label: &str, pack: &PackRun, eras: &[&str], skips: &BTreeSet<String>) {
    assert_eq!(pack.run.code, 0, "{label}: exit code\n{:?}", pack.run);
    assert!(
        pack.setup_errors().is_empty(),
        "{label}: {:?}",
        pack.setup_errors()
    );
    let outcomes = pack.outcomes();
    let checks_in_eras = CHECKS
        .iter()
        .filter(|c| {
            eras.contains(&era_of_scenario(
                c.split_once(':').expect("scenario:step").0,
            ))
        })
        .count();
    assert_eq!(
        outcomes.len(),
        checks_in_eras,
        "{label}: every check runs once in its era"
    );
    let mut skipped = BTreeSet::new();
    for ((suite, step), (status, _)) in &outcomes {
        match status.as_str() {
            "passed" => {}
            "skipped" => {
                skipped.insert(format!("{suite}:{step}"));
            }
            other => panic!(
                "{label}: {suite}:{step} is {other}\n{}\n{:?}",
                pack.non_passing(),
                pack.run
            ),
        }
    }
    assert_eq!(&skipped, skips, "{label}: skipped steps");
    let summary = &pack.report["summary"];
    for key in ["failed", "errors", "warnings"] {
        if let Some(n) = summary.get(key) {
            assert_eq!(n.as_u64(), Some(0), "{label}: summary.{key} in {summary}");
        }
    }
}

#[test]
fn clean_server_passes_both_packs_in_both_eras_over_stdio_and_http() {
    let runs = run_all(vec![
        ("", Transport::Stdio, vec![]),
        ("", Transport::Http, vec![]),
        // Pagination (delivery only) lets the cacheScope-per-page checks run and pass;
        // `add-template` gives the templates list a second page.
        (
            "--page-size 1 --change add-template",
            Transport::Stdio,
            vec![],
        ),
        (
            "--page-size 1 --change add-template",
            Transport::Http,
            vec![],
        ),
        // Without the prompts capability, prompts/* are unknown methods: the
        // undeclared-prompts checks run and pass.
        ("--change remove-capability", Transport::Stdio, vec![]),
        ("--change remove-capability", Transport::Http, vec![]),
        // A modern-only server: the modern-only rules run and pass (modern era only).
        ("--change drop-legacy", Transport::Stdio, vec![]),
        ("--change drop-legacy", Transport::Http, vec![]),
    ]);
    for ((flags, transport), pack) in &runs {
        let label = format!("clean server `{flags}` over {transport:?}");
        let mut skips = expected_skips(*transport, flags.contains("--page-size"));
        if flags.contains("remove-capability") {
            skips.remove("modern-undeclared@2026-07-28:undeclared_prompts_not_served");
            // The prompts checks are skipped instead: the capability is not declared.
            skips.extend(
                [
                    "modern-prompts@2026-07-28:prompts_list_served",
                    "modern-prompts@2026-07-28:result_type_present",
                    "modern-prompts@2026-07-28:cache_hints_present",
                    "modern-prompts@2026-07-28:result_server_info",
                    "modern-prompts@2026-07-28:cache_scope_consistent_across_pages",
                    "modern-prompts@2026-07-28:unknown_prompt_invalid_params",
                    "modern-prompts@2026-07-28:missing_argument_invalid_params",
                    "legacy-prompts@legacy:prompts_list_served",
                    "legacy-prompts@legacy:unknown_prompt_invalid_params",
                    "legacy-prompts@legacy:missing_argument_invalid_params",
                    "modern-wire@2026-07-28:prompts_list_wire_valid",
                    "legacy-wire@legacy:prompts_list_wire_valid",
                ]
                .map(str::to_string),
            );
        }
        let eras = eras_for(flags);
        if flags.contains("drop-legacy") {
            skips.retain(|s| !s.starts_with("modern-only@"));
            if *transport == Transport::Http {
                skips.retain(|s| !s.starts_with("modern-only-http@"));
            }
        }
        skips.retain(|s| eras.contains(&era_of_suite(s.split_once(':').expect("suite:step").0)));
        assert_clean(&label, pack, eras, &skips);
    }
}

// ---------------------------------------------------------------------------
// 2. Every check under its seeded defect
// ---------------------------------------------------------------------------

#[test]
fn every_check_fails_at_its_level_under_its_seeded_defect() {
    // One run per (defect, transport), limited to the scenarios its cases look at.
    let mut jobs: BTreeMap<(&'static str, Transport), BTreeSet<String>> = BTreeMap::new();
    for (flags, era, on, check, _) in CASES.iter() {
        for transport in on.transports() {
            let job = jobs.entry((flags, *transport)).or_default();
            job.extend(scenarios_of(check, era));
            if let Some(after) = AFTER.get(&(*flags, *check)) {
                job.extend(after.iter().map(|s| s.to_string()));
            }
        }
    }
    // Exit 1 when a MUST check fails (or errors); warnings alone exit 0.
    let expected_exit: BTreeMap<(&str, Transport), i32> = jobs
        .keys()
        .map(|&(flags, transport)| {
            let fails = CASES.iter().any(|(f, _, on, _, status)| {
                *f == flags && on.transports().contains(&transport) && *status != Warning
            });
            ((flags, transport), i32::from(fails))
        })
        .collect();
    let runs = run_all(
        jobs.into_iter()
            .map(|((flags, transport), scenarios)| {
                (flags, transport, scenarios.into_iter().collect())
            })
            .collect(),
    );
    let mut problems = Vec::new();
    for (flags, era, on, check, status) in CASES.iter() {
        let (scenario, step) = check.split_once(':').expect("scenario:step");
        for transport in on.transports() {
            let pack = &runs[&(*flags, *transport)];
            let label = format!("`{flags}` over {transport:?}, {check}@{era}");
            if !pack.setup_errors().is_empty() {
                problems.push(format!("{label}: setup errors {:?}", pack.setup_errors()));
                continue;
            }
            let exit = expected_exit[&(*flags, *transport)];
            if pack.run.code != exit {
                problems.push(format!(
                    "{label}: exit code {} (expected {exit})",
                    pack.run.code
                ));
            }
            let outcomes = pack.outcomes();
            let matching: Vec<_> = outcomes
                .iter()
                .filter(|((suite, name), _)| {
                    name == step
                        && era_of_suite(suite) == *era
                        && (scenario == "*" || suite.starts_with(&format!("{scenario}@")))
                })
                .collect();
            if matching.is_empty() {
                problems.push(format!("{label}: no such check in the run"));
            }
            for ((suite, name), (got, level)) in matching {
                if got != status.as_str() {
                    problems.push(format!(
                        "{label}: {suite}:{name} is {got}, expected {}\n{}",
                        status.as_str(),
                        pack.non_passing()
                    ));
                }
                let expected_level = if *status == Warning { "should" } else { "must" };
                if level != expected_level {
                    problems.push(format!(
                        "{label}: {suite}:{name} has level {level}, expected {expected_level}"
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `(suite:step) → (status, skip or failure reason)` of a `--json` report.
fn statuses(pack: &PackRun) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    for suite in pack.report["suites"].as_array().expect("suites") {
        let id = suite["id"].as_str().expect("suite id");
        for step in suite["steps"].as_array().expect("steps") {
            let outcome = &step["outcome"];
            let reason = outcome["reason"]
                .as_str()
                .or_else(|| outcome["message"].as_str())
                .or_else(|| outcome["failures"][0]["message"].as_str())
                .unwrap_or("");
            out.insert(
                format!("{id}:{}", step["name"].as_str().expect("step name")),
                (
                    outcome["status"].as_str().expect("status").to_string(),
                    reason.to_string(),
                ),
            );
        }
    }
    out
}

/// Refusals that differ from the usual ones are still refusals: a foreign `Host`
/// answered with 421 Misdirected Request passes the DNS-rebinding check, and a
/// modern-only server refusing `initialize` with -32602 passes the MUST (an error, no
/// result) and only misses the SHOULD of -32601 / -32022.
#[test]
fn conformant_refusals_with_other_codes_pass() {
    let runs = run_all(vec![
        ("--defect host-421", Transport::Http, vec!["*-http".into()]),
        (
            INITIALIZE_32602,
            Transport::Stdio,
            vec!["modern-only".into()],
        ),
        (
            INITIALIZE_32602,
            Transport::Http,
            vec!["modern-only".into()],
        ),
    ]);
    let mut problems = Vec::new();
    for ((flags, transport), pack) in &runs {
        let outcomes = statuses(pack);
        let expected: &[(&str, &str)] = if flags.contains("host-421") {
            &[
                ("modern-http@2026-07-28:foreign_host_rejected", "passed"),
                ("legacy-http@legacy:foreign_host_rejected", "passed"),
            ]
        } else {
            &[
                (
                    "modern-only@2026-07-28:removed_initialize_rejected",
                    "passed",
                ),
                (
                    "modern-only@2026-07-28:removed_initialize_error_code",
                    "warning",
                ),
            ]
        };
        for (check, want) in expected {
            match outcomes.get(*check) {
                Some((got, _)) if got == want => {}
                other => problems.push(format!(
                    "`{flags}` over {transport:?}: {check} is {other:?}, expected {want}"
                )),
            }
        }
        if pack.run.code != 0 {
            problems.push(format!(
                "`{flags}` over {transport:?}: exit {}\n{}",
                pack.run.code,
                pack.non_passing()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Over stdio a server may answer a line that is not JSON after the request written behind
/// it (`parse-error=late`, the example server's reordering): the probe's wait after that
/// answer still sees the -32700, in both eras, and over HTTP the mode is the clean server.
/// (`parse-error=silent`, a server that never answers, is a warning: tests/defects/conformance.tsv.)
#[test]
fn a_parse_error_answered_out_of_order_still_counts() {
    let flags = "--defect parse-error=late";
    let runs = run_all(vec![
        (flags, Transport::Stdio, vec!["*-malformed".into()]),
        (flags, Transport::Http, vec!["*-malformed".into()]),
    ]);
    let mut problems = Vec::new();
    for ((_, transport), pack) in &runs {
        let outcomes = statuses(pack);
        for suite in ["legacy-malformed@legacy", "modern-malformed@2026-07-28"] {
            for step in [
                "parse_error_answered",
                "parse_error_id_null",
                "parse_error_survived",
            ] {
                let check = format!("{suite}:{step}");
                match outcomes.get(&check) {
                    Some((status, _)) if status == "passed" => {}
                    other => problems.push(format!("over {transport:?}: {check} is {other:?}")),
                }
            }
        }
        if pack.run.code != 0 {
            problems.push(format!(
                "over {transport:?}: exit {}\n{}",
                pack.run.code,
                pack.non_passing()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A server with empty lists (`--empty`: the capabilities declared, nothing listed) is
/// correct: the steps whose input would come from a list (the first resource to read)
/// are skipped with the reason, nothing errors, in both eras and over both transports.
#[test]
fn empty_lists_skip_the_steps_that_need_an_item() {
    let runs = run_all(vec![
        ("--empty", Transport::Stdio, vec![]),
        ("--empty", Transport::Http, vec![]),
    ]);
    for ((flags, transport), pack) in &runs {
        let label = format!("`{flags}` over {transport:?}");
        assert_eq!(
            pack.run.code,
            0,
            "{label}: {}\n{:?}",
            pack.non_passing(),
            pack.run
        );
        assert!(
            pack.setup_errors().is_empty(),
            "{label}: {:?}",
            pack.setup_errors()
        );
        let outcomes = statuses(pack);
        for (check, (status, reason)) in &outcomes {
            assert!(
                status == "passed" || status == "skipped",
                "{label}: {check} is {status}: {reason}"
            );
        }
        for step in ["read_result_type_present", "read_cache_hints_present"] {
            let (status, reason) = &outcomes[&format!("modern-resources@2026-07-28:{step}")];
            assert_eq!(status, "skipped", "{label}: {step}");
            assert!(
                reason.starts_with("no resource to read: resources/list is empty"),
                "{label}: {step}: {reason}"
            );
        }
    }
}

/// The table covers every check of both packs, in the check's own era (the utilities
/// checks need `--utilities` and `--set elicitation_tool=…`: tests/coverage.rs has their
/// table).
#[test]
fn every_check_has_a_seeded_defect() {
    let uncovered: Vec<&&str> = CHECKS
        .iter()
        .filter(|check| !check.contains("-utilities:"))
        .filter(|check| {
            let (scenario, step) = check.split_once(':').expect("scenario:step");
            let era = era_of_scenario(scenario);
            !CASES.iter().any(|(_, case_era, _, case, _)| {
                *case_era == era && (case == *check || *case == format!("*:{step}"))
            })
        })
        .collect();
    assert!(
        uncovered.is_empty(),
        "checks without a defect: {uncovered:?}"
    );
}

// ---------------------------------------------------------------------------
// 3. Listing
// ---------------------------------------------------------------------------

/// `scenario:step` lines of `mcpspec list`.
fn listed_checks(pack: &str) -> BTreeSet<String> {
    let out = run(&["list", pack]);
    assert_eq!(out.code, 0, "{out:?}");
    // Check lines are `  scenario:step` (pack lines, `pack ...` and their details, are not).
    out.stdout
        .lines()
        .filter_map(|line| line.strip_prefix("  "))
        .map(str::trim)
        .filter(|check| check.contains(':') && !check.contains(' '))
        .map(str::to_string)
        .collect()
}

#[test]
fn list_conformance_lists_every_check_id() {
    let listed = listed_checks("conformance");
    let expected: BTreeSet<String> = CHECKS.iter().map(|c| c.to_string()).collect();
    assert_eq!(listed, expected);
    let modern = listed_checks("conformance-2026-07-28");
    assert!(
        modern.iter().all(|c| c.starts_with("modern-")),
        "{modern:?}"
    );
    let legacy = listed_checks("conformance-2025-11-25");
    assert!(
        legacy.iter().all(|c| c.starts_with("legacy-")),
        "{legacy:?}"
    );
    assert_eq!(modern.len() + legacy.len(), CHECKS.len());
}

#[test]
fn every_pack_file_pins_its_era_and_schema() {
    for (dir, era) in [
        ("specs/conformance-2026-07-28", MODERN),
        ("specs/conformance-2025-11-25", LEGACY),
    ] {
        let dir = common::repo_root().join(dir);
        for entry in std::fs::read_dir(&dir).expect("pack folder") {
            let path = entry.expect("entry").path();
            if path.file_name().is_some_and(|n| n == "pack.yaml") {
                continue; // the manifest, not a scenario
            }
            let text = std::fs::read_to_string(&path).expect("pack file");
            assert!(
                text.starts_with(
                    "# yaml-language-server: $schema=../../schema/scenario.schema.json\n"
                ),
                "{} lacks the schema modeline",
                path.display()
            );
            assert!(
                text.contains(&format!("\neras: [{era}]\n")),
                "{} is not pinned to eras: [{era}]",
                path.display()
            );
        }
    }
}
