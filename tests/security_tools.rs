//! The tool-calling checks of the built-in `security` pack (`specs/security/tools.yaml`,
//! `handles.yaml`, `injection.yaml`, `stdio.yaml`) against the real example server:
//!
//! 1. the clean server passes them in both eras, over stdio and HTTP (with two users,
//!    `--auth-tokens`), with no warning; the skips are exactly the expected ones;
//! 2. every check fails at its level under a seeded `--defect` that breaks its rule, and
//!    the failure names what it found (tool and variant, pattern, rule id);
//! 3. the safety promise: a tool that is neither read-only nor in `safe_tools` is never
//!    called; the tokens never appear in any output;
//! 4. the injection rules are tunable (a user rule file, disabled rules).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{LazyLock, Mutex};
use std::thread;

use common::{HttpServer, Run, read_json, run, run_in, stdio_target, table};
use serde_json::Value;

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "legacy";
/// The two users of the HTTP server (`--auth-tokens`); long, so a grep is meaningful.
const ALICE: &str = "alice-tok-9f3c1b7e5a2d4c6e8f0a1b3c5d7e9f1a";
const BOB: &str = "bob-tok-2b4d6f8a0c1e3a5c7e9b1d3f5a7c9e0b";

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Transport {
    Stdio,
    Http,
}

/// One run of the security pack's tool checks: the exit code, the JSON report and the
/// JUnit file's text.
struct PackRun {
    run: Run,
    report: Value,
    junit: String,
}

impl PackRun {
    /// `scenario@era:step → (status, level)`.
    fn outcomes(&self) -> BTreeMap<String, (String, String)> {
        let mut out = BTreeMap::new();
        for suite in self.report["suites"].as_array().expect("suites") {
            for step in suite["steps"].as_array().expect("steps") {
                out.insert(
                    format!(
                        "{}:{}",
                        suite["id"].as_str().unwrap(),
                        step["name"].as_str().unwrap()
                    ),
                    (
                        step["outcome"]["status"].as_str().unwrap().to_string(),
                        step["level"].as_str().unwrap_or("must").to_string(),
                    ),
                );
            }
        }
        out
    }

    /// The failure messages of one step (`scenario@era:step`).
    fn messages(&self, id: &str) -> Vec<String> {
        let (suite_id, name) = id.rsplit_once(':').expect("scenario@era:step");
        let mut out = Vec::new();
        for suite in self.report["suites"].as_array().expect("suites") {
            if suite["id"] != suite_id {
                continue;
            }
            for step in suite["steps"].as_array().expect("steps") {
                if step["name"] == name {
                    for f in step["outcome"]["failures"].as_array().into_iter().flatten() {
                        out.push(format!("{} | {}", f["message"], f["actual"]));
                    }
                }
            }
        }
        out
    }

    /// Every transcript body of the run.
    fn transcripts(&self) -> Vec<String> {
        let mut out = Vec::new();
        for suite in self.report["suites"].as_array().expect("suites") {
            for step in suite["steps"].as_array().expect("steps") {
                for entry in step["transcript"].as_array().into_iter().flatten() {
                    out.push(format!(
                        "{} {}",
                        entry["direction"].as_str().unwrap_or(""),
                        entry["body"].as_str().unwrap_or("")
                    ));
                }
            }
        }
        out
    }
}

/// Runs the security pack's tool-check scenarios (`--filter`) against the example server
/// started with `flags`, in both eras. HTTP runs have two users and the parameters of
/// the binding check; `extra` adds mcpspec flags.
fn run_pack(flags: &str, transport: Transport, extra: &[&str]) -> PackRun {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("result.json");
    let junit = dir.path().join("junit.xml");
    let mut args: Vec<String> = ["run", "security", "--era", MODERN, "--era", LEGACY]
        .map(String::from)
        .to_vec();
    // A short timeout only where a hang is the point: the machine may be loaded.
    let timeout = if flags.contains("hang") { "2s" } else { "20s" };
    args.extend(["--timeout", timeout, "--jobs", "2"].map(String::from));
    args.extend(["--json".into(), json.display().to_string()]);
    args.extend(["--junit".into(), junit.display().to_string()]);
    for f in [
        "security-tools",
        "security-handles",
        "security-injection",
        "security-stdio",
    ] {
        args.extend(["--filter".into(), f.into()]);
    }
    args.extend(["--set", "safe_tools=create_note"].map(String::from));
    let mut words: Vec<String> = flags.split_whitespace().map(String::from).collect();
    let _server;
    match transport {
        Transport::Stdio => {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            args.extend(["--stdio".into(), stdio_target(&words)]);
        }
        Transport::Http => {
            words.extend(["--auth-tokens".into(), format!("alice={ALICE},bob={BOB}")]);
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let server = HttpServer::start(&words);
            args.extend(["--url".into(), server.url.clone()]);
            args.extend(["--bearer-env", "MCPSPEC_TEST_ALICE"].map(String::from));
            args.extend(["--set", "other_user_token=env:MCPSPEC_TEST_BOB"].map(String::from));
            args.extend(["--set", "handle_consumer=note://{handle}"].map(String::from));
            _server = server;
        }
    }
    // Last, so that they win over the defaults above.
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = run_in(
        &common::repo_root(),
        &args,
        &[("MCPSPEC_TEST_ALICE", ALICE), ("MCPSPEC_TEST_BOB", BOB)],
    );
    assert!(
        json.exists(),
        "no JSON report for `{flags}` over {transport:?}: {run:?}"
    );
    PackRun {
        run,
        report: read_json(&json),
        junit: std::fs::read_to_string(&junit).unwrap_or_default(),
    }
}

/// Runs every job, a few at a time.
fn run_all(jobs: Vec<(&'static str, Transport)>) -> BTreeMap<(&'static str, Transport), PackRun> {
    let queue = Mutex::new(jobs);
    let done = Mutex::new(BTreeMap::new());
    thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                loop {
                    let Some((flags, transport)) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let result = run_pack(flags, transport, &[]);
                    done.lock().unwrap().insert((flags, transport), result);
                }
            });
        }
    });
    done.into_inner().unwrap()
}

/// The tool checks, as `scenario:step` (`tests/defects/security-tools-checks.tsv`).
static CHECKS: LazyLock<Vec<&str>> = LazyLock::new(|| {
    table::read_as(
        "tests/defects/security-tools-checks.tsv",
        &["check"],
        |row| row.get("check"),
    )
});

#[test]
fn clean_server_passes_the_tool_checks_in_both_eras_over_stdio_and_http() {
    let runs = run_all(vec![("", Transport::Stdio), ("", Transport::Http)]);
    for ((_, transport), pack) in &runs {
        assert_eq!(pack.run.code, 0, "{transport:?}: {:?}", pack.run);
        let skipped_step = match transport {
            // Users are told apart by their tokens: HTTP only.
            Transport::Stdio => "security-handles@ERA:handles_bound_to_user",
            Transport::Http => "security-stdio@ERA:stdout_clean_under_load",
        };
        let expected_skips: BTreeSet<String> = [MODERN, LEGACY]
            .iter()
            .map(|era| skipped_step.replace("ERA", era))
            .collect();
        let outcomes = pack.outcomes();
        assert_eq!(
            outcomes.len(),
            CHECKS.len() * 2,
            "{transport:?}: {outcomes:?}"
        );
        let mut skipped = BTreeSet::new();
        for (id, (status, _)) in &outcomes {
            match status.as_str() {
                "passed" => {}
                "skipped" => {
                    skipped.insert(id.clone());
                }
                other => panic!("{transport:?}: {id} is {other}: {:?}", pack.messages(id)),
            }
        }
        assert_eq!(skipped, expected_skips, "{transport:?}");
    }
}

/// `(server flags, transports, check, status, text every failure message contains)`.
type Case = (
    &'static str,
    &'static [Transport],
    &'static str,
    &'static str,
    &'static str,
);

const BOTH: &[Transport] = &[Transport::Stdio, Transport::Http];
const STDIO: &[Transport] = &[Transport::Stdio];
const HTTP: &[Transport] = &[Transport::Http];

/// The rows of `tests/defects/security-tools.tsv`.
static CASES: LazyLock<Vec<Case>> = LazyLock::new(|| {
    let columns = &["flags", "on", "check", "status", "text"];
    table::read_as("tests/defects/security-tools.tsv", columns, |row| {
        (
            row.get("flags"),
            row.pick("on", &[("stdio", STDIO), ("http", HTTP), ("both", BOTH)]),
            row.get("check"),
            row.one_of("status", &["failed", "warning"]),
            row.get("text"),
        )
    })
});

#[test]
fn every_tool_check_fails_at_its_level_under_its_seeded_defect() {
    let jobs: Vec<(&str, Transport)> = CASES
        .iter()
        .flat_map(|(flags, on, ..)| on.iter().map(move |t| (*flags, *t)))
        .collect();
    let runs = run_all(jobs);
    let mut problems = Vec::new();
    for (flags, on, check, status, text) in CASES.iter() {
        let (scenario, step) = check.split_once(':').unwrap();
        for transport in *on {
            let pack = &runs[&(*flags, *transport)];
            let must = *status == "failed";
            if pack.run.code != i32::from(must) {
                let not_passing: Vec<String> = pack
                    .outcomes()
                    .into_iter()
                    .filter(|(_, (s, _))| s != "passed" && s != "skipped")
                    .map(|(id, (s, _))| format!("{id} {s}: {:?}", pack.messages(&id)))
                    .collect();
                problems.push(format!(
                    "{flags} over {transport:?}: exit {}: {not_passing:?}",
                    pack.run.code
                ));
            }
            for era in [MODERN, LEGACY] {
                let id = format!("{scenario}@{era}:{step}");
                let label = format!("{flags} over {transport:?}, {id}");
                let Some((got, level)) = pack.outcomes().get(&id).cloned() else {
                    problems.push(format!("{label}: not in the run"));
                    continue;
                };
                if got != *status {
                    problems.push(format!(
                        "{label}: {got}, expected {status}: {:?}",
                        pack.messages(&id)
                    ));
                    continue;
                }
                if level != if must { "must" } else { "should" } {
                    problems.push(format!("{label}: level {level}"));
                }
                let messages = pack.messages(&id);
                if messages.is_empty() || !messages.iter().any(|m| m.contains(text)) {
                    problems.push(format!(
                        "{label}: no failure mentions {text:?}: {messages:?}"
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `tools/call` requests the run sent, by tool name.
fn called_tools(pack: &PackRun) -> BTreeSet<String> {
    pack.transcripts()
        .iter()
        .filter_map(|t| t.strip_prefix("sent "))
        .filter_map(|body| serde_json::from_str::<Value>(body).ok())
        .filter(|m| m["method"] == "tools/call")
        .filter_map(|m| m["params"]["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn tools_without_read_only_hint_are_called_only_when_named_in_safe_tools() {
    // `create_note` has side effects (readOnlyHint: false): without safe_tools, no check
    // calls it — not even with invalid arguments.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let target = stdio_target(&[]);
    let without = run(&[
        "run",
        "security",
        "conformance",
        "--era",
        MODERN,
        "--stdio",
        &target,
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(without.code, 0, "{without:?}");
    let pack = PackRun {
        run: without,
        report: read_json(&json),
        junit: String::new(),
    };
    let called = called_tools(&pack);
    assert!(called.contains("echo"), "{called:?}");
    assert!(!called.contains("create_note"), "{called:?}");
    // Named in safe_tools, it is called (so the scan above can see it).
    let with = run_pack("", Transport::Stdio, &[]);
    assert!(called_tools(&with).contains("create_note"));
}

#[test]
fn tokens_never_appear_in_any_output() {
    let pack = run_pack("--defect unbound-handles", Transport::Http, &[]);
    assert_eq!(pack.run.code, 1, "{:?}", pack.run);
    let everything = format!("{}\n{}\n{}", pack.run.all_output(), pack.report, pack.junit);
    for secret in [ALICE, BOB] {
        assert!(
            !everything.contains(secret),
            "a token leaked into the output"
        );
    }
}

#[test]
fn injection_rules_are_tunable() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.yaml");
    std::fs::write(
        &rules,
        "rules:\n  - id: fake-data\n    pattern: \"(?i)fake data\"\n    description: says its data is fake\n",
    )
    .unwrap();
    let set_rules = format!("injection_rules={}", rules.display());
    let added = run_pack("", Transport::Stdio, &["--set", &set_rules]);
    let id = format!("security-injection@{MODERN}:descriptions_free_of_injection");
    assert_eq!(pack_status(&added, &id), "warning");
    let messages = added.messages(&id);
    assert!(
        messages
            .iter()
            .any(|m| m.contains("tool \\\"get_weather\\\" /description")
                && m.contains("[fake-data]")),
        "{messages:?}"
    );
    // A disabled rule no longer fires on its defect.
    let disabled = run_pack(
        "--defect injected-description=html-comment",
        Transport::Stdio,
        &["--set", "injection_disable=hidden-html-comment"],
    );
    assert_eq!(pack_status(&disabled, &id), "passed");
    // A broken rule file is an error of the step, with the reason.
    std::fs::write(&rules, "rules:\n  - id: broken\n    pattern: \"(\"\n").unwrap();
    let broken = run_pack("", Transport::Stdio, &["--set", &set_rules]);
    assert_eq!(pack_status(&broken, &id), "error");
    assert!(
        broken.run.stdout.contains("rule `broken`: invalid pattern"),
        "{:?}",
        broken.run
    );
}

fn pack_status(pack: &PackRun, id: &str) -> String {
    pack.outcomes()
        .get(id)
        .map(|(s, _)| s.clone())
        .unwrap_or_else(|| panic!("{id} not in {:?}", pack.outcomes().keys()))
}

#[test]
fn list_security_shows_the_tool_check_ids() {
    let out = run(&["list", "security"]);
    assert_eq!(out.code, 0, "{out:?}");
    for check in CHECKS.iter() {
        assert!(
            out.stdout.contains(&format!("  {check}\n")),
            "{check} in {}",
            out.stdout
        );
    }
}

/// A read-only tool that sleeps (`--defect slow-read-tool=60`: `slow` takes a minute) costs
/// the pack about one per-call budget per era, not a minute per check: each call is sent
/// once per run and era and its answer shared, and a tool slower than the budget is skipped
/// with the reason (noted in the transcript of every check that wanted it).
#[test]
fn a_slow_tool_is_skipped_within_the_call_budget() {
    let started = std::time::Instant::now();
    let pack = run_pack(
        "--defect slow-read-tool=60",
        Transport::Stdio,
        &["--set", "tool_call_budget=1"],
    );
    let took = started.elapsed();
    assert_eq!(pack.run.code, 0, "{:?}", pack.run);
    assert!(
        took < std::time::Duration::from_secs(40),
        "the pack took {took:?}"
    );
    for check in [
        "security-tools:input_validation_fuzz",
        "security-handles:handles_not_guessable",
        "security-injection:results_free_of_injection",
    ] {
        let (scenario, step) = check.split_once(':').unwrap();
        for era in [MODERN, LEGACY] {
            let id = format!("{scenario}@{era}:{step}");
            let notes: Vec<String> = pack.report["suites"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["id"] == format!("{scenario}@{era}"))
                .flat_map(|s| s["steps"].as_array().unwrap().clone())
                .filter(|s| s["name"] == step)
                .flat_map(|s| s["transcript"].as_array().cloned().unwrap_or_default())
                .filter(|e| e["direction"] == "note")
                .map(|e| e["body"].as_str().unwrap_or("").to_string())
                .collect();
            assert!(
                notes.iter().any(|n| n.contains(
                    "tool \"slow\" skipped: no answer to its example arguments within the 1s per-call budget"
                )),
                "{id}: {notes:?}"
            );
        }
    }
    // The example call of `slow` was sent once per era (and the first fuzz variant).
    let sent = pack
        .transcripts()
        .iter()
        .filter_map(|t| t.strip_prefix("sent "))
        .filter_map(|body| serde_json::from_str::<Value>(body).ok())
        .filter(|m| m["method"] == "tools/call" && m["params"]["name"] == "slow")
        .count();
    assert!(sent <= 4, "slow was called {sent} times");
}

/// Without `handle_consumer`, the binding check looks for a consumer by the handle's key; the
/// example server's `create_note` mints `id`, too generic to match, so the skip reason says
/// exactly what to set (the check still found the minted handle, not an echoed argument).
#[test]
fn binding_without_a_consumer_says_exactly_what_to_set() {
    let pack = run_pack("", Transport::Http, &["--set", "handle_consumer="]);
    assert_eq!(pack.run.code, 0, "{:?}", pack.run);
    for era in [MODERN, LEGACY] {
        let suite_id = format!("security-handles@{era}");
        let outcome = pack.report["suites"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["id"] == suite_id)
            .flat_map(|s| s["steps"].as_array().unwrap().clone())
            .find(|s| s["name"] == "handles_bound_to_user")
            .map(|s| s["outcome"].clone())
            .unwrap_or_default();
        let reason = outcome["reason"].as_str().unwrap_or("").to_string();
        assert!(
            reason.contains(r#"tool "create_note" returns a handle at $.structuredContent.id"#)
                && reason.contains("a bare `id` is too generic")
                && reason.contains("--set handle_consumer=tool:NAME.id"),
            "{era}: {outcome}"
        );
    }
}

/// Point 9 end to end: with `--orders`, `create_order` mints `order_ref` and the read-only
/// `get_order` takes `order_ref`. Without `handle_consumer`, the binding check infers
/// `get_order` by the key's name (a transcript note says so) and passes on the bound
/// server; the same inference catches `unbound-handles`.
#[test]
fn binding_infers_the_consumer_by_the_handle_key() {
    for (flags, want) in [
        ("--orders", "passed"),
        ("--orders --defect unbound-handles", "failed"),
    ] {
        let pack = run_pack(
            flags,
            Transport::Http,
            &[
                "--set",
                "safe_tools=create_order",
                "--set",
                "handle_consumer=",
            ],
        );
        for era in [MODERN, LEGACY] {
            let suite_id = format!("security-handles@{era}");
            let step = pack.report["suites"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["id"] == suite_id)
                .flat_map(|s| s["steps"].as_array().unwrap().clone())
                .find(|s| s["name"] == "handles_bound_to_user")
                .unwrap_or_default();
            assert_eq!(step["outcome"]["status"], want, "{flags} {era}: {step:#}");
            let inferred = step
                .to_string()
                .contains(r#"handle_consumer inferred: tool \"get_order\" (argument order_ref)"#);
            assert!(inferred, "{flags} {era}: no inference note: {step:#}");
        }
    }
}

// A check's `count: 0` is a load error: tests/cases/check-count-zero/.
