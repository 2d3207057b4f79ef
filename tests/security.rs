//! Proof of the built-in `security` pack (part 1: HTTP auth, local exposure, rate
//! limiting): the sound example server (an HS256 JWT-protected resource) passes every
//! check with no warning; each `--defect` weakness fails (or warns on) its check; checks
//! whose parameters are unset, or that do not apply, are skipped with the reason.

mod common;

use std::collections::BTreeMap;
use std::sync::LazyLock;

use common::{HttpServer, Run, Tokens, jwt_server_flags, read_json, run_in, stdio_target, table};
use serde_json::Value;

/// `mcpspec run security` against `url` (or a stdio command line) with the tokens in the
/// environment: `(run, scenario:step → (status, reason))`.
fn run_pack(
    target: &[&str],
    tokens: Option<&Tokens>,
    extra: &[&str],
    more_env: &[(&str, &str)],
) -> (Run, BTreeMap<String, (String, String)>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("result.json");
    let mut args = vec![
        "run",
        "security",
        "--timeout",
        "10s",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend(target);
    let mut env: Vec<(&str, &str)> = Vec::new();
    if let Some(t) = tokens {
        args.extend([
            "--bearer-env",
            "SEC_TOKEN",
            "--set",
            "wrong_audience_token=env:SEC_WRONG",
            "--set",
            "expired_token=env:SEC_EXPIRED",
        ]);
        env.extend([
            ("SEC_TOKEN", t.valid.as_str()),
            ("SEC_WRONG", t.wrong_audience.as_str()),
            ("SEC_EXPIRED", t.expired.as_str()),
        ]);
    }
    args.extend(extra);
    env.extend(more_env);
    let run = run_in(dir.path(), &args, &env);
    assert!(json.exists(), "no JSON report: {run:?}");
    let report = read_json(&json);
    let mut out = BTreeMap::new();
    for suite in report["suites"].as_array().expect("suites") {
        assert!(
            suite["setupError"].is_null(),
            "setup error: {suite:#}\n{run:?}"
        );
        for step in suite["steps"].as_array().expect("steps") {
            let outcome = &step["outcome"];
            let reason = [
                &outcome["reason"],
                &outcome["message"],
                &outcome["failures"][0]["message"],
            ]
            .into_iter()
            .find_map(Value::as_str)
            .unwrap_or("")
            .to_string();
            out.insert(
                format!(
                    "{}:{}",
                    suite["scenario"].as_str().unwrap(),
                    step["name"].as_str().unwrap()
                ),
                (outcome["status"].as_str().unwrap().to_string(), reason),
            );
        }
    }
    (run, out)
}

fn against_jwt_server(
    defects: &[&str],
    extra: &[&str],
) -> (Run, BTreeMap<String, (String, String)>) {
    let tokens = Tokens::mint();
    let mut flags = jwt_server_flags(&[]);
    for d in defects {
        flags.extend(["--defect", d]);
    }
    let server = HttpServer::start(&flags);
    run_pack(&["--url", &server.url], Some(&tokens), extra, &[])
}

#[test]
fn sound_jwt_server_passes_the_whole_pack_without_warnings() {
    let (run, outcomes) = against_jwt_server(&[], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    for (id, (status, reason)) in &outcomes {
        if !is_http_check(id) {
            // The tool checks (tests/security_tools.rs) pass or skip with their reason.
            assert!(
                matches!(status.as_str(), "passed" | "skipped"),
                "{id}: {status} {reason}"
            );
        } else if id.starts_with("security-rate-limit:") {
            assert_eq!(status, "skipped", "{id}");
            assert!(
                reason.contains("parameter rate_limit_requests is not set"),
                "{reason}"
            );
        } else {
            assert_eq!(status, "passed", "{id}: {reason}\n{run:?}");
        }
    }
    assert!(outcomes.contains_key("security-auth:alg_none_token_rejected"));
    assert!(run.stdout.contains("0 warnings"), "{}", run.stdout);
}

/// One weakness per row: the server flag and the check it breaks (with the outcome), from
/// `tests/defects/security.tsv`.
static CASES: LazyLock<Vec<(&str, &str, &str)>> = LazyLock::new(|| {
    let columns = &["defect", "check", "status"];
    table::read_as("tests/defects/security.tsv", columns, |row| {
        (
            row.get("defect"),
            row.get("check"),
            row.one_of("status", &["failed", "warning"]),
        )
    })
});

#[test]
fn each_weakness_fails_its_checks_and_nothing_else() {
    let mut problems = Vec::new();
    for defect in CASES
        .iter()
        .map(|c| c.0)
        .collect::<std::collections::BTreeSet<_>>()
    {
        let (run, outcomes) = against_jwt_server(&[defect], &[]);
        for (d, id, want) in CASES.iter().filter(|c| c.0 == defect) {
            match outcomes.get(*id) {
                Some((status, _)) if status == want => {}
                other => problems.push(format!("--defect {d}: {id} is {other:?}, expected {want}")),
            }
        }
        // Nothing else breaks: each defect weakens one rule.
        for (id, (status, reason)) in &outcomes {
            let listed = CASES.iter().any(|c| c.0 == defect && c.1 == id);
            if !listed && !matches!(status.as_str(), "passed" | "skipped") {
                problems.push(format!(
                    "--defect {defect}: unexpected {status} of {id}: {reason}"
                ));
            }
        }
        let must_fail = CASES.iter().any(|c| c.0 == defect && c.2 == "failed");
        if must_fail != (run.code == 1) {
            problems.push(format!("--defect {defect}: exit {}", run.code));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The rule is to refuse a foreign `Host`, not one status: 421 Misdirected Request (the
/// Python SDK's answer) passes like 400 or 403 — while `allow-foreign-host` (served) fails
/// (in `tests/defects/security.tsv`).
#[test]
fn foreign_host_refused_with_421_passes() {
    let (run, outcomes) = against_jwt_server(&["host-421"], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let (status, reason) = &outcomes["security-exposure:foreign_host_rejected"];
    assert_eq!(status, "passed", "{reason}");
}

/// A server that redirects with a `Location` built from the `Host` it was sent (the example
/// server's `/mcp/` → `/mcp`, as Starlette's trailing-slash redirect does) is judged by what
/// it does where the redirect leads, as a DNS-rebound browser would find: refused there is
/// a pass, served there (`allow-foreign-host`) a failure — not an error about a redirect to
/// a host that does not exist.
#[test]
fn a_redirect_built_from_the_foreign_host_is_judged_where_it_leads() {
    for (defects, expected) in [
        (&[][..], "passed"),
        (&["--defect", "allow-foreign-host"][..], "failed"),
    ] {
        let server = HttpServer::start(defects);
        let url = format!("{}/", server.url);
        assert!(url.ends_with("/mcp/"), "{url}");
        let (run, outcomes) = run_pack(&["--url", &url], None, &[], &[]);
        let (status, reason) = &outcomes["security-exposure:foreign_host_rejected"];
        assert_eq!(status, expected, "{defects:?}: {reason}\n{run:?}");
        if expected == "failed" {
            assert!(reason.contains("was not refused (HTTP 200"), "{reason}");
        }
    }
}

#[test]
fn unauthenticated_endpoint_is_reported_and_token_checks_skip() {
    let server = HttpServer::start(&[]);
    let (run, outcomes) = run_pack(&["--url", &server.url], None, &[], &[]);
    assert_eq!(run.code, 0, "a warning does not fail the run: {run:?}");
    let (status, message) = &outcomes["security-exposure:endpoint_requires_auth"];
    assert_eq!(status, "warning");
    assert!(
        message.contains("endpoint is unauthenticated") && message.contains("informational"),
        "{message}"
    );
    for (id, (status, reason)) in outcomes
        .iter()
        .filter(|(id, _)| id.starts_with("security-auth:"))
    {
        assert_eq!(status, "skipped", "{id}");
        assert!(
            reason.starts_with("endpoint is unauthenticated"),
            "{id}: {reason}"
        );
    }
    for id in [
        "security-exposure:foreign_host_rejected",
        "security-exposure:foreign_origin_rejected",
    ] {
        assert_eq!(outcomes[id].0, "passed", "{id}");
    }
}

#[test]
fn opaque_token_skips_the_alg_none_check_with_the_reason() {
    let server = HttpServer::start(&["--defect", "require-token=opaque-not-a-jwt"]);
    let (run, outcomes) = run_pack(
        &["--url", &server.url, "--bearer-env", "SEC_OPAQUE"],
        None,
        &[],
        &[("SEC_OPAQUE", "opaque-not-a-jwt")],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let (status, reason) = &outcomes["security-auth:alg_none_token_rejected"];
    assert_eq!(status, "skipped");
    assert!(reason.contains("not a JWT"), "{reason}");
    let (status, reason) = &outcomes["security-auth:expired_token_rejected"];
    assert_eq!(status, "skipped");
    assert_eq!(
        reason,
        "parameter expired_token is not set (--set expired_token=…)"
    );
}

#[test]
fn over_stdio_every_check_is_skipped_with_the_reason() {
    let target = stdio_target(&[]);
    let (run, outcomes) = run_pack(
        &["--stdio", &target],
        None,
        &[
            "--set",
            "rate_limit_requests=5",
            "--set",
            "rate_limit_seconds=1",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{run:?}");
    for (id, (status, reason)) in outcomes.iter().filter(|(id, _)| is_http_check(id)) {
        assert_eq!(status, "skipped", "{id}");
        assert!(reason.contains("HTTP transport"), "{id}: {reason}");
    }
}

/// The HTTP checks of the pack (auth, exposure, rate limit); the rest call tools.
fn is_http_check(id: &str) -> bool {
    [
        "security-auth:",
        "security-exposure:",
        "security-rate-limit:",
    ]
    .iter()
    .any(|p| id.starts_with(p))
}

#[test]
fn rate_limit_burst_reports_throttling_and_never_fails() {
    let params = [
        "--set",
        "rate_limit_requests=30",
        "--set",
        "rate_limit_seconds=3",
    ];
    let tokens = Tokens::mint();
    let throttled = HttpServer::start(&jwt_server_flags(&["--rate-limit", "5"]));
    let (run, outcomes) = run_pack(
        &["--url", &throttled.url, "--filter", "security-rate-limit"],
        Some(&tokens),
        &params,
        &[],
    );
    assert_eq!(
        outcomes["security-rate-limit:burst_is_throttled"].0, "passed",
        "{run:?}"
    );

    let open = HttpServer::start(&jwt_server_flags(&[]));
    let (run, outcomes) = run_pack(
        &["--url", &open.url, "--filter", "security-rate-limit"],
        Some(&tokens),
        &params,
        &[],
    );
    let (status, message) = &outcomes["security-rate-limit:burst_is_throttled"];
    assert_eq!(status, "warning");
    assert!(
        message.contains("no throttling observed") && message.contains("informational"),
        "{message}"
    );
    assert_eq!(run.code, 0, "informational: {run:?}");
}

#[test]
fn invalid_rate_limit_parameters_are_an_error_with_the_reason() {
    let server = HttpServer::start(&[]);
    // Not a number at all: the pack declares the parameter as an integer, so it is a load
    // error before anything is sent.
    let r = common::run(&[
        "run",
        "security",
        "--url",
        &server.url,
        "--set",
        "rate_limit_requests=lots",
        "--set",
        "rate_limit_seconds=1",
    ]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains(
            "parameter `rate_limit_requests` of pack `security`: expected an integer, got `lots`"
        ),
        "{r:?}"
    );
    // An integer out of range: the burst refuses it with the reason.
    let (_, outcomes) = run_pack(
        &["--url", &server.url, "--filter", "security-rate-limit"],
        None,
        &[
            "--set",
            "rate_limit_requests=0",
            "--set",
            "rate_limit_seconds=1",
        ],
        &[],
    );
    let (status, message) = &outcomes["security-rate-limit:burst_is_throttled"];
    assert_eq!(status, "error");
    assert!(
        message.contains("parameter rate_limit_requests must be a positive number"),
        "{message}"
    );
}

// Required parameters used only where guarded: tests/cases/parameters-used-only-where-guarded/.
