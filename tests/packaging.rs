//! The packages a user installs without Rust (issue #26), built by the one script the
//! release workflow runs (`packaging/package.py`) from the binary `cargo test` already
//! built, installed the way a user installs them, with no Rust on PATH:
//! - the wheel into a fresh venv (pip), the README's example run, a clean uninstall;
//! - the npm packages `npm pack`ed, installed from the tarballs into a fresh folder, run
//!   through `npx`;
//! - the static binary of `scripts/build-static`, when it was built: no shared library,
//!   runs with an empty environment and in a root holding nothing but itself.
//!
//! And the CI files users copy: the GitHub Action, the release workflow, the GitLab
//! template and the recipes, linted against their schemas (check-jsonschema's vendored
//! SchemaStore schemas, actionlint), every mcpspec command in them a documented one, the
//! version in one place.
// Unix only: the linters run from .venv/bin; the static binary is Linux's.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// PATH for the installed tools: system folders only (no `~/.cargo/bin`, no rustup).
const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

fn path_with(dir: &Path) -> String {
    format!("{}:{SYSTEM_PATH}", dir.display())
}

/// `TRIPLE` of this machine as packaging/package.py's table names it.
fn host_target() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-gnu",
        ("linux", "aarch64") => "aarch64-unknown-linux-gnu",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        other => panic!("no release target for {other:?}"),
    }
}

#[track_caller]
fn ok(out: Output, what: &str) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{text}",
        out.status
    );
    text
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    ok(out, what)
}

/// `packaging/package.py KIND` on the test build of mcpspec; the paths it wrote.
fn package(kind: &str, out: &Path, extra: &[&str]) -> Vec<PathBuf> {
    let root = common::repo_root();
    let text = run(
        Command::new("python3")
            .arg(root.join("packaging/package.py"))
            .arg(kind)
            .arg("--binary")
            .arg(common::mcpspec())
            .args(["--target", host_target(), "--out"])
            .arg(out)
            .args(extra),
        &format!("package.py {kind}"),
    );
    text.lines().map(PathBuf::from).collect()
}

/// The files under `dir` (none when it does not exist).
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// The README's first command with `mcpspec` as installed: the example pack against the
/// example server, both eras, a JUnit report.
fn example_run(cmd: &mut Command, dir: &Path) {
    let junit = dir.join("junit.xml");
    let text = run(
        cmd.arg("run")
            .arg(common::repo_root().join("examples/scenarios"))
            .arg("--stdio")
            .arg(common::example_server())
            .args(["--era", "legacy", "--era", "2026-07-28", "--junit"])
            .arg(&junit)
            .current_dir(dir),
        "the example run",
    );
    assert!(text.contains("passed"), "no summary:\n{text}");
    common::assert_valid_junit(&junit);
}

#[test]
fn the_wheel_installs_into_a_fresh_venv_runs_the_example_pack_and_uninstalls_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    // The test build is dynamically linked: tagged for this machine only. The release
    // wheels carry the static binary and the target's manylinux/musllinux tags.
    let tag = format!("linux_{}", std::env::consts::ARCH);
    let extra: &[&str] = if cfg!(target_os = "linux") {
        &["--tag", &tag]
    } else {
        &[]
    };
    let wheels = package("wheel", &tmp.path().join("dist"), extra);
    let [wheel] = wheels.as_slice() else {
        panic!("one wheel expected: {wheels:?}")
    };
    assert!(
        wheel
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(&format!("mcpspec-{}-py3-none-", version())),
        "{}",
        wheel.display()
    );

    let venv = tmp.path().join("venv");
    run(
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        "python3 -m venv",
    );
    let bin = venv.join("bin");
    let pip = |args: &[&str], what: &str| {
        run(
            Command::new(bin.join("python"))
                .args(["-m", "pip", "--disable-pip-version-check", "--no-input"])
                .args(args)
                .env("PATH", path_with(&bin))
                .env("PIP_NO_INDEX", "1"),
            what,
        )
    };
    pip(
        &["install", "--no-deps", &wheel.display().to_string()],
        "pip install",
    );
    let installed = bin.join("mcpspec");
    let schema = venv.join("share/mcpspec/schema/scenario.schema.json");
    assert!(
        installed.is_file(),
        "pip put no mcpspec in {}",
        bin.display()
    );
    assert!(schema.is_file(), "the schemas are not installed");
    let shown = run(
        Command::new("mcpspec")
            .arg("--version")
            .env_clear()
            .env("PATH", path_with(&bin)),
        "mcpspec --version (from PATH)",
    );
    assert!(
        shown.starts_with(&format!("mcpspec {} (commit ", version())),
        "{shown}"
    );
    example_run(
        Command::new(&installed).env("PATH", path_with(&bin)),
        tmp.path(),
    );

    pip(&["uninstall", "--yes", "mcpspec"], "pip uninstall");
    assert!(!installed.exists(), "pip uninstall left the binary behind");
    // pip removes every file it installed (RECORD) and may leave the emptied folder.
    let share = venv.join("share/mcpspec");
    let left_files = walk(&share);
    assert!(
        left_files.is_empty(),
        "pip uninstall left files behind: {left_files:?}"
    );
    let left = pip(&["list", "--format=freeze"], "pip list");
    assert!(!left.contains("mcpspec"), "still listed:\n{left}");
}

#[test]
fn the_npm_packages_install_from_their_tarballs_and_run_through_npx() {
    let tmp = tempfile::tempdir().unwrap();
    let folders = package("npm", &tmp.path().join("dist"), &[]);
    assert_eq!(
        folders.len(),
        2,
        "the wrapper and one platform package: {folders:?}"
    );
    let tarballs = tmp.path().join("tarballs");
    std::fs::create_dir(&tarballs).unwrap();
    for folder in &folders {
        run(
            Command::new("npm")
                .args(["pack", "--silent", "--pack-destination"])
                .arg(&tarballs)
                .arg(folder),
            "npm pack",
        );
    }
    let mut packed: Vec<PathBuf> = std::fs::read_dir(&tarballs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    packed.sort();
    assert_eq!(packed.len(), 2, "{packed:?}");

    // A fresh project, as a user's: the tarballs installed with no registry access (the
    // wrapper's optional dependency on the platform package is met by the second tarball).
    let app = tmp.path().join("app");
    std::fs::create_dir(&app).unwrap();
    std::fs::write(
        app.join("package.json"),
        r#"{ "name": "app", "version": "1.0.0", "private": true }"#,
    )
    .unwrap();
    let npm_path = SYSTEM_PATH.to_string();
    run(
        Command::new("npm")
            .args([
                "install",
                "--offline",
                "--no-audit",
                "--no-fund",
                "--save-dev",
            ])
            .args(&packed)
            .current_dir(&app)
            .env("PATH", &npm_path),
        "npm install of the tarballs",
    );
    assert!(
        app.join("node_modules/mcpspec/schema/scenario.schema.json")
            .is_file(),
        "the schemas are not in the package"
    );
    let npx = || {
        let mut cmd = Command::new("npx");
        cmd.args(["--no-install", "mcpspec"])
            .current_dir(&app)
            .env("PATH", &npm_path);
        cmd
    };
    let shown = run(npx().arg("--version"), "npx mcpspec --version");
    assert!(
        shown.contains(&format!("mcpspec {} (commit ", version())),
        "{shown}"
    );
    example_run(&mut npx(), &app);
    // The exit code goes through the launcher (2: invalid input).
    let bad = npx()
        .args(["validate", "no-such-file.yaml"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
}

/// The static release binary, when `scripts/build-static` built it (`.ci/run` does).
fn static_binary() -> Option<PathBuf> {
    let path = common::repo_root().join(format!("target/{}/release/mcpspec", host_target()));
    path.is_file().then_some(path)
}

#[test]
#[cfg(target_os = "linux")]
fn the_static_binary_needs_no_shared_library_and_no_environment() {
    let Some(binary) = static_binary() else {
        eprintln!(
            "skipped: no static binary (target/{}/release/mcpspec): scripts/build-static builds \
             it (a second full release build: .ci/run and the release workflow run it)",
            host_target()
        );
        return;
    };
    let ldd = Command::new("ldd").arg(&binary).output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&ldd.stdout),
        String::from_utf8_lossy(&ldd.stderr)
    );
    assert!(
        said.contains("not a dynamic executable") || said.contains("statically linked"),
        "ldd lists shared libraries:\n{said}"
    );
    let shown = run(
        Command::new(&binary).arg("--version").env_clear(),
        "the static binary with an empty environment",
    );
    assert!(shown.starts_with("mcpspec "), "{shown}");
    let tmp = tempfile::tempdir().unwrap();
    example_run(Command::new(&binary).env_clear(), tmp.path());

    // A root holding nothing but the binary: no libc, no /etc, no /tmp, no /dev (the hash
    // seeds come from the getrandom() call, not /dev/urandom: scripts/build-static).
    // The built-in pack is inside the binary.
    let root = tmp.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::copy(&binary, root.join("mcpspec")).unwrap();
    // Found on PATH here: the command itself runs with an empty environment.
    let chroot = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("chroot"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("/usr/sbin/chroot"));
    let chrooted = Command::new(chroot)
        .arg(&root)
        .args(["/mcpspec", "validate", "conformance"])
        .env_clear()
        .output();
    match chrooted {
        Ok(out) if out.status.success() => {}
        // Not root (a developer's machine): say so; CI runs as root.
        Ok(out) if String::from_utf8_lossy(&out.stderr).contains("Operation not permitted") => {
            eprintln!("skipped the empty root: chroot needs root");
        }
        Ok(out) => panic!("in an empty root: {out:?}"),
        Err(e) => eprintln!("skipped the empty root: no chroot ({e})"),
    }
}

/// The CI files users copy or call, with the schema each is checked against.
const CI_FILES: &[(&str, &str)] = &[
    ("action.yml", "vendor.github-actions"),
    (".github/workflows/release.yml", "vendor.github-workflows"),
    ("examples/ci/github-actions.yml", "vendor.github-workflows"),
    (
        "examples/ci/github-actions-remote-packs.yml",
        "vendor.github-workflows",
    ),
    ("ci/mcpspec.gitlab-ci.yml", "vendor.gitlab-ci"),
    ("examples/ci/gitlab-ci.yml", "vendor.gitlab-ci"),
];

#[test]
fn the_ci_files_are_valid_against_their_schemas() {
    let root = common::repo_root();
    let lint = root.join("tests/ci-lint/.venv/bin/check-jsonschema");
    assert!(
        lint.is_file(),
        "{} is missing: scripts/test installs it (tests/ci-lint/requirements.txt)",
        lint.display()
    );
    for (file, schema) in CI_FILES {
        run(
            Command::new(&lint)
                .args(["--builtin-schema", schema])
                .arg(root.join(file)),
            &format!("{file} against {schema}"),
        );
    }
}

/// Every string of a YAML value that a shell runs: a step's `run:`, GitLab's `script:`
/// and `before_script:`, and the mcpspec action's `with: run:` (`mcpspec run`'s arguments).
fn scripts(value: &serde_json::Value, key: Option<&str>, out: &mut Vec<String>) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let uses = map.get("uses").and_then(Value::as_str).unwrap_or("");
            for (k, v) in map {
                if k == "with" && uses.contains("/mcpspec@") {
                    if let Some(args) = v.get("run").and_then(Value::as_str) {
                        out.push(format!("mcpspec run {args}"));
                    }
                    continue;
                }
                scripts(v, Some(k), out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| scripts(v, key, out)),
        Value::String(s) if matches!(key, Some("run" | "script" | "before_script")) => {
            out.push(s.clone())
        }
        _ => {}
    }
}

/// `(command words, flags)` of each `mcpspec …` invocation in a script.
fn invocations(script: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let script = script.replace("\\\n", " ");
    let mut found = Vec::new();
    for line in script.lines().map(str::trim) {
        if line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            let w = w.trim_matches('"');
            // A command: at the start of a command line or a path to the binary (not
            // the package name in `cargo build -p mcpspec`).
            let starts = i == 0 || ["&&", "||", "|", ";", "then", "do"].contains(&words[i - 1]);
            if !((starts && w == "mcpspec") || w.ends_with("/mcpspec")) {
                continue;
            }
            let rest = &words[i + 1..];
            let cmd: Vec<String> = rest
                .iter()
                .take(2)
                .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
                .take_while(|w| !w.starts_with('-'))
                .map(|w| w.to_string())
                .collect();
            let flags = rest
                .iter()
                .filter(|w| w.starts_with("--"))
                .map(|w| {
                    let end = w[2..]
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                        .map_or(w.len(), |i| i + 2);
                    w[..end].to_string()
                })
                .collect();
            found.push((cmd, flags));
        }
    }
    found
}

#[test]
fn every_mcpspec_command_in_the_ci_files_is_a_documented_one() {
    let root = common::repo_root();
    let cli_chapter = std::fs::read_to_string(root.join("docs/src/cli.md")).unwrap();
    let mut checked = 0;
    for (file, _) in CI_FILES {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let yaml: serde_json::Value =
            serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{file}: not YAML: {e}"));
        let mut found = Vec::new();
        scripts(&yaml, None, &mut found);
        for (cmd, flags) in found.iter().flat_map(|s| invocations(s)) {
            let mut cmd = cmd;
            // `report merge`, `validate conformance`: the words that `mcpspec help` knows
            // are the command, the rest are arguments.
            let help = loop {
                let out = Command::new(common::mcpspec())
                    .arg("help")
                    .args(&cmd)
                    .output()
                    .unwrap();
                if out.status.success() || cmd.is_empty() {
                    break String::from_utf8_lossy(&out.stdout).into_owned();
                }
                cmd.pop();
            };
            let shown = format!("mcpspec {}", cmd.join(" "));
            assert!(
                !help.is_empty(),
                "{file}: `{shown}` is not a command of mcpspec"
            );
            assert!(
                cmd.is_empty() || cli_chapter.contains(shown.trim_end()),
                "{file}: `{shown}` is not in docs/src/cli.md"
            );
            for flag in flags {
                assert!(
                    help.contains(&flag),
                    "{file}: `{shown}` has no flag {flag} (see `{shown} --help`)"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 8, "only {checked} mcpspec invocations found");
}

#[test]
fn the_version_comes_from_cargo_toml_alone() {
    let root = common::repo_root();
    let version = version();
    // The release workflow and the packaging script read it (from Cargo.toml and from the
    // binary); they never write one down.
    for file in [".github/workflows/release.yml", "packaging/package.py"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(
            !text.contains(&version),
            "{file} names the version {version}: it must read it"
        );
    }
    // The recipes pin a release: the current one, so a release bump updates them too.
    let pinned =
        regex::Regex::new(r#"(?:@v|/v|version: |MCPSPEC_VERSION: ")(\d+\.\d+\.\d+)"#).unwrap();
    let mut pins = 0;
    for (file, _) in CI_FILES {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        for m in pinned.captures_iter(&text) {
            assert_eq!(&m[1], version, "{file} pins {} , not {version}", &m[0]);
            pins += 1;
        }
    }
    assert!(pins >= 4, "the recipes pin no release ({pins})");
}

/// The release workflow tests every platform it ships (#26): the five targets, one test
/// step for the whole matrix (no `if:`), and nothing allowed to fail (`continue-on-error`).
#[test]
fn the_release_workflow_tests_every_platform_it_ships() {
    let text =
        std::fs::read_to_string(common::repo_root().join(".github/workflows/release.yml")).unwrap();
    for target in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
        "x86_64-pc-windows-msvc",
    ] {
        assert!(
            text.contains(&format!("target: {target}")),
            "release.yml builds no {target}"
        );
    }
    assert!(
        !text.contains("continue-on-error"),
        "release.yml lets a job or step fail without failing the release"
    );
    let step = text
        .split("- name: Test suite\n")
        .nth(1)
        .expect("release.yml has a step named `Test suite`");
    let step: Vec<&str> = step
        .lines()
        .take_while(|l| !l.trim_start().starts_with("- "))
        .collect();
    let step = step.join("\n");
    assert!(
        !step.contains("if:"),
        "the test suite runs on some platforms only:\n{step}"
    );
    assert!(
        step.contains("run: scripts/test"),
        "the test step does not run the README's test command:\n{step}"
    );
}

/// A fake release of `version` for `target` in `dir` (`mcpspec-V-T.tar.gz` and its
/// `.sha256`, as the release workflow publishes them): its `mcpspec` says its version.
fn fake_release(dir: &Path, version: &str, target: &str) {
    let stem = format!("mcpspec-{version}-{target}");
    let inner = dir.join(&stem);
    std::fs::create_dir_all(&inner).unwrap();
    let bin = inner.join("mcpspec");
    std::fs::write(
        &bin,
        format!("#!/bin/sh\necho 'mcpspec {version} (fake)'\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    run(
        Command::new("tar")
            .current_dir(dir)
            .args(["-czf", &format!("{stem}.tar.gz"), &stem]),
        "tar",
    );
    let sum = run(
        Command::new("sha256sum")
            .current_dir(dir)
            .arg(format!("{stem}.tar.gz")),
        "sha256sum",
    );
    std::fs::write(dir.join(format!("{stem}.tar.gz.sha256")), sum).unwrap();
    std::fs::remove_dir_all(&inner).unwrap();
}

/// The CI file `file` as JSON.
fn ci_yaml(file: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(common::repo_root().join(file)).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{file}: not YAML: {e}"))
}

/// The GitLab template's install leaves the job's shell as it found it (#38): GitLab runs
/// `before_script` and `script` in one shell, so a `set -u` there would kill a job line
/// that reads an unset CI variable. The install itself works from a (file://) release.
#[test]
fn the_gitlab_template_installs_without_changing_the_jobs_shell() {
    let yaml = ci_yaml("ci/mcpspec.gitlab-ci.yml");
    let install = yaml[".mcpspec"]["before_script"]
        .as_array()
        .expect("before_script")
        .iter()
        .map(|line| line.as_str().expect("a script line").to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let dir = tempfile::tempdir().unwrap();
    let version = version();
    let releases = dir.path().join("releases");
    let published = releases.join(format!("v{version}"));
    std::fs::create_dir_all(&published).unwrap();
    fake_release(&published, &version, host_target());
    // The job's own script, after the install, in the same shell (GitLab runs bash with
    // `set -eo pipefail` of its own).
    let job = format!(
        "set -eo pipefail\n{install}\necho \"job sees [${{CI_MERGE_REQUEST_IID}}]\"\ncase $- in *u*) echo nounset leaked;; esac\necho \"target [${{target:-}}]\"\n"
    );
    for round in ["download", "cached"] {
        let out = run(
            Command::new("bash")
                .args(["-c", &job])
                .env_clear()
                .env("PATH", SYSTEM_PATH)
                .env("HOME", dir.path())
                .env("MCPSPEC_VERSION", &version)
                .env("MCPSPEC_HOME", dir.path().join("home").join(&version))
                .env("MCPSPEC_RELEASES", format!("file://{}", releases.display())),
            &format!("the template's install, then a job line ({round})"),
        );
        assert!(out.contains(&format!("mcpspec {version} (fake)")), "{out}");
        assert!(out.contains("job sees []"), "{out}");
        assert!(!out.contains("nounset leaked"), "{out}");
        assert!(
            out.contains("target []"),
            "the install's variables leaked:\n{out}"
        );
        // The second round finds the binary in the cache, with no release to download.
        std::fs::remove_dir_all(&releases).ok();
    }
}

/// `${{ a || b }}` of a step's `env:` as the runner evaluates it, from `context`
/// (dotted names; an empty value is false, as in the runner).
fn evaluate(expression: &str, context: &[(&str, String)]) -> String {
    let Some(inner) = expression
        .trim()
        .strip_prefix("${{")
        .and_then(|e| e.strip_suffix("}}"))
    else {
        return expression.to_string();
    };
    inner
        .split("||")
        .map(|name| {
            let name = name.trim();
            context
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("the test has no context value for {name}"))
                .1
                .clone()
        })
        .find(|v| !v.is_empty())
        .unwrap_or_default()
}

/// The Action downloads from its own repository's releases (#38): inside a composite
/// action `github.action_repository` is empty (a runner issue), so its download step runs
/// here with that context empty and the action checked out under `_actions/acme/mcpspec`:
/// it must fetch acme/mcpspec's release, never the user's repository's. With `uses: ./`
/// (the action in the workspace) the workspace's repository is the action's.
#[test]
fn the_action_downloads_from_its_own_repository_when_action_repository_is_empty() {
    let yaml = ci_yaml("action.yml");
    let step = yaml["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["name"]
                .as_str()
                .unwrap_or("")
                .starts_with("Download mcpspec")
        })
        .expect("the download step");
    let script = step["run"].as_str().unwrap();
    let version = version();
    let target = host_target();
    let dir = tempfile::tempdir().unwrap();
    let server = dir.path().join("github");
    let workspace = dir.path().join("work/app/app");
    for (action_path, owner_repo) in [
        (
            dir.path()
                .join(format!("work/_actions/acme/mcpspec/v{version}")),
            "acme/mcpspec",
        ),
        (workspace.clone(), "user/app"),
    ] {
        let published = server
            .join(owner_repo)
            .join(format!("releases/download/v{version}"));
        std::fs::create_dir_all(&published).unwrap();
        fake_release(&published, &version, target);
        let installed = dir.path().join("toolcache").join(owner_repo);
        let context = [
            ("inputs.version", version.clone()),
            ("inputs.repository", String::new()),
            ("github.action_repository", String::new()),
            ("github.repository", "user/app".to_string()),
            ("github.token", "not-a-token".to_string()),
            ("steps.where.outputs.target", target.to_string()),
            ("steps.where.outputs.dir", installed.display().to_string()),
        ];
        let mut cmd = Command::new("bash");
        cmd.args(["-c", script])
            .env_clear()
            .env("PATH", SYSTEM_PATH)
            .env("HOME", dir.path())
            .env("GITHUB_SERVER_URL", format!("file://{}", server.display()))
            .env("GITHUB_REPOSITORY", "user/app")
            .env("GITHUB_WORKSPACE", &workspace)
            .env("GITHUB_ACTION_PATH", &action_path);
        for (name, value) in step["env"].as_object().unwrap() {
            cmd.env(name, evaluate(value.as_str().unwrap(), &context));
        }
        run(
            &mut cmd,
            &format!("the download step from {}", action_path.display()),
        );
        assert!(
            installed.join("mcpspec").is_file(),
            "nothing installed from {owner_repo}"
        );
        std::fs::remove_dir_all(&published).unwrap();
    }
}

/// The `--junit FILE`s a script writes.
fn junit_files(script: &str) -> Vec<String> {
    // A word may hold a `${{ … }}` expression (spaces and all).
    let flag = regex::Regex::new(r#"--junit[ =]+("[^"]+"|(?:\$\{\{[^}]*\}\}|[^\s"])+)"#).unwrap();
    flag.captures_iter(script)
        .map(|c| c[1].trim_matches('"').to_string())
        .collect()
}

/// `pattern` (a path, a folder or a glob of upload-artifact / a JUnit publisher) covers `file`.
fn covers(pattern: &str, file: &str) -> bool {
    pattern.lines().map(str::trim).any(|p| {
        let p = p.split('*').next().unwrap_or(p);
        !p.is_empty() && file.starts_with(p)
    })
}

/// Every recipe that writes a JUnit report hands it on (#38): a GitHub job uploads it as
/// an artifact or publishes it (a JUnit report action), a GitLab job declares it in
/// `artifacts:reports:junit` (kept when the job fails). A report nobody can see is none.
#[test]
fn every_junit_report_a_recipe_writes_is_uploaded_or_published() {
    let mut checked = 0;
    for (file, schema) in CI_FILES {
        if *file == "action.yml" {
            continue;
        }
        let yaml = ci_yaml(file);
        let jobs: Vec<(&String, &serde_json::Value)> = if *schema == "vendor.gitlab-ci" {
            yaml.as_object().unwrap().iter().collect()
        } else {
            yaml["jobs"].as_object().unwrap().iter().collect()
        };
        for (name, job) in jobs {
            let mut found = Vec::new();
            scripts(job, None, &mut found);
            let mut written: Vec<String> = found.iter().flat_map(|s| junit_files(s)).collect();
            let steps = job["steps"].as_array().cloned().unwrap_or_default();
            for step in &steps {
                let uses = step["uses"].as_str().unwrap_or("");
                if uses.contains("/mcpspec@") && step["with"]["run"].is_string() {
                    written.push(
                        step["with"]["junit"]
                            .as_str()
                            .unwrap_or("reports/mcpspec-junit.xml")
                            .to_string(),
                    );
                }
            }
            for junit in written {
                let handed_on = if *schema == "vendor.gitlab-ci" {
                    job["artifacts"]["when"] == "always"
                        && job["artifacts"]["reports"]["junit"]
                            .as_str()
                            .is_some_and(|p| covers(p, &junit))
                } else {
                    steps.iter().any(|step| {
                        let uses = step["uses"].as_str().unwrap_or("");
                        let with = &step["with"];
                        let always = step["if"].as_str().is_some_and(|c| c.contains("always()"));
                        let mcpspec_action = uses.contains("/mcpspec@")
                            && with["upload"].as_str() != Some("false")
                            && with["junit"].as_str() == Some(&junit);
                        let uploaded = uses.starts_with("actions/upload-artifact@")
                            && always
                            && with["path"].as_str().is_some_and(|p| covers(p, &junit));
                        let published = uses.contains("junit")
                            && always
                            && with["report_paths"]
                                .as_str()
                                .is_some_and(|p| covers(p, &junit));
                        mcpspec_action || uploaded || published
                    })
                };
                assert!(
                    handed_on,
                    "{file}: job `{name}` writes {junit} and never uploads or publishes it (on failure too)"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 4, "only {checked} JUnit reports found");
}
