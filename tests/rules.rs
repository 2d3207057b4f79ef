//! The rule table (src/protocol/rules.tsv): every built-in check names its rule, with a level
//! for every protocol revision, and the revision a connection **negotiated** decides whether
//! the check runs and at which level. The cases seen on third-party servers, each against a
//! server that shows it and one that does not:
//!
//! - resource not found: a SHOULD up to 2025-11-25 (a warning), a MUST in 2026-07-28;
//! - the `MCP-Protocol-Version` header exists from 2025-06-18: not judged on 2025-03-26;
//! - the visible-ASCII rule of `Mcp-Session-Id` applies to an assigned id (a stateless
//!   server assigns none);
//! - "tools/list stable across connections" compares the set, not description text;
//! - a server pinned to each revision runs the packs clean.
//!
//! Also: wrong-type probes no lax validator coerces (Pydantic, zod), a 403 for a Host that is
//! no authentication failure. The Python SDK server comes from tests/interop/python (installed
//! by `scripts/test`); a missing installation fails with the step to run.
// Unix only: Python servers under .venv/bin, a slow start through `sh -c`.
#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use common::{HttpServer, read_json, repo_root, run, stdio_target};
use mcpspec::protocol::rules::{self, REVISIONS};
use serde_json::Value;

/// Steps of the built-in packs that prepare other checks and judge nothing themselves.
const SETUP_STEPS: &[&str] = &["completion_prompt_listed", "subscribe_resource_listed"];

/// Rows no built-in step names: a check kind kept for users' scenarios whose rule is none.
const ROWS_WITHOUT_STEP: &[&str] = &["cross_era_capabilities_match"];

/// Every step of the built-in packs, from `mcpspec list … --format json`.
fn builtin_steps() -> Vec<Value> {
    let r = run(&[
        "list",
        "conformance",
        "cross-era",
        "security",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let listed: Value = serde_json::from_str(&r.stdout).expect("JSON");
    let mut steps = Vec::new();
    collect_steps(&listed, &mut steps);
    assert!(steps.len() > 100, "too few steps listed: {}", steps.len());
    steps
}

fn collect_steps(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(o) => {
            if let Some(Value::Array(steps)) = o.get("steps") {
                out.extend(steps.iter().cloned());
            }
            o.values().for_each(|x| collect_steps(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| collect_steps(x, out)),
        _ => {}
    }
}

#[test]
fn every_builtin_check_has_a_rule_with_a_level_for_every_revision() {
    let mut problems = Vec::new();
    let mut used = std::collections::BTreeSet::new();
    for step in builtin_steps() {
        let id = step["id"].as_str().unwrap_or("?");
        if SETUP_STEPS.contains(&step["name"].as_str().unwrap_or("")) {
            continue;
        }
        let Some(rule) = step["rule"].as_str() else {
            problems.push(format!("{id}: no `rule`"));
            continue;
        };
        used.insert(rule.to_string());
        for revision in REVISIONS {
            match step["levels"][revision].as_str() {
                Some("MUST" | "SHOULD" | "-") => {}
                other => problems.push(format!("{id}: level {other:?} for {revision}")),
            }
        }
    }
    for row in rules::all() {
        if !used.contains(row.id) && !ROWS_WITHOUT_STEP.contains(&row.id) {
            problems.push(format!("row `{}` is named by no built-in step", row.id));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Every `check:` kind the DSL knows is used by a built-in step (which has its rule, above)
/// or has a row of its own name.
#[test]
fn every_check_kind_states_its_rule() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("schema/scenario.schema.json")).unwrap(),
    )
    .unwrap();
    let mut kinds = Vec::new();
    find_kinds(&schema, &mut kinds);
    assert!(kinds.len() > 20, "check kinds in the schema: {kinds:?}");
    let packs: String = walk(&repo_root().join("specs"))
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let missing: Vec<&String> = kinds
        .iter()
        .filter(|k| !packs.contains(&format!("kind: {k}")) && rules::find(k).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "check kinds without a rule: {missing:?}"
    );
}

/// The kinds of `CheckKind` in the schema (the `oneOf` whose values include `stdout_clean`).
fn find_kinds(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            // Each kind is a `{"const": NAME, "description": …}` of one `oneOf`.
            if let Some(Value::Array(e)) = o.get("oneOf")
                && e.iter().any(|x| x["const"] == "stdout_clean")
            {
                out.extend(
                    e.iter()
                        .filter_map(|x| x["const"].as_str())
                        .map(str::to_string),
                );
            }
            o.values().for_each(|x| find_kinds(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| find_kinds(x, out)),
        _ => {}
    }
    out.sort();
    out.dedup();
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "yaml") {
            out.push(p);
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Runs
// ---------------------------------------------------------------------------

/// `(suite id, step) → (status, level, skip reason or first failure message)`.
type Outcomes = BTreeMap<(String, String), (String, String, String)>;

fn outcomes(report: &Value) -> Outcomes {
    let mut out = BTreeMap::new();
    for suite in report["suites"].as_array().expect("suites") {
        let id = suite["id"].as_str().unwrap().to_string();
        for step in suite["steps"].as_array().expect("steps") {
            let o = &step["outcome"];
            let why = o["reason"]
                .as_str()
                .or_else(|| o["failures"][0]["message"].as_str())
                .unwrap_or("")
                .to_string();
            out.insert(
                (id.clone(), step["name"].as_str().unwrap().to_string()),
                (
                    o["status"].as_str().unwrap().to_string(),
                    step["level"].as_str().unwrap_or("must").to_string(),
                    why,
                ),
            );
        }
    }
    out
}

/// `mcpspec run PACK --era ERA` against `target` (`--stdio CMD` or `--url URL`) with extra
/// arguments: the exit code, the outcomes and the console output.
fn run_pack(pack: &str, target: [&str; 2], era: &str, extra: &[&str]) -> (i32, Outcomes, String) {
    let (code, report, out) = run_report(pack, target, era, extra);
    (code, outcomes(&report), out)
}

/// [`run_pack`] with the whole `--json` report.
fn run_report(pack: &str, target: [&str; 2], era: &str, extra: &[&str]) -> (i32, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut args = vec![
        "run",
        pack,
        target[0],
        target[1],
        "--era",
        era,
        "--timeout",
        "20s",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend(extra);
    let r = run(&args);
    assert!(json.exists(), "no report: {r:?}");
    (r.code, read_json(&json), r.all_output())
}

fn status<'a>(o: &'a Outcomes, suite: &str, step: &str) -> &'a (String, String, String) {
    o.get(&(suite.to_string(), step.to_string()))
        .unwrap_or_else(|| panic!("{suite}:{step} is not in the run: {:?}", o.keys()))
}

fn non_passing(o: &Outcomes) -> Vec<String> {
    o.iter()
        .filter(|(_, (s, ..))| s != "passed" && s != "skipped")
        .map(|((suite, step), (s, _, why))| format!("{suite}:{step} {s}: {why}"))
        .collect()
}

/// The clean example server, limited to each revision (`--max-revision`) and asked for it,
/// negotiates it and runs the conformance packs clean: what a revision does not have is
/// skipped with the reason, nothing fails.
#[test]
fn a_server_pinned_to_each_revision_runs_clean() {
    for revision in REVISIONS {
        let limit: Vec<&str> = if revision < "2026" {
            vec!["--max-revision", revision]
        } else {
            Vec::new()
        };
        let target = stdio_target(&limit);
        let (code, o, out) = run_pack("conformance", ["--stdio", &target], revision, &[]);
        assert_eq!(code, 0, "{revision}: {:#?}\n{out}", non_passing(&o));
        assert!(
            non_passing(&o).is_empty(),
            "{revision}: {:#?}",
            non_passing(&o)
        );
        let ran = o.values().filter(|(s, ..)| s == "passed").count();
        assert!(ran > 20, "{revision}: only {ran} checks passed");
    }
    // What 2024-11-05 does not have is skipped, and says why.
    let target = stdio_target(&["--max-revision", "2024-11-05"]);
    let filter = ["--filter", "legacy-tools"];
    let (_, o, _) = run_pack("conformance", ["--stdio", &target], "2024-11-05", &filter);
    let (s, _, why) = status(&o, "legacy-tools@2024-11-05", "tool_names_format");
    assert_eq!(s, "skipped");
    assert!(
        why.contains("not a rule in 2024-11-05, the negotiated revision")
            && why.contains("SEP-986"),
        "{why}"
    );
}

/// -32002 or empty contents for a resource that does not exist: the legacy rule is a SHOULD
/// (a warning), the 2026-07-28 rule a MUST. The legacy server is limited to the revision
/// (`--max-revision`), so it counter-offers it to `--era legacy`.
#[test]
fn resource_not_found_is_a_should_until_2026_and_a_must_then() {
    for (revision, suite, expected, level) in [
        ("2024-11-05", "legacy-resources@legacy", "warning", "should"),
        ("2025-11-25", "legacy-resources@legacy", "warning", "should"),
        (
            "2026-07-28",
            "modern-resources@2026-07-28",
            "failed",
            "must",
        ),
    ] {
        let mut flags = vec!["--defect", "resource-not-found-empty"];
        let era = if revision < "2026" {
            flags.extend(["--max-revision", revision]);
            "legacy"
        } else {
            revision
        };
        let target = stdio_target(&flags);
        let filter = ["--filter", "*-resources"];
        let (_, o, _) = run_pack("conformance", ["--stdio", &target], era, &filter);
        let (s, l, why) = status(&o, suite, "resource_not_found_error");
        assert_eq!(
            (s.as_str(), l.as_str()),
            (expected, level),
            "{revision}: {why}"
        );
    }
}

/// A server that does not check `MCP-Protocol-Version`: a failure where the header exists
/// (2025-06-18 on), no check where it does not (a 2025-03-26 server's counter-offer to
/// `--era legacy`).
#[test]
fn the_protocol_version_header_is_judged_only_where_it_exists() {
    let filter = ["--filter", "legacy-http"];
    for (revision, expected) in [("2025-03-26", "skipped"), ("2025-06-18", "failed")] {
        let server = HttpServer::start(&[
            "--defect",
            "lenient-header=version",
            "--max-revision",
            revision,
        ]);
        let (_, o, _) = run_pack("conformance", ["--url", &server.url], "legacy", &filter);
        let (s, _, why) = status(
            &o,
            "legacy-http@legacy",
            "unsupported_version_header_rejected",
        );
        assert_eq!(s, expected, "{revision}: {why}");
        if expected == "skipped" {
            assert!(
                why.contains("not a rule in 2025-03-26, the negotiated revision"),
                "{why}"
            );
        }
    }
}

/// Every revision says to validate the `Origin`; only 2025-11-25 on names the status (403).
/// A server that refuses a foreign Origin with 400 is right where it negotiated 2025-06-18
/// and wrong where it negotiated 2025-11-25; one that serves it is wrong in both.
#[test]
fn the_origin_status_is_judged_only_where_the_revision_names_it() {
    let filter = ["--filter", "legacy-http"];
    for (defect, revision, rejected, refused) in [
        ("origin-refused-400", "2025-06-18", "skipped", "passed"),
        ("origin-refused-400", "2025-11-25", "failed", "passed"),
        ("allow-any-origin", "2025-06-18", "skipped", "failed"),
        ("allow-any-origin", "2025-11-25", "failed", "failed"),
    ] {
        let server = HttpServer::start(&["--defect", defect, "--max-revision", revision]);
        let (_, o, _) = run_pack("conformance", ["--url", &server.url], "legacy", &filter);
        let suite = "legacy-http@legacy";
        let (s, _, why) = status(&o, suite, "invalid_origin_rejected");
        assert_eq!(s, rejected, "{defect} at {revision}: {why}");
        if rejected == "skipped" {
            assert!(
                why.contains("not a rule in 2025-06-18, the negotiated revision"),
                "{why}"
            );
        }
        let (s, _, why) = status(&o, suite, "invalid_origin_refused");
        assert_eq!(s, refused, "{defect} at {revision}: {why}");
    }
}

/// A description that differs on every start is no change of the set of tools; a tool that
/// differs is, and the failure names it.
#[test]
fn tools_stable_across_connections_compares_the_set() {
    let filter = ["--filter", "modern-tools"];
    let quirk = stdio_target(&["--defect", "description-varies-by-connection"]);
    let (_, o, _) = run_pack("conformance", ["--stdio", &quirk], "2026-07-28", &filter);
    let (s, _, why) = status(
        &o,
        "modern-tools@2026-07-28",
        "tools_list_stable_across_connections",
    );
    assert_eq!(s, "passed", "{why}");
    let varies = stdio_target(&["--defect", "tools-vary-by-connection"]);
    let (_, o, _) = run_pack("conformance", ["--stdio", &varies], "2026-07-28", &filter);
    let (s, _, why) = status(
        &o,
        "modern-tools@2026-07-28",
        "tools_list_stable_across_connections",
    );
    assert_eq!(s, "failed");
    assert!(
        why.contains("only on the first") && why.contains("connection_"),
        "{why}"
    );
}

/// A read-only tool that says it reaches the open world (`openWorldHint: true`) is not called
/// by the conformance checks unless named in `safe_tools`; the transcript says so.
#[test]
fn open_world_tools_are_called_only_when_named() {
    let target = stdio_target(&["--change", "change-annotations"]);
    let filter = ["--filter", "legacy-tool-calls"];
    let (code, report, out) = run_report("conformance", ["--stdio", &target], "legacy", &filter);
    assert_eq!(code, 0, "{out}");
    let text = report.to_string();
    assert!(
        text.contains(r#"\"get_weather\" (openWorldHint: it may reach outside this machine)"#),
        "{text}"
    );
    let mut named = filter.to_vec();
    named.extend(["--set", "safe_tools=get_weather"]);
    let (_, report, _) = run_report("conformance", ["--stdio", &target], "legacy", &named);
    assert!(
        !report
            .to_string()
            .contains(r#"\"get_weather\" (openWorldHint"#)
    );
}

/// Noise on the stdout of a fresh process that then answers is noted as noise: the step that
/// probed version negotiation there judges the answer (stdout_clean judges the noise).
#[test]
fn stdout_noise_on_a_fresh_connection_is_noise() {
    let target = stdio_target(&["--defect", "garbage-stdout"]);
    let filter = ["--filter", "legacy-handshake"];
    let (_, report, _) = run_report("conformance", ["--stdio", &target], "legacy", &filter);
    let o = outcomes(&report);
    let (s, _, why) = status(
        &o,
        "legacy-handshake@legacy",
        "version_negotiation_counter_offer",
    );
    assert_eq!(s, "passed", "{why}");
    assert!(
        report
            .to_string()
            .contains("stdout noise on the fresh connection"),
        "{report}"
    );
}

// ---------------------------------------------------------------------------
// The Python SDK server (tests/interop/python)
// ---------------------------------------------------------------------------

fn venv_python() -> (PathBuf, PathBuf) {
    let dir = repo_root().join("tests/interop/python");
    let python = dir.join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `scripts/test` once to install the pinned Python SDK",
        python.display()
    );
    (python, dir.join("server.py"))
}

/// The Python SDK server over HTTP on a free port, stopped on drop.
struct PythonHttp {
    child: Child,
    url: String,
}

impl PythonHttp {
    fn start(extra: &[&str]) -> PythonHttp {
        let (python, server) = venv_python();
        let mut cmd = Command::new(python);
        cmd.arg(server).args(["--http", "0"]).args(extra);
        let common::Listening { child, url } = common::Listening::start(cmd);
        PythonHttp { child, url }
    }
}

impl Drop for PythonHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A stateless server assigns no session id (a MAY): the visible-ASCII rule has nothing to
/// judge. A stateful one is judged (and passes; the example server's `session-id-with-space`
/// fails it: tests/defects/conformance.tsv).
#[test]
fn session_id_rule_applies_to_an_assigned_id_only() {
    let filter = ["--filter", "legacy-http"];
    let stateless = PythonHttp::start(&["--stateless"]);
    let (_, o, _) = run_pack("conformance", ["--url", &stateless.url], "legacy", &filter);
    let (s, _, why) = status(&o, "legacy-http@legacy", "session_id_visible_ascii");
    assert_eq!(s, "skipped", "{why}");
    assert!(why.contains("Mcp-Session-Id"), "{why}");
    let stateful = PythonHttp::start(&[]);
    let (_, o, _) = run_pack("conformance", ["--url", &stateful.url], "legacy", &filter);
    let (s, _, why) = status(&o, "legacy-http@legacy", "session_id_visible_ascii");
    assert_eq!(s, "passed", "{why}");
}

/// A 403 for a foreign Origin (the Python SDK's DNS rebinding protection) is not reported as
/// a request for credentials.
#[test]
fn a_refused_origin_is_no_authentication_failure() {
    let server = PythonHttp::start(&[]);
    let r = run(&[
        "run",
        "conformance",
        "--url",
        &server.url,
        "--era",
        "legacy",
        "--filter",
        "legacy-tools",
        "--header",
        "Origin: http://mcpspec-rules.invalid",
    ]);
    let out = r.all_output();
    assert!(
        out.contains("refused the request's Host or Origin (HTTP 403"),
        "{out}"
    );
    assert!(!out.contains("pass a token"), "{out}");
    assert_ne!(r.code, 3, "exit 3 means authentication: {out}");
}

/// The wrong-type values of the input fuzz are wrong under Pydantic's default (lax) mode and
/// zod: `"yes"` for a boolean, which Pydantic takes as `true`, is not one of them.
#[test]
fn wrong_type_probes_survive_lax_validators() {
    use mcpspec::run::argsgen::wrong_type_value;
    let probes: Vec<(&str, Value)> = ["string", "integer", "number", "boolean", "array", "object"]
        .into_iter()
        .map(|t| (t, wrong_type_value(t).expect("a probe").0))
        .collect();
    let (python, _) = venv_python();
    let cases = serde_json::to_string(&probes).unwrap();
    let script = r#"
import json, sys
from pydantic import TypeAdapter, ValidationError
types = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict}
accepted = []
for t, value in json.loads(sys.argv[1]):
    try:
        TypeAdapter(types[t]).validate_python(value)
        accepted.append(f"{t}: {value!r}")
    except ValidationError:
        pass
try:
    TypeAdapter(bool).validate_python("yes")
    control = "accepted"
except ValidationError:
    control = "rejected"
print(json.dumps({"accepted": accepted, "yes_for_bool": control}))
"#;
    let out = Command::new(&python)
        .args(["-c", script, &cases])
        .output()
        .expect("python runs");
    let said: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(
        said["accepted"],
        serde_json::json!([]),
        "Pydantic (lax) coerces: {said}"
    );
    assert_eq!(
        said["yes_for_bool"], "accepted",
        "the control: Pydantic takes \"yes\" as true"
    );

    let zod = repo_root().join("tests/interop/memory-2026.8.31/node_modules/zod");
    assert!(
        zod.exists(),
        "{} is missing: run `scripts/test` once to install the pinned npm servers",
        zod.display()
    );
    let script = r#"
const { z } = require(process.argv[1]);
const types = { string: z.string(), integer: z.number().int(), number: z.number(), boolean: z.boolean(), array: z.array(z.any()), object: z.object({}) };
const accepted = JSON.parse(process.argv[2]).filter(([t, v]) => types[t].safeParse(v).success);
console.log(JSON.stringify(accepted));
"#;
    let out = Command::new("node")
        .args(["-e", script, zod.to_str().unwrap(), &cases])
        .output()
        .expect("node runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "[]",
        "zod accepts: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `auto` over stdio: a server slow to start (here 6 s, past the 5 s an HTTP probe waits) is
/// not taken for a legacy one, and the console says which era auto chose and why.
#[test]
fn auto_waits_out_a_slow_start_and_says_what_it_chose() {
    let (_dir, path) = common::scenario_file(
        "list.yaml",
        "scenario: list\nsteps:\n  - name: tools\n    request: { method: tools/list }\n",
    );
    let server = common::example_server().display().to_string();
    let slow = format!("sh -c 'sleep 6; exec {server}'");
    let r = run(&[
        "run",
        path.to_str().unwrap(),
        "--stdio",
        &slow,
        "--era",
        "auto",
        "--timeout",
        "60s",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains("era: auto: server/discover lists 2026-07-28; chose modern"),
        "{}",
        r.stdout
    );
}

/// The `snapshot` line names the server it was taken of: `name version`.
#[test]
fn snapshot_names_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("snap");
    let r = run(&[
        "snapshot",
        "--stdio",
        &stdio_target(&[]),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("snapshot of mcpspec-example-server 1.0.0 ("),
        "{}",
        r.stderr
    );
}

/// Declaring `resources` does not oblige a server to serve `resources/templates/list`: a
/// -32601 there skips the template checks with the reason (`resources/list`, which the
/// capability does oblige, still fails).
#[test]
fn an_unserved_templates_list_is_no_failure() {
    let target = stdio_target(&["--defect", "unserved-capability=resources"]);
    let filter = ["--filter", "modern-resource*"];
    let (_, o, _) = run_pack("conformance", ["--stdio", &target], "2026-07-28", &filter);
    for ((suite, step), (s, _, why)) in &o {
        if suite.starts_with("modern-resource-templates") {
            assert_eq!(s, "skipped", "{suite}:{step}: {why}");
            assert!(
                why.contains("does not serve resources/templates/list (-32601"),
                "{why}"
            );
        }
    }
    let (s, ..) = status(&o, "modern-resources@2026-07-28", "resources_list_served");
    assert_eq!(s, "failed");
}

/// `cross_era_lists_match` compares what clients rely on: a description worded differently
/// per process is no difference, a tool only one era's connection lists is.
#[test]
fn cross_era_lists_compare_what_clients_rely_on() {
    let quirk = stdio_target(&["--defect", "description-varies-by-connection"]);
    let (code, o, out) = run_pack("cross-era", ["--stdio", &quirk], "2026-07-28", &[]);
    let (s, _, why) = status(&o, "cross-era@2026-07-28", "cross_era_lists_match");
    assert_eq!(s, "passed", "{why}\n{out}");
    assert_eq!(code, 0, "{out}");
    let varies = stdio_target(&["--defect", "tools-vary-by-connection"]);
    let (_, o, _) = run_pack("cross-era", ["--stdio", &varies], "2026-07-28", &[]);
    let (s, _, why) = status(&o, "cross-era@2026-07-28", "cross_era_lists_match");
    assert_eq!(s, "failed", "{why}");
}

/// A check without a rule is no check: `cross_era_capabilities_match` names a row that is a
/// rule in no revision, so it is skipped with the spec's reason (tests/rules/capabilities.yaml).
#[test]
fn no_rule_no_check() {
    let scenario = repo_root().join("tests/rules/capabilities.yaml");
    let (code, o, out) = run_pack(
        scenario.to_str().unwrap(),
        ["--stdio", &stdio_target(&[])],
        "2026-07-28",
        &[],
    );
    assert_eq!(code, 0, "{out}");
    let (s, _, why) = status(
        &o,
        "capabilities@2026-07-28",
        "cross_era_capabilities_match",
    );
    assert_eq!(s, "skipped");
    assert!(
        why.contains("is not a rule in 2026-07-28") && why.contains("no rule, no check"),
        "{why}"
    );
}
