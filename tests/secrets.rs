//! Secrets never reach any output. What mcpspec treats as a secret: the value of the
//! `--bearer-env` variable, values of credential headers given with `--header`
//! (`Authorization`, `Cookie`, names containing token/secret/auth/api-key…), and values
//! of `--env` variables with such names. Such a value is replaced by `***` wherever it
//! appears: console (also `--verbose` transcripts), JUnit, JSON — including when the
//! server reflects it back in a response.

mod common;

use std::path::{Path, PathBuf};

use common::{HttpServer, Run, run_in, stdio_target};
use serde_json::Value;

const SECRET: &str = "SECRET_VALUE_123";
/// A value that is no secret: the transcripts show it, so they are really written.
const MARKER: &str = "visible-marker-42";

/// tools/list, an echo of a harmless marker, and an echo of `token` (the server
/// reflects it, so it is in the response as well as in the request).
fn echo_scenario(token: &str) -> String {
    format!(
        r#"
scenario: secrets
steps:
  - name: lists tools
    request: {{ method: tools/list }}
  - name: echoes a marker
    request:
      method: tools/call
      params: {{ name: echo, arguments: {{ text: "{MARKER}" }} }}
    expect:
      - {{ path: "$.content[0].text", equals: "{MARKER}" }}
  - name: echoes the token
    request:
      method: tools/call
      params: {{ name: echo, arguments: {{ text: '{token}' }} }}
"#
    )
}

/// The echoed token must equal something else: the failure's `actual` holds the token.
fn failing_scenario(token: &str) -> String {
    format!(
        r#"
scenario: secret-in-failure
steps:
  - name: echo differs
    request:
      method: tools/call
      params: {{ name: echo, arguments: {{ text: 'got {token} back' }} }}
    expect:
      - {{ path: "$.content[0].text", equals: "something else" }}
"#
    )
}

struct Outputs {
    run: Run,
    junit: String,
    json: String,
    _dir: tempfile::TempDir,
}

impl Outputs {
    /// Every place output goes to, by name.
    fn all(&self) -> [(&'static str, &str); 4] {
        [
            ("stdout", &self.run.stdout),
            ("stderr", &self.run.stderr),
            ("junit", &self.junit),
            ("json", &self.json),
        ]
    }

    fn assert_absent(&self, secret: &str) {
        for (name, text) in self.all() {
            assert!(
                !text.contains(secret),
                "the secret {secret:?} leaked into {name}:\n{text}"
            );
        }
    }

    fn assert_present(&self, what: &str, wheres: &[&str]) {
        for (name, text) in self.all() {
            if wheres.contains(&name) {
                assert!(text.contains(what), "{what:?} missing from {name}:\n{text}");
            }
        }
    }
}

/// `mcpspec run <yaml> ARGS --verbose --junit … --json …` with `env`.
fn run_reports(yaml: &str, args: &[&str], env: &[(&str, &str)]) -> Outputs {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = dir.path().join("secrets.yaml");
    std::fs::write(&scenario, yaml).expect("write scenario");
    let junit: PathBuf = dir.path().join("junit.xml");
    let json: PathBuf = dir.path().join("result.json");
    let mut all = vec![
        "run",
        scenario.to_str().unwrap(),
        "--verbose",
        "--timeout",
        "5s",
        "--junit",
        junit.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    all.extend(args);
    let run = run_in(dir.path(), &all, env);
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    Outputs {
        junit: read(&junit),
        json: read(&json),
        run,
        _dir: dir,
    }
}

const MATRIX: [&str; 4] = ["--era", "legacy", "--era", "2026-07-28"];

fn assert_passed_without_leak(out: &Outputs, secret: &str) {
    assert_eq!(out.run.code, 0, "{:?}", out.run);
    out.assert_absent(secret);
    // The transcripts are there (the marker shows), and the token in them is masked.
    out.assert_present(MARKER, &["stdout", "junit", "json"]);
    out.assert_present("***", &["stdout", "junit", "json"]);
    let report: Value = serde_json::from_str(&out.json).expect("json");
    assert_eq!(report["summary"]["passed"], 6, "{:#}", report["summary"]);
}

#[test]
fn bearer_env_token_passes_and_never_shows() {
    let server = HttpServer::start(&["--defect", &format!("require-token={SECRET}")]);
    let mut args = vec!["--url", &server.url, "--bearer-env", "TOKEN_VAR"];
    args.extend(MATRIX);
    let out = run_reports(&echo_scenario(SECRET), &args, &[("TOKEN_VAR", SECRET)]);
    assert_passed_without_leak(&out, SECRET);
}

#[test]
fn authorization_header_passes_and_never_shows() {
    let server = HttpServer::start(&["--defect", &format!("require-token={SECRET}")]);
    let header = format!("Authorization: Bearer {SECRET}");
    let mut args = vec!["--url", &server.url, "--header", &header];
    args.extend(MATRIX);
    let out = run_reports(&echo_scenario(SECRET), &args, &[]);
    assert_passed_without_leak(&out, SECRET);
}

#[test]
fn credential_named_custom_header_never_shows() {
    let secret = "APIKEY_VALUE_321";
    let server = HttpServer::start(&[]);
    let header = format!("X-Api-Key: {secret}");
    let out = run_reports(
        &echo_scenario(secret),
        &[
            "--url",
            &server.url,
            "--header",
            &header,
            "--era",
            "2026-07-28",
        ],
        &[],
    );
    assert_eq!(out.run.code, 0, "{:?}", out.run);
    out.assert_absent(secret);
    out.assert_present(MARKER, &["stdout", "junit", "json"]);
    out.assert_present("***", &["stdout", "junit", "json"]);
}

#[test]
fn secret_in_a_failed_expectation_is_masked() {
    let server = HttpServer::start(&["--defect", &format!("require-token={SECRET}")]);
    let out = run_reports(
        &failing_scenario(SECRET),
        &["--url", &server.url, "--bearer-env", "TOKEN_VAR"],
        &[("TOKEN_VAR", SECRET)],
    );
    assert_eq!(out.run.code, 1, "{:?}", out.run);
    out.assert_absent(SECRET);
    // The failure shows the actual value with the token masked.
    out.assert_present("got *** back", &["stdout", "junit", "json"]);
}

#[test]
fn rejected_token_is_exit_3_and_never_shows() {
    let server = HttpServer::start(&["--defect", &format!("require-token={SECRET}")]);
    let wrong = "WRONG_TOKEN_789";
    let header = format!("Authorization: Bearer {wrong}");
    let out = run_reports(
        &echo_scenario("no token here"),
        &["--url", &server.url, "--header", &header],
        &[],
    );
    assert_eq!(out.run.code, 3, "{:?}", out.run);
    out.assert_absent(wrong);
    out.assert_absent(SECRET);
}

#[test]
fn token_with_markup_and_escape_characters_never_shows_in_any_encoding() {
    // `&<>"` change under XML escaping, `"` and `\` under JSON escaping.
    let token = r#"Tk&<x>"q\z/1"#;
    let server = HttpServer::start(&["--defect", &format!("require-token={token}")]);
    let mut args = vec!["--url", &server.url, "--bearer-env", "TOKEN_VAR"];
    args.extend(MATRIX);
    let out = run_reports(&echo_scenario(token), &args, &[("TOKEN_VAR", token)]);
    assert_eq!(out.run.code, 0, "{:?}", out.run);
    let xml_escaped = "Tk&amp;&lt;x&gt;&quot;q\\z/1";
    let json_escaped = r#"Tk&<x>\"q\\z/1"#;
    let json_twice = r#"Tk&<x>\\\"q\\\\z/1"#;
    for form in [token, xml_escaped, json_escaped, json_twice, "q\\z/1"] {
        out.assert_absent(form);
    }
    out.assert_present("***", &["stdout", "junit", "json"]);
}

#[test]
fn credential_env_var_for_a_stdio_server_never_shows() {
    let secret = "SECRET_ENV_456";
    let env = format!("MY_API_TOKEN={secret}");
    let target = stdio_target(&[]);
    let out = run_reports(
        &echo_scenario(secret),
        &["--stdio", &target, "--env", &env, "--era", "legacy"],
        &[],
    );
    assert_eq!(out.run.code, 0, "{:?}", out.run);
    out.assert_absent(secret);
    out.assert_present(MARKER, &["stdout", "junit", "json"]);
    out.assert_present("***", &["stdout", "junit", "json"]);
}

#[test]
fn call_masks_the_token_in_the_printed_response() {
    let server = HttpServer::start(&["--defect", &format!("require-token={SECRET}")]);
    let params = format!(r#"{{"name":"echo","arguments":{{"text":"{SECRET}"}}}}"#);
    let dir = tempfile::tempdir().expect("tempdir");
    let run = run_in(
        dir.path(),
        &[
            "call",
            "tools/call",
            "--params",
            &params,
            "--url",
            &server.url,
            "--bearer-env",
            "TOKEN_VAR",
            "--timeout",
            "5s",
        ],
        &[("TOKEN_VAR", SECRET)],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.all_output().contains(SECRET), "leaked: {run:?}");
    let response: Value = serde_json::from_str(&run.stdout).expect("stdout is JSON");
    assert_eq!(
        response["result"]["content"][0]["text"], "***",
        "{response:#}"
    );
}

#[test]
fn bearer_token_with_a_lower_case_scheme_never_shows() {
    let secret = "LOWER_CASE_SCHEME_SECRET_9";
    let server = HttpServer::start(&[]);
    let header = format!("Authorization: bearer {secret}");
    let out = run_reports(
        &echo_scenario(secret),
        &[
            "--url",
            &server.url,
            "--header",
            &header,
            "--era",
            "2026-07-28",
        ],
        &[],
    );
    assert_eq!(out.run.code, 0, "{:?}", out.run);
    out.assert_absent(secret);
}

/// The security pack with every kind of secret at once: the `--bearer-env` JWT, the
/// `alg: none` token derived from it, `--set …=env:VAR` tokens, a `*_token` parameter given
/// in plain text, and a secret header; a scenario echoes them back and fails on one, so
/// they reach responses, failure messages and the `--write-baseline` file. None shows.
#[test]
fn security_pack_secrets_never_show_in_any_output() {
    use common::{Tokens, jwt_server_flags};
    let tokens = Tokens::mint();
    let derived = mcpspec::engine::security::alg_none_token(&tokens.valid).expect("a JWT");
    let plain_token = "PLAIN_OTHER_USER_TOKEN_77";
    let header_secret = "HEADER_API_KEY_SECRET_5";
    // auth-ignore-expiry: the expired token is accepted, so its check fails with a message.
    let server = HttpServer::start(&jwt_server_flags(&["--defect", "auth-ignore-expiry"]));
    let echo = r#"
scenario: secret-echo
requires: { parameters: [expired_token, alg_none_token, other_user_token] }
steps:
  - name: echoes the secrets
    request:
      method: tools/call
      params: { name: echo, arguments: { text: "{{ expired_token }} {{ alg_none_token }} {{ other_user_token }}" } }
    expect:
      - { path: "$.content[0].text", equals: "something else" }
"#;
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = dir.path().join("echo.yaml");
    std::fs::write(&scenario, echo).unwrap();
    let (junit, json, baseline) = (
        dir.path().join("junit.xml"),
        dir.path().join("result.json"),
        dir.path().join("baseline.yaml"),
    );
    let header = format!("X-Api-Key: {header_secret}");
    let other = format!("other_user_token={plain_token}");
    let run = run_in(
        dir.path(),
        &[
            "run",
            "security",
            scenario.to_str().unwrap(),
            "--url",
            &server.url,
            "--bearer-env",
            "SEC_TOKEN",
            "--set",
            "wrong_audience_token=env:SEC_WRONG",
            "--set",
            "expired_token=env:SEC_EXPIRED",
            "--set",
            &other,
            "--header",
            &header,
            "--verbose",
            "--junit",
            junit.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--write-baseline",
            baseline.to_str().unwrap(),
        ],
        &[
            ("SEC_TOKEN", &tokens.valid),
            ("SEC_WRONG", &tokens.wrong_audience),
            ("SEC_EXPIRED", &tokens.expired),
        ],
    );
    assert_eq!(run.code, 1, "the echo and the expired token fail: {run:?}");
    let read = |p: &Path| std::fs::read_to_string(p).expect("written");
    let outputs = [
        ("stdout", run.stdout.clone()),
        ("stderr", run.stderr.clone()),
        ("junit", read(&junit)),
        ("json", read(&json)),
        ("baseline", read(&baseline)),
    ];
    let claims = tokens.valid.split('.').nth(1).unwrap().to_string();
    for secret in [
        &tokens.valid,
        &tokens.wrong_audience,
        &tokens.expired,
        &derived,
        &claims,
        &plain_token.to_string(),
        &header_secret.to_string(),
    ] {
        for (name, text) in &outputs {
            assert!(
                !text.contains(secret.as_str()),
                "{secret:?} leaked into {name}:\n{text}"
            );
        }
    }
    // The failures are reported (masked), and the baseline names them.
    assert!(outputs[0].1.contains("***"), "{}", outputs[0].1);
    assert!(
        outputs[4].1.contains("expired_token_rejected"),
        "{}",
        outputs[4].1
    );
    assert!(outputs[4].1.contains("secret-echo"), "{}", outputs[4].1);
}
