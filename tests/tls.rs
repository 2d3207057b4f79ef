//! HTTPS works with the TLS stack mcpspec is built with (rustls + the `ring` provider,
//! installed when the HTTP client is built): an `https://` target gets a TLS ClientHello.
//! Without a process-level crypto provider, reqwest's client builder panics instead —
//! the run would die before any byte is sent. No network and no certificate: a local
//! TCP listener reads the first record and hangs up, so the run ends with a connection
//! error, not a panic.

mod common;

use std::io::Read;
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use common::{run, scenario_file};

const SCENARIO: &str =
    "scenario: tls\nsteps:\n  - name: list\n    request: { method: tools/list }\n";

#[test]
fn https_target_gets_a_tls_client_hello() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    // Every connection (the client may try a fresh one): read its first bytes, hang up.
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let _ = tx.send(buf[..n].to_vec());
        }
    });

    let (_dir, path) = scenario_file("tls.yaml", SCENARIO);
    let url = format!("https://127.0.0.1:{port}/mcp");
    let r = run(&[
        "run",
        path.to_str().unwrap(),
        "--url",
        &url,
        "--era",
        "legacy",
    ]);
    assert!(!r.all_output().contains("panicked"), "{r:?}");
    assert_eq!(
        r.code, 4,
        "a target that fails the TLS handshake is unreachable: {r:?}"
    );

    let first = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("mcpspec connected to the https:// target");
    // TLS record: content type 22 (handshake), version 3.x, then handshake type 1.
    assert!(
        first.len() > 5 && first[0] == 0x16 && first[1] == 0x03 && first[5] == 0x01,
        "expected a TLS ClientHello, got {:02x?}",
        &first[..first.len().min(16)]
    );
}

/// https:// against a server that speaks plain HTTP: the reason names the likely fix, not
/// rustls's "corrupt message of type InvalidContentType" alone.
#[test]
fn https_against_a_plain_http_server_suggests_http() {
    let server = common::HttpServer::start(&[]);
    let url = server.url.replacen("http://", "https://", 1);
    let (_dir, path) = scenario_file("tls.yaml", SCENARIO);
    let r = run(&[
        "run",
        path.to_str().unwrap(),
        "--url",
        &url,
        "--era",
        "legacy",
    ]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(
        r.all_output()
            .contains("the server does not speak TLS here; did you mean http://?"),
        "{r:?}"
    );
}

/// A URL without its scheme is a usage mistake (exit 2) told with its fix, not a connection
/// failure (it was exit 4, "relative URL without a base").
#[test]
fn url_without_a_scheme_is_a_usage_error() {
    let (_dir, path) = scenario_file("tls.yaml", SCENARIO);
    for (url, why) in [
        ("127.0.0.1:8080/mcp", "has no scheme"),
        ("localhost:8080/mcp", "has no scheme"),
        ("ftp://127.0.0.1/mcp", "has the scheme `ftp:`"),
    ] {
        let r = run(&["run", path.to_str().unwrap(), "--url", url]);
        assert_eq!(r.code, 2, "{url}: {r:?}");
        assert!(r.stderr.contains(why), "{url}: {r:?}");
        assert!(r.stderr.contains("add http://"), "{url}: {r:?}");
    }
    let r = run(&["call", "tools/list", "--url", "127.0.0.1:8080/mcp"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("--url http://127.0.0.1:8080/mcp"),
        "{r:?}"
    );
}
