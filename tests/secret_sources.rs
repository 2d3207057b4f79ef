//! The secret scan, as a matrix: every source of a secret the book names
//! (`tests/secrets/sources.tsv`) × every output (console, JSON, JUnit, HTML, SARIF, the
//! files `init` writes) × every truncation point (the server echoes the secret after a
//! padding that puts each of mcpspec's cuts — 60, 120, 300, 500 characters — at each of
//! its characters). No prefix of 4 characters or more of the secret may show anywhere.

mod common;

use std::path::{Path, PathBuf};

use common::{HttpServer, Run, run_in, stdio_target, table};

/// Random-looking, and no secret *shape*: only its source makes it a secret.
const SECRET: &str = "Zq7Sx9Kp2Lm4Nt8V";
/// Where mcpspec cuts the excerpts a failure shows.
const CUTS: [usize; 4] = [60, 120, 300, 500];

/// Every prefix of [`SECRET`] of 4 characters or more that occurs in `text`.
fn prefixes_in(text: &str) -> Vec<String> {
    (4..=SECRET.len())
        .map(|n| &SECRET[..n])
        .filter(|p| text.contains(p))
        .map(str::to_string)
        .collect()
}

/// Steps that echo `expr` (a template that renders the secret) after each padding, and
/// fail on it, so every cut falls inside it somewhere.
fn echo_steps(expr: &str) -> String {
    let mut steps = String::new();
    for cut in CUTS {
        for back in 0..SECRET.len() + 4 {
            let pad = "a".repeat(cut.saturating_sub(back));
            steps.push_str(&format!(
                "  - name: cut {cut} at {back}\n    request: {{ method: tools/call, params: {{ name: echo, arguments: {{ text: \"{pad}{expr}\" }} }} }}\n    expect:\n      - {{ path: \"$.content[0].text\", equals: nope }}\n"
            ));
        }
    }
    steps
}

struct Case {
    dir: tempfile::TempDir,
    /// What `mcpspec run` is given (scenario or pack path first).
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// An HTTP example server, kept alive for the run.
    _server: Option<HttpServer>,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A pack declaring `name` (not `secret: true`: its name alone makes it one), whose
/// scenario echoes it; `default` gives it a default.
fn pack(dir: &Path, name: &str, default: Option<&str>) -> PathBuf {
    let root = dir.join("leaky");
    let default = default.map_or(String::new(), |d| format!(", default: \"{d}\""));
    write(
        &root.join("pack.yaml"),
        &format!(
            "name: leaky\nversion: 1.0.0\nparameters:\n  {name}: {{ type: string{default} }}\n"
        ),
    );
    write(
        &root.join("scenarios/echo.yaml"),
        &format!(
            "scenario: echo\nsteps:\n{}",
            echo_steps(&format!("{{{{ {name} }}}}"))
        ),
    );
    root
}

fn case(kind: &str, name: &str) -> Case {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("echo.yaml");
    let plain = |expr: &str, vars: &str| {
        write(
            &scenario,
            &format!("scenario: echo\n{vars}steps:\n{}", echo_steps(expr)),
        );
        scenario.display().to_string()
    };
    let stdio = || vec!["--stdio".to_string(), stdio_target(&[])];
    let var = format!("{{{{ {name} }}}}");
    let (mut args, env, server): (Vec<String>, Vec<(String, String)>, Option<HttpServer>) =
        match kind {
            "set" => (
                vec![plain(&var, ""), "--set".into(), format!("{name}={SECRET}")],
                vec![],
                None,
            ),
            "set-env" => (
                vec![
                    plain(&var, ""),
                    "--set".into(),
                    format!("{name}=env:LEAKY_VALUE"),
                ],
                vec![("LEAKY_VALUE".into(), SECRET.into())],
                None,
            ),
            "config" => {
                write(
                    &dir.path().join("mcpspec.yaml"),
                    &format!("parameters:\n  {name}: \"{SECRET}\"\n"),
                );
                (vec![plain(&var, "")], vec![], None)
            }
            "env" => (
                vec![pack(dir.path(), name, None).display().to_string()],
                vec![(
                    format!("MCPSPEC_PARAM_{}", name.to_ascii_uppercase()),
                    SECRET.into(),
                )],
                None,
            ),
            "default" => (
                vec![pack(dir.path(), name, Some(SECRET)).display().to_string()],
                vec![],
                None,
            ),
            "with" => {
                pack(dir.path(), name, None);
                let top = dir.path().join("top");
                write(
                    &top.join("pack.yaml"),
                    &format!(
                        "name: top\nversion: 1.0.0\nimports:\n  - pack: ../leaky\n    with: {{ {name}: \"{SECRET}\" }}\n"
                    ),
                );
                (vec![top.display().to_string()], vec![], None)
            }
            "vars" => (
                vec![plain(&var, &format!("vars: {{ {name}: \"{SECRET}\" }}\n"))],
                vec![],
                None,
            ),
            "vars-template" => (
                vec![
                    plain(
                        &var,
                        &format!("vars: {{ {name}: \"{{{{ half }}}}{}\" }}\n", &SECRET[8..]),
                    )
                    .to_string(),
                    "--set".into(),
                    format!("half={}", &SECRET[..8]),
                ],
                vec![],
                None,
            ),
            "userinfo" | "query" => {
                let server = HttpServer::start(&[]);
                let url = match kind {
                    "userinfo" => server
                        .url
                        .replacen("://", &format!("://alice:{SECRET}@"), 1),
                    _ => format!("{}?{name}={SECRET}", server.url),
                };
                // The URL is the secret; the steps echo a harmless text.
                return Case {
                    args: vec![plain("harmless", ""), "--url".into(), url],
                    env: vec![],
                    dir,
                    _server: Some(server),
                };
            }
            other => panic!("unknown kind `{other}` in tests/secrets/sources.tsv"),
        };
    args.splice(1..1, stdio());
    Case {
        args,
        env,
        dir,
        _server: server,
    }
}

/// Every output of `mcpspec run` for `case`, by name.
fn outputs(case: &Case) -> Vec<(String, String)> {
    let out = |name: &str| case.dir.path().join(name);
    let mut args: Vec<String> = vec!["run".into()];
    args.extend(case.args.iter().cloned());
    for (flag, file) in [
        ("--json", "r.json"),
        ("--junit", "r.xml"),
        ("--html", "r.html"),
        ("--sarif", "r.sarif"),
    ] {
        args.push(flag.into());
        args.push(out(file).display().to_string());
    }
    args.extend(["--verbose".into(), "--timeout".into(), "10s".into()]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let env: Vec<(&str, &str)> = case
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let run: Run = run_in(case.dir.path(), &argv, &env);
    assert_eq!(run.code, 1, "the echo steps fail: {run:?}");
    let mut all = vec![
        ("stdout".to_string(), run.stdout.clone()),
        ("stderr".to_string(), run.stderr.clone()),
    ];
    for file in ["r.json", "r.xml", "r.html", "r.sarif"] {
        let text = std::fs::read_to_string(out(file)).unwrap_or_default();
        assert!(!text.is_empty(), "{file} written: {run:?}");
        all.push((file.to_string(), text));
    }
    all
}

#[test]
fn no_source_of_a_secret_shows_in_any_output_at_any_cut() {
    let rows = table::read("tests/secrets/sources.tsv", &["source", "kind", "name"]);
    let mut leaks = Vec::new();
    for row in &rows {
        let case = case(row.get("kind"), row.get("name"));
        for (output, text) in outputs(&case) {
            let found = prefixes_in(&text);
            if !found.is_empty() {
                let at = text.find(&found[0]).unwrap_or(0);
                let around: String = text[at.saturating_sub(80)..].chars().take(200).collect();
                leaks.push(format!(
                    "{} ({}): {output} shows {:?}: …{around}…",
                    row.get("source"),
                    row.at,
                    found.last().unwrap()
                ));
            }
        }
    }
    assert!(leaks.is_empty(), "{}", leaks.join("\n"));
}

/// `init` against a URL with credentials writes none of them (mcpspec.yaml, packs).
#[test]
fn init_writes_no_url_credential() {
    let server = HttpServer::start(&[]);
    for url in [
        server
            .url
            .replacen("://", &format!("://alice:{SECRET}@"), 1),
        format!("{}?token={SECRET}", server.url),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let run = run_in(
            dir.path(),
            &["init", project.to_str().unwrap(), "--url", &url],
            &[],
        );
        assert_eq!(run.code, 0, "{run:?}");
        let shown = format!("{}{}", run.stdout, run.stderr);
        assert!(prefixes_in(&shown).is_empty(), "{run:?}");
        for entry in walk(&project) {
            let text = std::fs::read_to_string(&entry).unwrap_or_default();
            assert!(
                prefixes_in(&text).is_empty(),
                "{} holds the secret:\n{text}",
                entry.display()
            );
        }
        let config = std::fs::read_to_string(project.join("mcpspec.yaml")).unwrap();
        assert!(config.contains("url: "), "{config}");
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
