//! OAuth sign-in for the run (issue #36, phase 1): the example server as a protected
//! resource (`--auth-jwks`) behind a real authorization server (the pinned
//! oauth2-mock-server of tests/oauth/authserver, started by `launch.mjs` on 127.0.0.1),
//! over HTTP in both eras: the `client_credentials` sign-in, a token that expires mid-run,
//! and each way the flow fails — one error naming its step, within `--timeout`, no secret
//! in any output.
#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{HttpServer, Run, repo_root, run_in};

const CLIENT_ID: &str = "mcpspec-ci";
const CLIENT_SECRET: &str = "oauth-client-secret-4f1d9c";
const SECRET_VAR: &str = "MCPSPEC_TEST_OAUTH_SECRET";

/// The authorization server, stopped on drop; its stdout (the tokens it issued) is kept.
struct AuthServer {
    child: Child,
    issuer: String,
    lines: Option<std::thread::JoinHandle<String>>,
}

impl AuthServer {
    fn start(lifetime_secs: u32) -> AuthServer {
        AuthServer::start_with(lifetime_secs, &[])
    }

    fn start_with(lifetime_secs: u32, extra: &[&str]) -> AuthServer {
        let dir = repo_root().join("tests/oauth/authserver");
        assert!(
            dir.join("node_modules/oauth2-mock-server").exists(),
            "the test authorization server is not installed: run `npm ci` in tests/oauth/authserver (scripts/test does)"
        );
        let mut child = Command::new("node")
            .arg("launch.mjs")
            .args(["--client-id", CLIENT_ID, "--client-secret", CLIENT_SECRET])
            .args(["--lifetime", &lifetime_secs.to_string()])
            .args(extra)
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        out.read_line(&mut line).expect("issuer line");
        let issuer = line
            .trim()
            .strip_prefix("issuer ")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_string();
        let lines = std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = out.read_to_string(&mut rest);
            rest
        });
        AuthServer {
            child,
            issuer,
            lines: Some(lines),
        }
    }

    /// Stop it: the tokens it issued.
    fn tokens(self) -> Vec<String> {
        self.issued("token ")
    }

    /// Stop it: what it printed after `prefix` (`token `, `refresh `, `code `).
    fn issued(mut self, prefix: &str) -> Vec<String> {
        self.issued_all()
            .into_iter()
            .filter_map(|l| l.strip_prefix(prefix).map(str::to_string))
            .collect()
    }

    /// Stop it: every line it printed after the issuer's.
    fn issued_all(&mut self) -> Vec<String> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let out = self
            .lines
            .take()
            .map(|l| l.join().unwrap())
            .unwrap_or_default();
        out.lines().map(str::to_string).collect()
    }

    /// Stop it: every token, refresh token and code it issued (none may be shown).
    fn all_secrets(mut self) -> Vec<String> {
        self.issued_all()
            .iter()
            .filter_map(|l| l.split_once(' ').map(|(_, v)| v.to_string()))
            .collect()
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The example server as a resource of `issuer`, its keys from `jwks`.
fn resource_server(jwks: &str, issuer: &str, extra: &[&str]) -> HttpServer {
    let jwks = format!("{jwks}/jwks");
    let mut flags = vec![
        "--auth-jwks",
        &jwks,
        "--auth-issuer",
        issuer,
        "--auth-scope",
        "mcp",
    ];
    flags.extend(extra);
    HttpServer::start(&flags)
}

/// `mcpspec run` of the example tools scenario (both eras) against `url` with the OAuth
/// flags, JUnit and JSON written to `dir`.
fn run_signed_in(dir: &Path, url: &str, secret: &str, extra: &[&str]) -> Run {
    let scenario = repo_root().join("examples/scenarios/tools.yaml");
    let mut args = vec![
        "run",
        scenario.to_str().unwrap(),
        "--url",
        url,
        "--oauth-client-id",
        CLIENT_ID,
        "--oauth-client-secret-env",
        SECRET_VAR,
        "--junit",
        "junit.xml",
        "--json",
        "result.json",
    ];
    args.extend(extra);
    run_in(dir, &args, &[(SECRET_VAR, secret)])
}

/// Everything the run wrote: console, JUnit, JSON.
fn all_written(dir: &Path, run: &Run) -> String {
    let mut all = run.all_output();
    for file in ["junit.xml", "result.json"] {
        all.push_str(&std::fs::read_to_string(dir.join(file)).unwrap_or_default());
    }
    all
}

fn assert_no_secret(written: &str, secrets: &[&str]) {
    for secret in secrets {
        assert!(
            !written.contains(secret),
            "a secret leaked: {secret}\n{written}"
        );
    }
}

#[test]
fn client_credentials_from_the_config_file_passes_in_both_eras() {
    let auth = AuthServer::start(3600);
    let server = resource_server(&auth.issuer, &auth.issuer, &[]);
    let dir = tempfile::tempdir().unwrap();
    let scenario = repo_root().join("examples/scenarios/tools.yaml");
    std::fs::write(
        dir.path().join("mcpspec.yaml"),
        format!(
            "targets:\n  staging:\n    url: {}\n    auth:\n      grant: client_credentials\n      clientId: {CLIENT_ID}\n      clientSecretEnv: {SECRET_VAR}\npaths: [{}]\njunit: junit.xml\njson: result.json\n",
            server.url,
            scenario.display()
        ),
    )
    .unwrap();
    let run = run_in(dir.path(), &["run"], &[(SECRET_VAR, CLIENT_SECRET)]);
    assert_eq!(run.code, 0, "{}", run.all_output());
    assert!(run.stdout.contains("PASS  tools@legacy"), "{}", run.stdout);
    assert!(
        run.stdout.contains("PASS  tools@2026-07-28"),
        "{}",
        run.stdout
    );
    let written = all_written(dir.path(), &run);
    let tokens = auth.tokens();
    assert_eq!(tokens.len(), 1, "one sign-in for the whole run: {tokens:?}");
    let mut secrets = vec![CLIENT_SECRET];
    secrets.extend(tokens.iter().map(String::as_str));
    assert_no_secret(&written, &secrets);
}

#[test]
fn a_token_that_expires_mid_run_is_fetched_again_once_per_refusal() {
    let auth = AuthServer::start(3600);
    // Each token is refused as expired (401 invalid_token) after 3 requests.
    let server = resource_server(&auth.issuer, &auth.issuer, &["--auth-token-uses", "3"]);
    let dir = tempfile::tempdir().unwrap();
    let run = run_signed_in(dir.path(), &server.url, CLIENT_SECRET, &["--jobs", "1"]);
    assert_eq!(run.code, 0, "{}", run.all_output());
    let written = all_written(dir.path(), &run);
    let json = std::fs::read_to_string(dir.path().join("result.json")).unwrap();
    let renewals = json
        .matches("a new one was fetched and the message sent again")
        .count();
    let tokens = auth.tokens();
    assert!(renewals >= 2, "the run outlived several tokens: {renewals}");
    // One token at sign-in, then one per refusal: each step's refusal is in its
    // transcript; the exchanges outside the steps (the session's end) keep none, so one
    // more renewal may be unrecorded. Two tokens per refusal would be twice as many.
    assert!(
        (1 + renewals..=2 + renewals).contains(&tokens.len()),
        "{renewals} renewals recorded, {} tokens issued",
        tokens.len()
    );
    let mut secrets = vec![CLIENT_SECRET];
    secrets.extend(tokens.iter().map(String::as_str));
    assert_no_secret(&written, &secrets);
}

#[test]
fn a_token_request_refused_mid_run_ends_it_with_one_error_at_the_token_step() {
    // One token, good for 3 requests; the request for the second is refused.
    let auth = AuthServer::start_with(3600, &["--max-tokens", "1"]);
    let server = resource_server(&auth.issuer, &auth.issuer, &["--auth-token-uses", "3"]);
    let dir = tempfile::tempdir().unwrap();
    let run = run_signed_in(dir.path(), &server.url, CLIENT_SECRET, &["--jobs", "1"]);
    assert_eq!(run.code, 3, "{}", run.all_output());
    let last = run.stderr.lines().last().unwrap_or("");
    assert!(
        last.starts_with("error: OAuth sign-in failed at the token request")
            && last.contains("invalid_grant"),
        "{}",
        run.stderr
    );
    // Once refused, no more token requests and no more 401s: later messages fail at once.
    assert_eq!(auth.tokens().len(), 1);
    let json = std::fs::read_to_string(dir.path().join("result.json")).unwrap();
    assert!(json.matches("HTTP 401").count() <= 1, "{json}");
}

#[test]
fn a_token_past_its_expires_in_is_fetched_before_it_is_sent() {
    // Tokens live 6 s; mcpspec renews 5 s early, so every message gets a fresh one and
    // the server never sees an expired token.
    let auth = AuthServer::start(6);
    let server = resource_server(&auth.issuer, &auth.issuer, &[]);
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let run = run_signed_in(dir.path(), &server.url, CLIENT_SECRET, &["--era", "legacy"]);
    assert_eq!(run.code, 0, "{}", run.all_output());
    if started.elapsed() < Duration::from_secs(1) {
        // The run ended within the token's 1 s of use: nothing to renew yet.
        assert!(!auth.tokens().is_empty());
    }
}

#[test]
fn a_wrong_client_secret_ends_with_one_error_at_the_token_step() {
    let auth = AuthServer::start(3600);
    let server = resource_server(&auth.issuer, &auth.issuer, &[]);
    let dir = tempfile::tempdir().unwrap();
    let wrong = "wrong-secret-7a3e51";
    let run = run_signed_in(dir.path(), &server.url, wrong, &[]);
    assert_eq!(run.code, 3, "{}", run.all_output());
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", run.stderr);
    assert!(errors[0].contains("the token request"), "{}", errors[0]);
    assert!(errors[0].contains("invalid_client"), "{}", errors[0]);
    assert!(
        !run.stdout.contains("FAIL"),
        "no cascade of failures: {}",
        run.stdout
    );
    assert_no_secret(&all_written(dir.path(), &run), &[wrong, CLIENT_SECRET]);
}

/// A listener that accepts connections and never answers.
fn black_hole() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    (listener, url)
}

#[test]
fn an_authorization_server_that_never_answers_fails_within_the_timeout() {
    let auth = AuthServer::start(3600);
    let (_hole, silent) = black_hole();
    // The resource names the silent server as its authorization server.
    let server = resource_server(&auth.issuer, &silent, &[]);
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let run = run_signed_in(dir.path(), &server.url, CLIENT_SECRET, &["--timeout", "1s"]);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(run.code, 3, "{}", run.all_output());
    assert!(
        run.stderr.contains("the authorization server metadata") && run.stderr.contains("timeout"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_unreachable_authorization_server_is_named() {
    let auth = AuthServer::start(3600);
    let (hole, closed) = black_hole();
    drop(hole);
    let server = resource_server(&auth.issuer, &closed, &[]);
    let dir = tempfile::tempdir().unwrap();
    let run = run_signed_in(dir.path(), &server.url, CLIENT_SECRET, &["--timeout", "2s"]);
    assert_eq!(run.code, 3, "{}", run.all_output());
    assert!(
        run.stderr.contains("the authorization server metadata"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(&closed), "{}", run.stderr);
}

/// What the fake server below answers a GET of its metadata with.
#[derive(Clone, Copy)]
enum Metadata {
    /// A 10 MB document.
    Huge,
    /// A redirect to itself, forever.
    RedirectLoop,
}

/// A server that challenges with `resource_metadata` pointing at itself and answers the
/// GET of that document as `metadata` says; it serves `connections` connections.
fn lying_server(metadata: Metadata, connections: usize) -> (std::thread::JoinHandle<()>, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let base = origin.clone();
    let handle = std::thread::spawn(move || {
        for stream in listener.incoming().take(connections) {
            let Ok(mut stream) = stream else { return };
            let mut head = [0u8; 4096];
            let n = stream.read(&mut head).unwrap_or(0);
            let request = String::from_utf8_lossy(&head[..n]).into_owned();
            if request.starts_with("POST") {
                let reply = format!(
                    "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer resource_metadata=\"{base}/prm\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                let _ = stream.write_all(reply.as_bytes());
                continue;
            }
            match metadata {
                Metadata::RedirectLoop => {
                    let reply = format!(
                        "HTTP/1.1 302 Found\r\nLocation: {base}/prm\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    );
                    let _ = stream.write_all(reply.as_bytes());
                }
                Metadata::Huge => {
                    let size = 10 * 1024 * 1024;
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n"
                    );
                    let _ = stream.write_all(head.as_bytes());
                    let chunk = vec![b' '; 64 * 1024];
                    for _ in 0..size / chunk.len() {
                        if stream.write_all(&chunk).is_err() {
                            break;
                        }
                    }
                }
            }
        }
    });
    (handle, format!("{origin}/mcp"))
}

#[test]
fn a_redirect_loop_at_the_metadata_ends_with_one_error_naming_the_step() {
    // The challenge, then as many redirects as the client follows before it gives up.
    let (_server, url) = lying_server(Metadata::RedirectLoop, 64);
    let dir = tempfile::tempdir().unwrap();
    let run = run_signed_in(dir.path(), &url, CLIENT_SECRET, &["--timeout", "10s"]);
    assert_eq!(run.code, 3, "{}", run.all_output());
    assert!(
        run.stderr.contains("the protected resource metadata") && run.stderr.contains("redirect"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_10_mb_metadata_document_is_refused_naming_the_step() {
    let (_server, url) = lying_server(Metadata::Huge, 2);
    let dir = tempfile::tempdir().unwrap();
    let run = run_signed_in(dir.path(), &url, CLIENT_SECRET, &["--timeout", "10s"]);
    assert_eq!(run.code, 3, "{}", run.all_output());
    assert!(
        run.stderr.contains("the protected resource metadata")
            && run.stderr.contains("larger than"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_client_secret_written_in_the_config_is_a_validate_error_that_does_not_show_it() {
    let dir = tempfile::tempdir().unwrap();
    let literal = "literal-secret-9b2c7e";
    std::fs::write(
        dir.path().join("mcpspec.yaml"),
        format!(
            "targets:\n  staging:\n    url: http://127.0.0.1:9/mcp\n    auth:\n      grant: client_credentials\n      clientId: x\n      clientSecret: {literal}\n"
        ),
    )
    .unwrap();
    let run = run_in(dir.path(), &["validate"], &[]);
    assert_eq!(run.code, 2, "{}", run.all_output());
    assert!(run.stderr.contains("mcpspec.yaml:7:21"), "{}", run.stderr);
    assert!(run.stderr.contains("clientSecretEnv"), "{}", run.stderr);
    assert_no_secret(&run.all_output(), &[literal]);
}

#[test]
fn the_example_server_refuses_tokens_without_the_scope_with_403() {
    let auth = AuthServer::start(3600);
    let server = resource_server(&auth.issuer, &auth.issuer, &[]);
    let dir = tempfile::tempdir().unwrap();
    // Signed in with another scope: the server answers 403 insufficient_scope (a token
    // problem no new token of the same scope cures: reported, not retried).
    let run = run_signed_in(
        dir.path(),
        &server.url,
        CLIENT_SECRET,
        &["--oauth-scope", "other", "--era", "legacy"],
    );
    assert_ne!(run.code, 0, "{}", run.all_output());
    assert!(run.all_output().contains("403"), "{}", run.all_output());
    assert_eq!(auth.tokens().len(), 1);
}

/// `mcpspec validate` of an mcpspec.yaml holding `config`: invalid input (exit 2).
fn validate_config(config: &str) -> Run {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mcpspec.yaml"), config).unwrap();
    let run = run_in(dir.path(), &["validate"], &[]);
    assert_eq!(run.code, 2, "{}", run.all_output());
    run
}

#[test]
fn an_auth_block_without_a_secret_source_or_on_a_stdio_target_is_a_validate_error() {
    let run = validate_config(
        "targets:\n  local:\n    stdio: node server.js\n    auth:\n      grant: client_credentials\n      clientId: x\n",
    );
    assert!(
        run.stderr
            .contains("needs one of `clientSecretEnv` and `clientSecretFile`"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("applies to `url:` targets"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("mcpspec.yaml:5:"), "{}", run.stderr);
}

// ---- phase 2: refresh_token, auth login, private_key_jwt, lying metadata ----

/// The public client a person signs in with (`auth login`), and the refresh token stored
/// for it (as a CI secret would hold it).
const PUBLIC_ID: &str = "mcpspec-cli";
const STORED_REFRESH: &str = "stored-refresh-token-0c9e42";
const REFRESH_VAR: &str = "MCPSPEC_TEST_OAUTH_REFRESH";

fn refresh_server() -> AuthServer {
    AuthServer::start_with(
        3600,
        &[
            "--public-client-id",
            PUBLIC_ID,
            "--refresh-token",
            STORED_REFRESH,
        ],
    )
}

fn assert_both_eras_pass(run: &Run) {
    assert_eq!(run.code, 0, "{}", run.all_output());
    assert!(run.stdout.contains("PASS  tools@legacy"), "{}", run.stdout);
    assert!(
        run.stdout.contains("PASS  tools@2026-07-28"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_stored_refresh_token_from_the_config_file_passes_in_both_eras() {
    let auth = refresh_server();
    let server = resource_server(&auth.issuer, &auth.issuer, &[]);
    let dir = tempfile::tempdir().unwrap();
    let scenario = repo_root().join("examples/scenarios/tools.yaml");
    std::fs::write(
        dir.path().join("mcpspec.yaml"),
        format!(
            "targets:\n  staging:\n    url: {}\n    auth:\n      grant: refresh_token\n      clientId: {PUBLIC_ID}\n      refreshTokenEnv: {REFRESH_VAR}\npaths: [{}]\njunit: junit.xml\njson: result.json\n",
            server.url,
            scenario.display()
        ),
    )
    .unwrap();
    let run = run_in(dir.path(), &["run"], &[(REFRESH_VAR, STORED_REFRESH)]);
    assert_both_eras_pass(&run);
    let written = all_written(dir.path(), &run);
    let mut secrets = auth.all_secrets();
    assert!(!secrets.is_empty());
    secrets.push(STORED_REFRESH.into());
    assert_no_secret(
        &written,
        &secrets.iter().map(String::as_str).collect::<Vec<_>>(),
    );
}

#[test]
fn a_refresh_token_run_outlives_its_tokens_with_the_rotated_refresh_tokens() {
    let auth = refresh_server();
    let server = resource_server(&auth.issuer, &auth.issuer, &["--auth-token-uses", "3"]);
    let dir = tempfile::tempdir().unwrap();
    let scenario = repo_root().join("examples/scenarios/tools.yaml");
    let run = run_in(
        dir.path(),
        &[
            "run",
            scenario.to_str().unwrap(),
            "--url",
            &server.url,
            "--oauth-client-id",
            PUBLIC_ID,
            "--oauth-refresh-token-env",
            REFRESH_VAR,
            "--jobs",
            "1",
            "--json",
            "result.json",
            "--junit",
            "junit.xml",
        ],
        &[(REFRESH_VAR, STORED_REFRESH)],
    );
    assert_both_eras_pass(&run);
    let json = std::fs::read_to_string(dir.path().join("result.json")).unwrap();
    let renewals = json
        .matches("a new one was fetched and the message sent again")
        .count();
    assert!(renewals >= 2, "the run outlived several tokens: {renewals}");
    let written = all_written(dir.path(), &run);
    let lines = {
        let mut auth = auth;
        auth.issued_all()
    };
    let refreshes = lines.iter().filter(|l| l.starts_with("refresh ")).count();
    // Each renewal used the refresh token the last one rotated to (the launcher refuses a
    // used one): as many refresh tokens issued as access tokens.
    assert!(
        refreshes > renewals,
        "{refreshes} refresh tokens for {renewals} renewals"
    );
    let secrets: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.split_once(' ').map(|(_, v)| v))
        .chain([STORED_REFRESH])
        .collect();
    assert_no_secret(&written, &secrets);
}

/// `GET url` over a fresh connection: the status line and the `Location` header.
fn http_get(url: &str) -> (String, Option<String>) {
    let rest = url.strip_prefix("http://").expect("http URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let status = response.lines().next().unwrap_or("").to_string();
    let location = response
        .lines()
        .take_while(|l| !l.is_empty())
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case("location"))
                .map(|(_, v)| v.trim().to_string())
        });
    (status, location)
}

/// `mcpspec auth login URL` with the public client, its cache in `config_dir`, its
/// stdout and stderr piped.
fn spawn_login(config_dir: &Path, url: &str) -> Child {
    Command::new(common::mcpspec())
        .args([
            "auth",
            "login",
            url,
            "--client-id",
            PUBLIC_ID,
            "--wait",
            "60s",
        ])
        .env("MCPSPEC_CONFIG_DIR", config_dir)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `mcpspec auth login URL` driven as a browser would: read the printed authorization URL,
/// GET it (the test authorization server approves at once and redirects), follow the
/// redirect to the loopback listener. The login's exit code and output.
fn login_headlessly(config_dir: &Path, url: &str) -> Run {
    let mut child = spawn_login(config_dir, url);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut stdout = String::new();
    let authorize = loop {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap() == 0 {
            break None;
        }
        stdout.push_str(&line);
        if let Some(at) = line.trim().strip_prefix("http") {
            break Some(format!("http{at}"));
        }
    };
    if let Some(authorize) = authorize {
        let (status, location) = http_get(&authorize);
        assert!(status.contains("302"), "{status}");
        let location = location.expect("a redirect");
        assert!(location.starts_with("http://127.0.0.1:"), "{location}");
        let (status, _) = http_get(&location);
        assert!(status.contains("200"), "{status}");
    }
    let _ = out.read_to_string(&mut stdout);
    let mut stderr = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
    let code = child.wait().unwrap().code().unwrap_or(-1);
    Run {
        code,
        stdout,
        stderr,
    }
}

/// The public client signed in with `auth login` (its cache in the folder returned) to
/// the example server, whose tokens are each refused as expired after 3 requests: runs
/// refresh the cached one.
fn logged_in() -> (AuthServer, HttpServer, tempfile::TempDir, Run) {
    let auth = AuthServer::start_with(3600, &["--public-client-id", PUBLIC_ID]);
    let server = resource_server(&auth.issuer, &auth.issuer, &["--auth-token-uses", "3"]);
    let config = tempfile::tempdir().unwrap();
    let login = login_headlessly(config.path(), &server.url);
    assert_eq!(login.code, 0, "{}", login.all_output());
    (auth, server, config, login)
}

#[test]
fn auth_login_caches_tokens_that_later_runs_reuse_and_refresh_and_logout_removes() {
    let (auth, server, config, login) = logged_in();
    assert!(login.stdout.contains("Signed in:"), "{}", login.stdout);
    assert!(
        login.stdout.contains("code_challenge_method=S256"),
        "{}",
        login.stdout
    );
    let cache = config.path().join("tokens.json");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&cache).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "the cache is the user's alone");
    let first = std::fs::read_to_string(&cache).unwrap();
    // Later runs: no OAuth flags; the cached sign-in is the server's.
    let dir = tempfile::tempdir().unwrap();
    let scenario = repo_root().join("examples/scenarios/tools.yaml");
    let config_env = [("MCPSPEC_CONFIG_DIR", config.path().to_str().unwrap())];
    let args = [
        "run",
        scenario.to_str().unwrap(),
        "--url",
        &server.url,
        "--jobs",
        "1",
        "--json",
        "result.json",
        "--junit",
        "junit.xml",
    ];
    let run = run_in(dir.path(), &args, &config_env);
    assert_both_eras_pass(&run);
    let json = std::fs::read_to_string(dir.path().join("result.json")).unwrap();
    assert!(
        json.contains("a new one was fetched and the message sent again"),
        "the cached token was refreshed mid-run"
    );
    let refreshed = std::fs::read_to_string(&cache).unwrap();
    assert_ne!(first, refreshed, "the refreshed tokens are cached");
    let mut written = all_written(dir.path(), &run);
    written.push_str(&login.all_output());
    let status = run_in(dir.path(), &["auth", "status"], &config_env);
    assert_eq!(status.code, 0, "{}", status.all_output());
    assert!(status.stdout.contains(&server.url), "{}", status.stdout);
    assert!(status.stdout.contains("scope mcp"), "{}", status.stdout);
    written.push_str(&status.all_output());
    let logout = run_in(dir.path(), &["auth", "logout", &server.url], &config_env);
    assert_eq!(logout.code, 0, "{}", logout.all_output());
    written.push_str(&logout.all_output());
    let secrets = auth.all_secrets();
    assert!(secrets.len() >= 3, "{secrets:?}");
    let left = std::fs::read_to_string(&cache).unwrap();
    for secret in &secrets {
        assert!(
            !left.contains(secret.as_str()),
            "logout left a token behind: {left}"
        );
    }
    let refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
    assert_no_secret(&written, &refs);
    // Signed out: the server's 401 again.
    let run = run_in(dir.path(), &args, &config_env);
    assert_eq!(run.code, 3, "{}", run.all_output());
}

#[test]
fn a_login_redirect_with_another_state_is_refused_naming_the_step() {
    let auth = AuthServer::start_with(3600, &["--public-client-id", PUBLIC_ID]);
    let server = resource_server(&auth.issuer, &auth.issuer, &[]);
    let config = tempfile::tempdir().unwrap();
    let mut child = spawn_login(config.path(), &server.url);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let redirect = loop {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "no URL printed");
        if let Some(at) = line.find("redirect_uri=") {
            let value = &line[at + "redirect_uri=".len()..];
            let value = &value[..value.find('&').unwrap_or(value.len())];
            break value.replace("%3A", ":").replace("%2F", "/");
        }
    };
    // A forged redirect: a code, but not the state mcpspec sent.
    let (status, _) = http_get(&format!("{redirect}?code=forged&state=not-the-one"));
    assert!(status.contains("400"), "{status}");
    let mut stderr = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
    assert_eq!(child.wait().unwrap().code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("the authorization") && stderr.contains("`state`"),
        "{stderr}"
    );
    assert!(!config.path().join("tokens.json").exists());
}

#[test]
fn concurrent_logouts_each_remove_their_entry_and_never_tear_the_cache() {
    let config = tempfile::tempdir().unwrap();
    let entries: Vec<String> = (0..12)
        .map(|i| {
            format!(
                r#"{{"resource":"http://127.0.0.1:{}/mcp","issuer":"http://127.0.0.1:1","clientId":"c","accessToken":"access-{i}-5d1c","refreshToken":"refresh-{i}-77ab","expiresAt":4102444800,"scope":"mcp"}}"#,
                20000 + i
            )
        })
        .collect();
    let cache = config.path().join("tokens.json");
    std::fs::write(&cache, format!(r#"{{"entries":[{}]}}"#, entries.join(","))).unwrap();
    // Eight processes at once, each removing its own entry: a lost update (two
    // read-modify-writes interleaved) would bring an entry back, a torn write break the file.
    let children: Vec<_> = (0..8)
        .map(|i| {
            Command::new(common::mcpspec())
                .args([
                    "auth",
                    "logout",
                    &format!("http://127.0.0.1:{}/mcp", 20000 + i),
                ])
                .env("MCPSPEC_CONFIG_DIR", config.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let left = std::fs::read_to_string(&cache).unwrap();
    let json: serde_json::Value = serde_json::from_str(&left).expect("whole JSON");
    let resources: Vec<&str> = json["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["resource"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = (8..12)
        .map(|i| format!("http://127.0.0.1:{}/mcp", 20000 + i))
        .collect();
    assert_eq!(resources, expected);
    let status = run_in(
        config.path(),
        &["auth", "status"],
        &[("MCPSPEC_CONFIG_DIR", config.path().to_str().unwrap())],
    );
    assert_eq!(status.code, 0, "{}", status.all_output());
    assert_eq!(status.stdout.lines().count(), 4, "{}", status.stdout);
    assert!(!status.stdout.contains("access-"), "{}", status.stdout);
    assert!(!status.stdout.contains("refresh-"), "{}", status.stdout);
    let all = run_in(
        config.path(),
        &["auth", "logout"],
        &[("MCPSPEC_CONFIG_DIR", config.path().to_str().unwrap())],
    );
    assert_eq!(all.code, 0, "{}", all.all_output());
    let left = std::fs::read_to_string(&cache).unwrap();
    assert!(
        !left.contains("access-") && !left.contains("refresh-"),
        "{left}"
    );
}

/// A private key (PKCS#8 PEM) and its public key (SPKI PEM), made by node.
fn key_pair(dir: &Path, kind: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let (private, public) = (
        dir.join(format!("{kind}.key")),
        dir.join(format!("{kind}.pub")),
    );
    let options = match kind {
        "rsa" => "{modulusLength: 2048}",
        _ => "{namedCurve: 'P-256'}",
    };
    let script = format!(
        "const c = require('node:crypto'); const k = c.generateKeyPairSync('{}', {options}); \
         require('fs').writeFileSync(process.argv[1], k.privateKey.export({{type: 'pkcs8', format: 'pem'}})); \
         require('fs').writeFileSync(process.argv[2], k.publicKey.export({{type: 'spki', format: 'pem'}}));",
        if kind == "rsa" { "rsa" } else { "ec" }
    );
    let status = Command::new("node")
        .args([
            "-e",
            &script,
            private.to_str().unwrap(),
            public.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success());
    (private, public)
}

#[test]
fn private_key_jwt_client_authentication_passes_and_a_wrong_key_is_refused() {
    let keys = tempfile::tempdir().unwrap();
    for kind in ["rsa", "ec"] {
        let (private, public) = key_pair(keys.path(), kind);
        let (other, _) = key_pair(keys.path(), &format!("{kind}-other"));
        let auth = AuthServer::start_with(
            3600,
            &[
                "--jwt-client-id",
                "mcpspec-jwt",
                "--jwt-public-key",
                public.to_str().unwrap(),
            ],
        );
        let server = resource_server(&auth.issuer, &auth.issuer, &[]);
        let dir = tempfile::tempdir().unwrap();
        let scenario = repo_root().join("examples/scenarios/tools.yaml");
        let run_with = |key: &Path| {
            run_in(
                dir.path(),
                &[
                    "run",
                    scenario.to_str().unwrap(),
                    "--url",
                    &server.url,
                    "--oauth-client-id",
                    "mcpspec-jwt",
                    "--oauth-client-key-file",
                    key.to_str().unwrap(),
                ],
                &[],
            )
        };
        let run = run_with(&private);
        assert_both_eras_pass(&run);
        let wrong = run_with(&other);
        assert_eq!(wrong.code, 3, "{kind}: {}", wrong.all_output());
        assert!(
            wrong.stderr.contains("the token request") && wrong.stderr.contains("invalid_client"),
            "{kind}: {}",
            wrong.stderr
        );
        let key_text = std::fs::read_to_string(&private).unwrap();
        let body_line = key_text.lines().nth(1).unwrap();
        assert_no_secret(&(run.all_output() + &wrong.all_output()), &[body_line]);
    }
}

/// An MCP endpoint whose resource metadata names itself as the authorization server, and
/// whose authorization server metadata says `metadata` (with `{base}` its origin).
fn metadata_server(metadata: &'static str) -> (std::thread::JoinHandle<()>, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let url = format!("{base}/mcp");
    let handle = std::thread::spawn(move || {
        for stream in listener.incoming().take(6) {
            let Ok(mut stream) = stream else { return };
            let mut head = [0u8; 4096];
            let n = stream.read(&mut head).unwrap_or(0);
            let request = String::from_utf8_lossy(&head[..n]).into_owned();
            let path = request.split(' ').nth(1).unwrap_or("");
            let (status, extra, body) = if request.starts_with("POST") {
                (
                    "401 Unauthorized",
                    format!("WWW-Authenticate: Bearer resource_metadata=\"{base}/prm\"\r\n"),
                    String::new(),
                )
            } else if path == "/prm" {
                (
                    "200 OK",
                    String::new(),
                    format!(r#"{{"resource":"{base}/mcp","authorization_servers":["{base}"]}}"#),
                )
            } else if path == "/.well-known/oauth-authorization-server" {
                ("200 OK", String::new(), metadata.replace("{base}", &base))
            } else {
                ("404 Not Found", String::new(), String::new())
            };
            let reply = format!(
                "HTTP/1.1 {status}\r\n{extra}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    (handle, url)
}

#[test]
fn authorization_server_metadata_with_another_issuer_is_refused_naming_the_step() {
    let (_server, url) =
        metadata_server(r#"{"issuer":"http://127.0.0.1:1","token_endpoint":"{base}/token"}"#);
    let dir = tempfile::tempdir().unwrap();
    let run = run_signed_in(dir.path(), &url, CLIENT_SECRET, &["--timeout", "5s"]);
    assert_eq!(run.code, 3, "{}", run.all_output());
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", run.stderr);
    assert!(
        errors[0].contains("the authorization server metadata") && errors[0].contains("`issuer`"),
        "{}",
        errors[0]
    );
    assert_no_secret(&run.all_output(), &[CLIENT_SECRET]);
}

#[test]
fn a_token_endpoint_on_another_origin_than_the_issuer_is_refused_before_the_secret_goes_there() {
    // The secret would go to a listener the test holds: nothing may arrive there.
    let thief = TcpListener::bind("127.0.0.1:0").unwrap();
    thief.set_nonblocking(true).unwrap();
    let metadata: &'static str = Box::leak(
        format!(
            r#"{{"issuer":"{{base}}","token_endpoint":"http://{}/token"}}"#,
            thief.local_addr().unwrap()
        )
        .into_boxed_str(),
    );
    let (_server, url) = metadata_server(metadata);
    let dir = tempfile::tempdir().unwrap();
    let run = run_signed_in(dir.path(), &url, CLIENT_SECRET, &["--timeout", "5s"]);
    assert_eq!(run.code, 3, "{}", run.all_output());
    assert!(
        run.stderr.contains("the authorization server metadata")
            && run.stderr.contains("another origin"),
        "{}",
        run.stderr
    );
    assert!(thief.accept().is_err(), "the token endpoint was contacted");
    assert_no_secret(&run.all_output(), &[CLIENT_SECRET]);
}

#[test]
fn auth_blocks_of_the_new_grants_are_checked_at_their_line() {
    let run = validate_config(
        "targets:\n  ci:\n    url: http://127.0.0.1:9/mcp\n    auth:\n      grant: refresh_token\n      clientId: x\n  jwt:\n    url: http://127.0.0.1:9/mcp\n    auth:\n      grant: client_credentials\n      clientId: x\n      clientKeyFile: k.pem\n      clientSecretEnv: S\n  person:\n    url: http://127.0.0.1:9/mcp\n    auth:\n      grant: authorization_code\n      clientId: x\n",
    );
    assert!(
        run.stderr.contains("mcpspec.yaml:5:")
            && run
                .stderr
                .contains("needs one of `refreshTokenEnv` and `refreshTokenFile`"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("mcpspec.yaml:10:") && run.stderr.contains("`clientKeyFile`"),
        "{}",
        run.stderr
    );
    // `authorization_code` needs no secret: the person signs in with `auth login`.
    assert!(!run.stderr.contains("`person`"), "{}", run.stderr);
}

#[test]
fn a_client_id_alone_without_a_cached_sign_in_says_to_log_in() {
    let config = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = run_in(
        dir.path(),
        &[
            "call",
            "tools/list",
            "--url",
            "http://127.0.0.1:9/mcp",
            "--oauth-client-id",
            PUBLIC_ID,
        ],
        &[("MCPSPEC_CONFIG_DIR", config.path().to_str().unwrap())],
    );
    assert_eq!(run.code, 2, "{}", run.all_output());
    assert!(
        run.stderr
            .contains("mcpspec auth login http://127.0.0.1:9/mcp"),
        "{}",
        run.stderr
    );
}

#[test]
fn auth_takes_a_target_of_the_config_file_and_status_shows_no_token() {
    let config = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mcpspec.yaml"),
        "targets:\n  staging:\n    url: http://127.0.0.1:9/mcp\n    auth:\n      grant: authorization_code\n      clientId: mcpspec-cli\n",
    )
    .unwrap();
    std::fs::write(
        config.path().join("tokens.json"),
        r#"{"entries":[{"resource":"http://127.0.0.1:9/mcp","issuer":"http://127.0.0.1:1","clientId":"mcpspec-cli","accessToken":"access-3f0a","refreshToken":"refresh-81bd","expiresAt":1000,"scope":"mcp"}]}"#,
    )
    .unwrap();
    let env = [("MCPSPEC_CONFIG_DIR", config.path().to_str().unwrap())];
    let status = run_in(dir.path(), &["auth", "status", "--format", "json"], &env);
    assert_eq!(status.code, 0, "{}", status.all_output());
    let json: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    let entry = &json["signedIn"][0];
    assert_eq!(entry["resource"], "http://127.0.0.1:9/mcp");
    assert_eq!(entry["expired"], true);
    assert_eq!(entry["refreshable"], true);
    assert_no_secret(&status.all_output(), &["access-3f0a", "refresh-81bd"]);
    let unknown = run_in(dir.path(), &["auth", "logout", "production"], &env);
    assert_eq!(unknown.code, 2, "{}", unknown.all_output());
    assert!(
        unknown.stderr.contains("targets: staging"),
        "{}",
        unknown.stderr
    );
    let logout = run_in(dir.path(), &["auth", "logout", "staging"], &env);
    assert_eq!(logout.code, 0, "{}", logout.all_output());
    assert!(
        logout
            .stdout
            .contains("Signed out of http://127.0.0.1:9/mcp"),
        "{}",
        logout.stdout
    );
    let left = std::fs::read_to_string(config.path().join("tokens.json")).unwrap();
    assert!(
        !left.contains("access-3f0a") && !left.contains("refresh-81bd"),
        "{left}"
    );
}

#[test]
fn two_runs_renewing_one_cached_sign_in_at_once_both_pass() {
    // Refresh tokens are good once: two runs that refreshed with the same refresh token
    // would see one of them refused.
    let (_auth, server, config, _) = logged_in();
    let scenario = repo_root().join("examples/scenarios/tools.yaml");
    let runs: Vec<_> = (0..2)
        .map(|_| {
            Command::new(common::mcpspec())
                .args(["run", scenario.to_str().unwrap(), "--url", &server.url])
                .args(["--jobs", "1"])
                .env("MCPSPEC_CONFIG_DIR", config.path())
                .env("NO_COLOR", "1")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for run in runs {
        let out = run.wait_with_output().unwrap();
        let run = Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        assert_both_eras_pass(&run);
    }
    let cache = std::fs::read_to_string(config.path().join("tokens.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&cache).expect("the cache is whole JSON");
}

/// The `security-auth-flow` suite of the security pack against the example server behind
/// the test authorization server, signed in with `client_credentials`, in `era`: step →
/// (status, message), and everything written.
fn auth_flow_outcomes(
    auth: &AuthServer,
    defect: Option<&str>,
    era: &str,
) -> (BTreeMap<String, (String, String)>, String) {
    let mut extra = vec![];
    if let Some(d) = defect {
        extra.extend(["--defect", d]);
    }
    let server = resource_server(&auth.issuer, &auth.issuer, &extra);
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "security",
        "--filter",
        "security-auth-flow",
        "--url",
        &server.url,
        "--era",
        era,
        "--oauth-client-id",
        CLIENT_ID,
        "--oauth-client-secret-env",
        SECRET_VAR,
        "--json",
        "result.json",
    ];
    let run = run_in(dir.path(), &args, &[(SECRET_VAR, CLIENT_SECRET)]);
    let written = all_written(dir.path(), &run);
    let suite = auth_flow_suite(dir.path(), &run);
    let mut out = BTreeMap::new();
    for step in suite["steps"].as_array().unwrap() {
        let outcome = &step["outcome"];
        let message = [
            &outcome["reason"],
            &outcome["message"],
            &outcome["failures"][0]["message"],
        ]
        .into_iter()
        .find_map(serde_json::Value::as_str)
        .unwrap_or("")
        .to_string();
        out.insert(
            step["name"].as_str().unwrap().to_string(),
            (outcome["status"].as_str().unwrap().to_string(), message),
        );
    }
    (out, written)
}

/// The `security-auth-flow` suite of the JSON report `run` wrote to `dir`.
fn auth_flow_suite(dir: &Path, run: &Run) -> serde_json::Value {
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("result.json"))
            .unwrap_or_else(|e| panic!("no report ({e}): {}", run.all_output())),
    )
    .unwrap();
    report["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scenario"] == "security-auth-flow")
        .unwrap_or_else(|| panic!("no security-auth-flow suite: {}", run.all_output()))
        .clone()
}

const AUTH_FLOW_CHECKS: [&str; 6] = [
    "resource_metadata_served",
    "authorization_server_metadata_valid",
    "pkce_s256_advertised",
    "other_resource_token_rejected",
    "insufficient_scope_step_up",
    "query_token_rejected",
];

/// Waits out a token, so it needs tokens that live a few seconds (see below).
const EXPIRY_CHECK: &str = "expired_token_refused";

#[test]
fn the_auth_flow_suite_passes_on_the_sound_server_in_both_eras() {
    let auth = AuthServer::start(3600);
    for era in ["legacy", "modern"] {
        let (outcomes, _) = auth_flow_outcomes(&auth, None, era);
        for check in AUTH_FLOW_CHECKS {
            let (status, message) = outcomes
                .get(check)
                .unwrap_or_else(|| panic!("{era}: no step {check}: {outcomes:?}"));
            assert_eq!(status, "passed", "{era}: {check}: {message}");
        }
        let (status, reason) = &outcomes[EXPIRY_CHECK];
        assert_eq!(status, "skipped", "{reason}");
        assert!(
            reason.contains("tokens live 3600s: too long to wait"),
            "{reason}"
        );
    }
    // The second tokens (another resource, no scope) and the run's own: none shows.
    let (_, written) = auth_flow_outcomes(&auth, None, "legacy");
    let tokens = auth.tokens();
    assert!(
        tokens.len() >= 3,
        "the run's token and the two others: {tokens:?}"
    );
    let mut secrets = vec![CLIENT_SECRET];
    secrets.extend(tokens.iter().map(String::as_str));
    assert_no_secret(&written, &secrets);
}

#[test]
fn each_auth_flow_weakness_fails_its_check_and_nothing_else_in_the_suite() {
    let cases = common::table::read_as(
        "tests/defects/auth-flow.tsv",
        &["defect", "check", "status"],
        |row| {
            (
                row.get("defect").to_string(),
                row.get("check").to_string(),
                row.one_of("status", &["failed", "warning"]).to_string(),
            )
        },
    );
    let auth = AuthServer::start(3600);
    let mut problems = Vec::new();
    for (defect, check, want) in &cases {
        let (outcomes, _) = auth_flow_outcomes(&auth, Some(defect), "legacy");
        for (step, (status, message)) in &outcomes {
            let expected = match step.as_str() {
                step if step == check => want.as_str(),
                EXPIRY_CHECK => "skipped",
                _ => "passed",
            };
            if status != expected {
                problems.push(format!(
                    "--defect {defect}: {step} is {status} ({message}), expected {expected}"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// With tokens that live 2 s, the expiry check waits one out: the sound server refuses it
/// with 401 and a challenge, `auth-ignore-expiry` takes it.
#[test]
fn a_short_lived_token_is_waited_out_and_must_be_refused_once_expired() {
    let auth = AuthServer::start(2);
    let (outcomes, _) = auth_flow_outcomes(&auth, None, "legacy");
    let (status, message) = &outcomes[EXPIRY_CHECK];
    assert_eq!(status, "passed", "{message}");
    let (outcomes, _) = auth_flow_outcomes(&auth, Some("auth-ignore-expiry"), "legacy");
    let (status, message) = &outcomes[EXPIRY_CHECK];
    assert_eq!(status, "failed", "{message}");
    assert!(message.contains("does not check `exp`"), "{message}");
}

#[test]
fn without_an_auth_block_the_flow_checks_skip_with_the_reason() {
    let auth = AuthServer::start(3600);
    let server = resource_server(&auth.issuer, &auth.issuer, &[]);
    let dir = tempfile::tempdir().unwrap();
    let run = run_in(
        dir.path(),
        &[
            "run",
            "security",
            "--url",
            &server.url,
            "--json",
            "result.json",
        ],
        &[],
    );
    let suite = auth_flow_suite(dir.path(), &run);
    for step in suite["steps"].as_array().unwrap() {
        let outcome = &step["outcome"];
        assert_eq!(outcome["status"], "skipped", "{step:#}");
        let reason = outcome["reason"].as_str().unwrap();
        assert!(
            reason.contains("no OAuth sign-in") || reason.contains("needs a valid token"),
            "{reason}"
        );
    }
}

/// `mcpspec init --url` with the OAuth flags signs in, and the project it writes names the
/// client and where its secret is read — never the secret — and runs as written.
#[test]
fn init_with_the_oauth_flags_writes_the_auth_block_and_the_project_runs() {
    let auth = AuthServer::start(3600);
    let server = resource_server(&auth.issuer, &auth.issuer, &[]);
    let dir = tempfile::tempdir().unwrap();
    let init = run_in(
        dir.path(),
        &[
            "init",
            "--url",
            &server.url,
            "--oauth-client-id",
            CLIENT_ID,
            "--oauth-client-secret-env",
            SECRET_VAR,
        ],
        &[(SECRET_VAR, CLIENT_SECRET)],
    );
    assert_eq!(init.code, 0, "{}", init.all_output());
    let config = std::fs::read_to_string(dir.path().join("mcpspec.yaml")).unwrap();
    assert!(
        config.contains(&format!(
            "    auth:\n      grant: client_credentials\n      clientId: \"{CLIENT_ID}\"\n      clientSecretEnv: {SECRET_VAR}"
        )),
        "{config}"
    );
    let run = run_in(dir.path(), &["run"], &[(SECRET_VAR, CLIENT_SECRET)]);
    assert_eq!(run.code, 0, "{}", run.all_output());
    let mut written = init.all_output() + &run.all_output();
    for entry in walkdir(dir.path()) {
        written.push_str(&std::fs::read_to_string(entry).unwrap_or_default());
    }
    let tokens = auth.tokens();
    let mut secrets = vec![CLIENT_SECRET];
    secrets.extend(tokens.iter().map(String::as_str));
    assert_no_secret(&written, &secrets);
}

/// Without credentials, init against a server behind OAuth ends with the 401 and says what
/// it found: the authorization server, its grants, the command and the `auth:` block with
/// placeholders for the client.
#[test]
fn init_without_credentials_names_the_authorization_and_the_auth_block() {
    let auth = AuthServer::start(3600);
    let server = resource_server(&auth.issuer, &auth.issuer, &[]);
    let dir = tempfile::tempdir().unwrap();
    let init = run_in(dir.path(), &["init", "--url", &server.url], &[]);
    assert_ne!(init.code, 0, "{}", init.all_output());
    let said = &init.stderr;
    assert!(said.contains("HTTP 401"), "{said}");
    assert!(
        said.contains(&format!(
            "the server is behind OAuth: its authorization server {} supports the grants client_credentials",
            auth.issuer
        )),
        "{said}"
    );
    assert!(
        said.contains("--oauth-client-id CLIENT_ID --oauth-client-secret-env MCP_CLIENT_SECRET"),
        "{said}"
    );
    assert!(
        said.contains("      clientSecretEnv: MCP_CLIENT_SECRET"),
        "{said}"
    );
    assert!(!dir.path().join("mcpspec.yaml").exists());
}

/// Every file under `dir`.
fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}
