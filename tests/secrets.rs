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
    let derived = mcpspec::run::engine::security::alg_none_token(&tokens.valid).expect("a JWT");
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

// ---------------------------------------------------------------------------
// Redact first, then cut; secret-shaped values; snapshot/init files; redirects; escapes.
// ---------------------------------------------------------------------------

/// A credential the `leak-secret` defect shows back after padding, so that every excerpt
/// mcpspec cuts (one-line failure, JSON-RPC error, HTTP body, stdout line) ends inside it.
const LEAKED: &str = "s3cr3tTOKEN-9f8e7d6c5b4a";

/// Every prefix of `secret` of 4 characters or more that occurs in `text`.
fn prefixes_in(secret: &str, text: &str) -> Vec<String> {
    (4..=secret.len())
        .map(|n| &secret[..n])
        .filter(|p| text.contains(p))
        .map(str::to_string)
        .collect()
}

fn assert_no_prefix(out: &Outputs, secret: &str) {
    for (name, text) in out.all() {
        let found = prefixes_in(secret, text);
        assert!(
            found.is_empty(),
            "a prefix of the secret ({:?}) leaked into {name}:\n{text}",
            found.last()
        );
    }
}

/// Steps that make the server show the secret where mcpspec cuts text; each fails.
fn leak_scenario(hows: &[&str]) -> String {
    let mut yaml = String::from("scenario: leaks\nsteps:\n");
    for how in hows {
        yaml.push_str(&format!(
            "  - name: leak {how}\n    request: {{ method: tools/call, params: {{ name: echo, arguments: {{ text: \"leak:{how}\" }} }} }}\n    expect:\n      - {{ path: \"$.content[0].text\", equals: \"something else\" }}\n"
        ));
    }
    yaml
}

/// The report says that something was redacted: a console note, a JSON field, a JUnit
/// property.
fn assert_says_redacted(out: &Outputs) {
    assert!(
        out.run.stdout.contains("secret value(s) redacted"),
        "{}",
        out.run.stdout
    );
    let report: Value = serde_json::from_str(&out.json).expect("json");
    assert!(
        report["redacted"].as_u64() > Some(0),
        "{}",
        report["redacted"]
    );
    assert!(out.junit.contains("name=\"redacted\""), "{}", out.junit);
}

#[test]
fn no_prefix_of_a_secret_survives_a_cut_over_stdio() {
    // The server reads the secret from its environment (a credential-named --env value).
    let target = stdio_target(&["--defect", "leak-secret=env:MY_API_TOKEN"]);
    let env = format!("MY_API_TOKEN={LEAKED}");
    let out = run_reports(
        &leak_scenario(&["result", "error", "stdout"]),
        &["--stdio", &target, "--env", &env, "--era", "legacy"],
        &[],
    );
    assert_eq!(out.run.code, 1, "{:?}", out.run);
    assert_no_prefix(&out, LEAKED);
    // The excerpts are there, cut after the mask.
    out.assert_present("xxxxxxxx***", &["stdout", "junit", "json"]);
    out.assert_present("non-JSON", &["stdout", "junit", "json"]);
    assert_says_redacted(&out);
}

#[test]
fn no_prefix_of_a_secret_survives_a_cut_over_http() {
    let server = HttpServer::start(&["--defect", &format!("leak-secret={LEAKED}")]);
    let header = format!("X-Api-Key: {LEAKED}");
    let out = run_reports(
        &leak_scenario(&["result", "error", "http500"]),
        &["--url", &server.url, "--header", &header],
        &[],
    );
    assert_eq!(out.run.code, 1, "{:?}", out.run);
    assert_no_prefix(&out, LEAKED);
    out.assert_present(
        "HTTP 500 with body: internal error: xxxx",
        &["stdout", "junit", "json"],
    );
    assert_says_redacted(&out);
}

#[test]
fn secret_shaped_values_in_a_tool_result_are_redacted() {
    // No secret is known to mcpspec: the values are masked for their shape alone.
    let target = stdio_target(&["--defect", "leak-secret=unused"]);
    let out = run_reports(
        &leak_scenario(&["shapes"]),
        &["--stdio", &target, "--era", "legacy"],
        &[],
    );
    assert_eq!(out.run.code, 1, "{:?}", out.run);
    for value in [
        "sk-proj-Zz9yX8wV7uT6sR5qP4oN3mL2",
        "hunter2-Pa55word",
        "tok_live_51HqLyjWDarjtT1",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
        "xoxb-2048-4096-Zq8Wm3Kp",
        "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    ] {
        out.assert_absent(value);
    }
    // The names stay, and what is no secret is shown.
    out.assert_present("OPENAI_API_KEY", &["stdout", "junit", "json"]);
    out.assert_present("SERVICE_TOKEN=***", &["stdout", "junit", "json"]);
    out.assert_present("/home/app", &["stdout", "junit", "json"]);
    assert_says_redacted(&out);
}

#[test]
fn server_stderr_escape_sequences_are_escaped_on_the_console_and_in_junit() {
    let target = stdio_target(&["--defect", "leak-secret=unused"]);
    let out = run_reports(
        &leak_scenario(&["stderr"]),
        &["--stdio", &target, "--era", "legacy"],
        &[],
    );
    assert_eq!(out.run.code, 1, "{:?}", out.run);
    for (name, text) in out.all() {
        for byte in ['\u{1b}', '\u{7}', '\0'] {
            assert!(!text.contains(byte), "raw {byte:?} in {name}:\n{text:?}");
        }
    }
    // Shown escaped, where the server's stderr is shown.
    out.assert_present(
        r"stderr \u{1B}]0;pwned\u{7}\u{1B}[31mred\u{0}nul",
        &["stdout", "junit"],
    );
}

/// Every file under `dir`, as (path, text).
fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
                out.push((path, text));
            }
        }
    }
    out
}

fn assert_no_file_holds(dir: &Path, secret: &str) {
    let files = files_under(dir);
    assert!(!files.is_empty(), "nothing written under {}", dir.display());
    for (path, text) in files {
        let found = prefixes_in(secret, &text);
        assert!(
            found.is_empty(),
            "{} holds the secret ({:?}):\n{text}",
            path.display(),
            found.last()
        );
    }
}

#[test]
fn snapshot_never_writes_a_token_the_server_echoes() {
    let server = HttpServer::start(&["--defect", &format!("leak-secret={LEAKED}")]);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("snap");
    let header = format!("Authorization: Bearer {LEAKED}");
    let run = run_in(
        dir.path(),
        &[
            "snapshot",
            "--url",
            &server.url,
            "--header",
            &header,
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.all_output().contains(LEAKED), "{run:?}");
    assert_no_file_holds(&out, LEAKED);
    let tools = std::fs::read_to_string(out.join("tools.json")).unwrap();
    assert!(tools.contains("Authenticate with key ***."), "{tools}");
    let server_json = std::fs::read_to_string(out.join("server.json")).unwrap();
    assert!(server_json.contains("Use the key ***."), "{server_json}");
    assert!(run.stderr.contains("redacted from the snapshot"), "{run:?}");
}

#[test]
fn init_never_writes_a_token_the_server_echoes_and_its_project_passes() {
    let target = stdio_target(&["--defect", "leak-secret=env:MY_API_TOKEN"]);
    let env = format!("MY_API_TOKEN={LEAKED}");
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().join("project");
    let run = run_in(
        dir.path(),
        &[
            "init",
            project.to_str().unwrap(),
            "--stdio",
            &target,
            "--env",
            &env,
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(prefixes_in(LEAKED, &run.all_output()).is_empty(), "{run:?}");
    assert_no_file_holds(&project, LEAKED);
    assert!(
        run.all_output().contains("redacted from the written files"),
        "{run:?}"
    );
    // The masked contract still matches the live server (its live snapshot is masked the
    // same way): the generated project passes.
    let checked = run_in(&project, &["run"], &[("MY_API_TOKEN", LEAKED)]);
    assert_eq!(checked.code, 0, "{checked:?}");
    assert!(
        prefixes_in(LEAKED, &checked.all_output()).is_empty(),
        "{checked:?}"
    );
}

/// A local endpoint that answers every request with `307` to `location`.
fn redirecting_endpoint(location: String) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let _ = read_request(&stream);
            let reply = format!(
                "HTTP/1.1 307 Temporary Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = std::io::Write::write_all(&mut &stream, reply.as_bytes());
        }
    });
    url
}

/// A local endpoint (another origin: another port) that records the head of every
/// request it receives and answers 404.
fn recording_endpoint() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let head = read_request(&stream);
            record.lock().unwrap().push(head);
            let reply = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
            let _ = std::io::Write::write_all(&mut &stream, reply.as_bytes());
        }
    });
    (url, seen)
}

/// The request head (and drains a Content-Length body).
fn read_request(stream: &std::net::TcpStream) -> String {
    use std::io::{BufRead, Read};
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
    let mut reader = std::io::BufReader::new(stream);
    let mut head = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap_or(0);
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    head
}

#[test]
fn cross_origin_redirect_sends_no_credential_and_is_reported() {
    let (other, seen) = recording_endpoint();
    let url = redirecting_endpoint(other);
    let api_key = "REDIRECT_API_KEY_SECRET_1";
    let bearer = "REDIRECT_BEARER_SECRET_2";
    let key_header = format!("X-Api-Key: {api_key}");
    let auth_header = format!("Authorization: Bearer {bearer}");
    let out = run_reports(
        &echo_scenario("x"),
        &[
            "--url",
            &url,
            "--header",
            &key_header,
            "--header",
            &auth_header,
            "--era",
            "legacy",
        ],
        &[],
    );
    let received = seen.lock().unwrap().join("\n");
    for secret in [api_key, bearer] {
        assert!(
            !received.contains(secret),
            "{secret} crossed origins:\n{received}"
        );
    }
    let lower = received.to_ascii_lowercase();
    assert!(
        !lower.contains("x-api-key") && !lower.contains("authorization"),
        "{received}"
    );
    assert_ne!(out.run.code, 0, "{:?}", out.run);
    assert!(
        out.run
            .all_output()
            .contains("cross-origin redirect to http://127.0.0.1:"),
        "the redirect is not reported: {:?}",
        out.run
    );
    out.assert_absent(api_key);
    out.assert_absent(bearer);
}

/// Issue: `server-everything`'s read-only `get-env` returns the server's whole environment,
/// which went into the reports verbatim. Values mcpspec was never told about are masked for
/// their shape (credential-like names, key formats); the rest of the environment shows.
#[test]
fn real_server_everything_get_env_is_redacted_in_every_report() {
    let server = common::repo_root().join(
        "tests/interop/everything-2026.8.31/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    assert!(
        server.exists(),
        "the pinned npm server is not installed: run `npm ci` in tests/interop/everything-2026.8.31 (.ci/run does)"
    );
    let target = format!("node {} stdio", server.display());
    let scenario = r#"
scenario: get-env
steps:
  - name: prints its environment
    request: { method: tools/call, params: { name: get-env, arguments: {} } }
    expect:
      - { path: "$.content[0].text", equals: "something else" }
"#;
    // Inherited by the server; none of them is given to mcpspec as a secret.
    let env = [
        ("PAYMENTS_API_KEY", "pay-8f1c2e9a7b6d5c4e3f21"),
        ("DEPLOY_NOTE", "AKIAIOSFODNN7EXAMPLE"),
        ("BUILD_LABEL", "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"),
        ("VISIBLE_SETTING", "visible-setting-value-7"),
    ];
    let out = run_reports(scenario, &["--stdio", &target, "--era", "legacy"], &env);
    assert_eq!(out.run.code, 1, "{:?}", out.run);
    for (_, value) in &env[..3] {
        out.assert_absent(value);
        for (name, text) in out.all() {
            assert!(
                prefixes_in(value, text).is_empty(),
                "a prefix of {value} leaked into {name}"
            );
        }
    }
    out.assert_present("PAYMENTS_API_KEY", &["stdout", "junit", "json"]);
    out.assert_present("visible-setting-value-7", &["stdout", "junit", "json"]);
    assert_says_redacted(&out);
}

/// A scenario file whose name holds a credential word (`auth.yaml`, `api-token-refresh.yaml`)
/// is no secret: a failure points at `auth.yaml:6:…` and no "redacted" note is printed.
#[test]
fn file_names_with_credential_words_keep_their_positions() {
    let server = format!(
        "python3 {} correct",
        common::repo_root()
            .join("tests/hostile/server.py")
            .display()
    );
    for name in [
        "auth.yaml",
        "secret.yaml",
        "password-reset.yaml",
        "api-token-refresh.yaml",
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join(name),
            "scenario: login\nsteps:\n  - name: lists tools\n    request: { method: tools/list }\n    expect:\n      - { path: \"$.tools\", length: 99 }\n",
        )
        .expect("write scenario");
        let junit = dir.path().join("junit.xml");
        let run = run_in(
            dir.path(),
            &[
                "run",
                name,
                "--stdio",
                &server,
                "--era",
                "legacy",
                "--timeout",
                "5s",
                "--junit",
                junit.to_str().unwrap(),
            ],
            &[],
        );
        assert_eq!(run.code, 1, "{run:?}");
        let junit = std::fs::read_to_string(&junit).unwrap_or_default();
        for (place, text) in [("stdout", &run.stdout), ("junit", &junit)] {
            assert!(
                text.contains(&format!("{name}:6:")),
                "{place} lost the position of {name}:\n{text}"
            );
            assert!(
                !text.contains("***"),
                "{place} masks something in {name}:\n{text}"
            );
        }
        assert!(!run.all_output().contains("redacted"), "{run:?}");
    }
}
