//! The packages a user installs without Rust (issue #26), built by the one script the
//! release workflow runs (`packaging/package.py`) from the binary `cargo test` already
//! built, installed the way a user installs them, with no Rust on PATH:
//! - the wheel into a fresh venv (pip), the README's example run, a clean uninstall;
//! - the npm package tarballs, made from a binary of mode 644 (as a CI artifact comes back),
//!   installed into a fresh folder, run through `npx`;
//! - the static binary of `scripts/build-static`, when it was built: no shared library,
//!   runs with an empty environment and in a root holding nothing but itself.
//!
//! And the CI files users copy: the GitHub Action, the release workflow, the GitLab
//! template and the recipes, checked against their schemas (check-jsonschema's vendored
//! SchemaStore schemas), every mcpspec command in them a documented one, the version and
//! the repository each in one place (Cargo.toml). The release workflow is dry-run: its
//! shell steps, for every leg of its matrix, with the runner's OS and `CI=true` faked and
//! cargo, the installers and the publishers replaced by stand-ins that write down what
//! they were asked (`release_dry_run`).
// Unix only: the linters run from .venv/bin; the static binary is Linux's.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// PATH for the installed tools: system folders only (no `~/.cargo/bin`, no rustup).
const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// PATH for npm and Python: the folders of this machine's `node`, `npm` and `python3`
/// (actions/setup-node's tool cache, Homebrew's /opt/homebrew/bin on arm64 macOS), then the
/// system folders; never a folder holding cargo or rustc (the packages run without Rust).
fn tool_path() -> String {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let path = std::env::var_os("PATH").unwrap_or_default();
    for tool in ["node", "npm", "npx", "python3"] {
        let Some(dir) = std::env::split_paths(&path).find(|d| d.join(tool).is_file()) else {
            continue;
        };
        let rust = dir.join("cargo").exists() || dir.join("rustc").exists();
        if !rust && !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs.push(PathBuf::from("/opt/homebrew/bin"));
    let mut joined: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    joined.push(SYSTEM_PATH.to_string());
    joined.join(":")
}

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
    package_binary(&common::mcpspec(), kind, out, extra)
}

/// `packaging/package.py KIND` on `binary`; the paths it wrote.
fn package_binary(binary: &Path, kind: &str, out: &Path, extra: &[&str]) -> Vec<PathBuf> {
    let root = common::repo_root();
    let text = run(
        Command::new("python3")
            .arg(root.join("packaging/package.py"))
            .arg(kind)
            .arg("--binary")
            .arg(binary)
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

/// The test build of mcpspec copied with mode 644: what `actions/download-artifact` gives
/// back of a binary (artifacts keep no file modes).
fn artifact_binary(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("artifact").join("mcpspec");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::copy(common::mcpspec(), &path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    path
}

/// The entries of an npm tarball (`package/…`) with their modes.
fn tarball_modes(tarball: &Path) -> Vec<(String, u32)> {
    let file = std::fs::File::open(tarball).unwrap();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    archive
        .entries()
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let path = e.path().unwrap().display().to_string();
            (path, e.header().mode().unwrap() & 0o7777)
        })
        .collect()
}

#[test]
fn the_npm_packages_made_from_an_artifact_binary_install_from_their_tarballs_and_run_through_npx() {
    let tmp = tempfile::tempdir().unwrap();
    // The binary as the publishing job gets it: mode 644. The tarballs set the mode.
    let binary = artifact_binary(tmp.path());
    let packed = package_binary(&binary, "npm", &tmp.path().join("dist"), &[]);
    assert_eq!(
        packed.len(),
        2,
        "the wrapper and one platform package: {packed:?}"
    );
    let [wrapper, platform] = packed.as_slice() else {
        unreachable!()
    };
    assert_eq!(
        wrapper.file_name().unwrap().to_string_lossy(),
        format!("mcpspec-{}.tgz", version())
    );
    for (tarball, exe) in [
        (platform, "package/bin/mcpspec"),
        (wrapper, "package/bin/mcpspec.js"),
    ] {
        let modes = tarball_modes(tarball);
        assert!(
            modes.iter().any(|(p, m)| p == exe && *m == 0o755),
            "{}: no {exe} of mode 755: {modes:?}",
            tarball.display()
        );
        assert!(
            modes.iter().all(|(p, _)| p.starts_with("package/")),
            "{modes:?}"
        );
    }

    // A fresh project, as a user's: the tarballs installed with no registry access (the
    // wrapper's optional dependency on the platform package is met by the second tarball).
    let npm_path = tool_path();
    let project = |name: &str, tarballs: &[PathBuf]| {
        let app = tmp.path().join(name);
        std::fs::create_dir(&app).unwrap();
        std::fs::write(
            app.join("package.json"),
            r#"{ "name": "app", "version": "1.0.0", "private": true }"#,
        )
        .unwrap();
        run(
            Command::new("npm")
                .args([
                    "install",
                    "--offline",
                    "--no-audit",
                    "--no-fund",
                    "--save-dev",
                ])
                .args(tarballs)
                .current_dir(&app)
                .env("PATH", &npm_path),
            "npm install of the tarballs",
        );
        app
    };
    let app = project("app", &packed);
    assert!(
        app.join("node_modules/mcpspec/schema/scenario.schema.json")
            .is_file(),
        "the schemas are not in the package"
    );
    let npx = |app: &Path| {
        let mut cmd = Command::new("npx");
        cmd.args(["--no-install", "mcpspec"])
            .current_dir(app)
            .env("PATH", &npm_path);
        cmd
    };
    let shown = run(npx(&app).arg("--version"), "npx mcpspec --version");
    assert!(
        shown.contains(&format!("mcpspec {} (commit ", version())),
        "{shown}"
    );
    example_run(&mut npx(&app), &app);
    // The exit code goes through the launcher (2: invalid input).
    let bad = npx(&app)
        .args(["validate", "no-such-file.yaml"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");

    // The wrapper alone (a platform with no release): the launcher says what to do, with
    // the repository's address from package.json, and suggests no crate that is not published.
    let bare = project("bare", std::slice::from_ref(wrapper));
    let out = npx(&bare).arg("--version").output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    assert!(
        said.contains(&format!("{}/releases", repository())),
        "{said}"
    );
    assert!(!said.contains("cargo install"), "{said}");
}

/// The static release binary, when `scripts/build-static` built it (`MCPSPEC_TEST_STATIC=1
/// scripts/test` does, as the release workflow runs it).
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
             it (a second full release build: `MCPSPEC_TEST_STATIC=1 scripts/test` and the release workflow run it)",
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
    (
        "examples/ci/github-actions-eval.yml",
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
/// and `before_script:`, and the mcpspec action's `with: run:` (`mcpspec run`'s arguments)
/// and `with: eval-compare:` (`mcpspec eval compare`'s).
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
                    if let Some(args) = v.get("eval-compare").and_then(Value::as_str) {
                        out.push(format!("mcpspec eval compare {args}"));
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
        step.lines().any(|l| l.trim() == "scripts/test"),
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

/// The action's `eval-compare:` step (#42): it runs `mcpspec eval compare` (here the test
/// build, on committed results with a regression), appends the Markdown summary to the step
/// summary, and on a pull request posts it as one comment found again by its hidden marker
/// (a fake `gh` on PATH: the first run posts, the next updates); elsewhere it posts
/// nothing. The step exits with compare's code.
#[test]
fn the_action_compares_evals_and_posts_one_pull_request_comment() {
    let yaml = ci_yaml("action.yml");
    let step = yaml["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "mcpspec eval compare")
        .expect("the eval step");
    let script = step["run"].as_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(common::mcpspec(), bin.join("mcpspec")).unwrap();
    let log = dir.path().join("gh.log");
    let body = dir.path().join("comment.md");
    // `gh api`: logs its arguments, keeps the comment's body; lists the comment once posted.
    let gh = format!(
        r#"#!/bin/bash
[ "$GH_TOKEN" = the-token ] || {{ echo "no token" >&2; exit 9; }}
printf '%s\n' "$*" >> '{log}'
for a in "$@"; do case "$a" in body=*) printf '%s' "${{a#body=}}" > '{body}' ;; esac; done
if [ "$2" = --paginate ] && [ -f '{body}' ]; then echo 4242; fi
exit 0
"#,
        log = log.display(),
        body = body.display()
    );
    std::fs::write(bin.join("gh"), gh).unwrap();
    std::fs::set_permissions(
        bin.join("gh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let cases = common::repo_root().join("tests/eval_compare/regressed");
    let summary = dir.path().join("step-summary.md");
    let step_run = |event: &str| {
        let context = [
            (
                "inputs.eval-compare",
                format!(
                    "{} '{}'",
                    cases.join("base.json").display(),
                    cases.join("candidate.json").display()
                ),
            ),
            ("inputs.eval-comment", "true".to_string()),
            ("inputs.eval-comment-id", "eval-compare".to_string()),
            ("github.event_name", event.to_string()),
            ("github.event.pull_request.number", "7".to_string()),
            ("github.token", "the-token".to_string()),
        ];
        let mut cmd = Command::new("bash");
        cmd.args(["-c", script])
            .env_clear()
            .env("PATH", format!("{}:{SYSTEM_PATH}", bin.display()))
            .env("HOME", dir.path())
            .env("RUNNER_TEMP", dir.path())
            .env("GITHUB_REPOSITORY", "user/app")
            .env("GITHUB_OUTPUT", dir.path().join("output"))
            .env("GITHUB_STEP_SUMMARY", &summary);
        for (name, value) in step["env"].as_object().unwrap() {
            cmd.env(name, evaluate(value.as_str().unwrap(), &context));
        }
        cmd.output().unwrap()
    };
    let out = step_run("pull_request");
    assert_eq!(out.status.code(), Some(1), "compare's exit code: {out:?}");
    let md =
        std::fs::read_to_string(dir.path().join("mcpspec-eval-compare-eval-compare.md")).unwrap();
    assert!(md.contains("REGRESSION"), "{md}");
    assert_eq!(
        std::fs::read_to_string(&summary).unwrap(),
        format!("{md}\n"),
        "the step summary"
    );
    let posted = std::fs::read_to_string(&body).unwrap();
    assert_eq!(
        posted,
        format!("<!-- mcpspec:eval-compare -->\n{}", md.trim_end())
    );
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(
        calls.contains("api -X POST repos/user/app/issues/7/comments"),
        "{calls}"
    );
    assert!(
        calls.contains("startswith(\"<!-- mcpspec:eval-compare -->\")"),
        "{calls}"
    );
    // The next push updates that comment.
    std::fs::remove_file(&log).unwrap();
    let out = step_run("pull_request");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(
        calls.contains("api -X PATCH repos/user/app/issues/comments/4242"),
        "{calls}"
    );
    assert!(!calls.contains("POST"), "{calls}");
    // A push to a branch: the step summary only.
    std::fs::remove_file(&log).unwrap();
    let out = step_run("push");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(!log.exists(), "no gh call outside a pull request");
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

/// Cargo.toml's `repository`, the one place that names the project's repository.
fn repository() -> String {
    env!("CARGO_PKG_REPOSITORY").to_string()
}

/// The files that name the repository: what users copy or read, and what publishes.
fn files_naming_the_repository() -> Vec<PathBuf> {
    let root = common::repo_root();
    let mut files: Vec<PathBuf> = [
        "action.yml",
        "Dockerfile",
        "README.md",
        "packaging/package.py",
        "packaging/README.md",
        "packaging/npm/mcpspec.js",
    ]
    .iter()
    .map(|f| root.join(f))
    .collect();
    for dir in ["ci", "examples/ci", "docs/src", ".github/workflows"] {
        files.extend(walk(&root.join(dir)));
    }
    files
}

/// No placeholder for the repository is left, and every address of it (GitHub, the
/// releases, `uses:`, the image) is Cargo.toml's `repository` (#41): npm's provenance
/// rejects a package whose repository.url is not the building repository, and a recipe
/// pointing elsewhere downloads nothing.
#[test]
fn the_repository_is_named_in_cargo_toml_alone() {
    let root = common::repo_root();
    let home = repository();
    let owner_name = home
        .strip_prefix("https://github.com/")
        .unwrap_or_else(|| panic!("Cargo.toml's repository is not on GitHub: {home}"));
    let (owner, name) = owner_name.split_once('/').unwrap();
    assert_eq!(name, "mcpspec", "{home}");
    let said = run(
        Command::new("python3")
            .arg(root.join("packaging/package.py"))
            .arg("repository"),
        "package.py repository",
    );
    assert_eq!(said.trim(), home);

    // The placeholder, anywhere in the repository (vendored code aside).
    let placeholder = concat!("OWN", "ER");
    let listed = run(
        Command::new("git")
            .args(["ls-files", "-z", "--", ".", ":!vendor"])
            .current_dir(&root),
        "git ls-files",
    );
    for file in listed.split('\0').filter(|f| !f.is_empty()) {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            assert!(
                !line.contains(placeholder),
                "{file}:{}: the placeholder {placeholder} (the repository is {home}): {line}",
                n + 1
            );
        }
    }

    // Every address of a repository named mcpspec names this one. `acme` is the book's
    // example of someone else's copy of the action.
    let address = regex::Regex::new(
        r"(?:github\.com/|ghcr\.io/|uses:\s*)([A-Za-z0-9_.-]+)/mcpspec(?:[@/:.\s`)]|$)",
    )
    .unwrap();
    let mut seen = 0;
    for file in files_naming_the_repository() {
        let text = std::fs::read_to_string(&file).unwrap();
        for m in address.captures_iter(&text) {
            let found = &m[1];
            assert!(
                found.eq_ignore_ascii_case(owner) || found == "acme",
                "{}: `{}` names {found}/mcpspec, Cargo.toml's repository is {home}",
                file.display(),
                m[0].trim()
            );
            seen += 1;
        }
    }
    assert!(seen >= 8, "only {seen} addresses of the repository found");
}

/// The stand-in for every outside command of a dry run, installed under each name: it
/// writes its name and arguments to `$DRY_LOG` and does the least the scripts rely on.
const FAKE_COMMAND: &str = r#"#!/bin/bash
name="${0##*/}"
printf '%s\n' "$name $*" >> "$DRY_LOG"
case "$name" in
  uname) echo "$DRY_UNAME" ;;
  rustc)
    case "$*" in
      *-vV*) printf 'rustc 1.0.0 (dry run)\nhost: %s\n' "$DRY_HOST" ;;
      *sysroot*) echo "$DRY_SYSROOT" ;;
    esac ;;
  ldd) printf '\tstatically linked\n' ;;
  cargo)
    case "$1" in
      --version) echo "cargo 1.0.0 (dry run)" ;;
      metadata) printf '{"packages":[{"name":"mcpspec","version":"%s"}]}\n' "$DRY_VERSION" ;;
      install) mkdir -p "$CARGO_HOME/bin" && cp "$0" "$CARGO_HOME/bin/mdbook" ;;
      build)
        # The release binary where a real build leaves it: target/[TRIPLE/]release/.
        triple="" previous=""
        for arg in "$@"; do
          [ "$previous" != --target ] || triple="$arg"
          previous="$arg"
        done
        exe=""
        case "$triple" in *windows*) exe=.exe ;; esac
        mkdir -p "target/${triple:+$triple/}release"
        cp "$DRY_BINARY" "target/${triple:+$triple/}release/mcpspec$exe"
        chmod 755 "target/${triple:+$triple/}release/mcpspec$exe" ;;
    esac ;;
  npm)
    case "$1" in
      config) [ "$2" != get ] || echo "https://registry.npmjs.org/" ;;
      view) exit 1 ;;
    esac ;;
  gh) [ "$1 $2" != "release view" ] || exit 1 ;;
esac
exit 0
"#;

/// A GitHub Actions runner, faked: a copy of what the release workflow's steps read (the
/// scripts, packaging, schemas, Cargo.toml) and a folder of stand-in commands first on PATH.
struct FakeRunner {
    dir: tempfile::TempDir,
    workspace: PathBuf,
    log: PathBuf,
    bin: PathBuf,
}

impl FakeRunner {
    fn new() -> FakeRunner {
        use std::os::unix::fs::PermissionsExt;
        let root = common::repo_root();
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("work");
        for file in [
            "Cargo.toml",
            "scripts/test",
            "scripts/build-static",
            "scripts/check-windows",
            "packaging/package.py",
            "packaging/README.md",
            "packaging/npm/mcpspec.js",
        ] {
            let to = workspace.join(file);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(root.join(file), &to).unwrap();
        }
        std::fs::create_dir_all(workspace.join("schema")).unwrap();
        for schema in walk(&root.join("schema")) {
            std::fs::copy(
                &schema,
                workspace.join("schema").join(schema.file_name().unwrap()),
            )
            .unwrap();
        }
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let fake = bin.join("fake");
        std::fs::write(&fake, FAKE_COMMAND).unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        for name in [
            "uname", "rustc", "cargo", "ldd", "npm", "npx", "gh", "apt-get", "sudo", "choco",
            "xmllint", "strace",
        ] {
            std::os::unix::fs::symlink(&fake, bin.join(name)).unwrap();
        }
        // The workflow's `python` (actions/setup-python's name for it) is the real one.
        let python3 = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join("python3"))
            .find(|p| p.is_file())
            .expect("python3 on PATH");
        std::os::unix::fs::symlink(&python3, bin.join("python")).unwrap();
        std::os::unix::fs::symlink(&python3, bin.join("python3")).unwrap();
        std::fs::create_dir_all(dir.path().join("runner-temp")).unwrap();
        // What the stand-in cargo "builds": a script that says its version (packaging reads
        // it), small so that five legs of packaging stay fast.
        let release = dir.path().join("release-binary");
        std::fs::write(
            &release,
            format!(
                "#!/bin/sh\necho 'mcpspec {} (commit 000000000000)'\n",
                version()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&release, std::fs::Permissions::from_mode(0o755)).unwrap();
        let log = dir.path().join("commands.log");
        FakeRunner {
            workspace,
            log,
            bin,
            dir,
        }
    }

    /// Runs one step's script as the runner does (`bash -eo pipefail`), with `env`; the
    /// commands it ran (the stand-ins' log) and whether it succeeded, with its output.
    fn step(&self, script: &str, env: &[(String, String)]) -> (bool, String, Vec<String>) {
        let _ = std::fs::remove_file(&self.log);
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
            .current_dir(&self.workspace)
            .env_clear()
            .env("PATH", format!("{}:{}", self.bin.display(), tool_path()))
            .env("HOME", self.dir.path())
            .env("CARGO_HOME", self.dir.path().join("cargo"))
            .env("RUNNER_TEMP", self.dir.path().join("runner-temp"))
            .env("GITHUB_WORKSPACE", &self.workspace)
            .env("GITHUB_OUTPUT", self.dir.path().join("github-output"))
            .env("DRY_LOG", &self.log)
            .env("DRY_SYSROOT", self.dir.path().join("sysroot"))
            .env("DRY_VERSION", version())
            .env("DRY_BINARY", self.dir.path().join("release-binary"))
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        (
            out.status.success(),
            text,
            log.lines().map(str::to_string).collect(),
        )
    }
}

/// A workflow step's `env:`, each value's expressions replaced from `context`.
fn step_env(step: &serde_json::Value, context: &[(String, String)]) -> Vec<(String, String)> {
    step["env"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), substitute(v.as_str().unwrap(), context)))
        .collect()
}

/// `${{ name }}` in `text` replaced from `context` (dotted names, as the runner's contexts;
/// a matrix field a leg does not set is empty). Any other expression is the dry run's to
/// learn: it panics.
fn substitute(text: &str, context: &[(String, String)]) -> String {
    let expression = regex::Regex::new(r"\$\{\{\s*([^}]*?)\s*\}\}").unwrap();
    expression
        .replace_all(text, |c: &regex::Captures| {
            let name = &c[1];
            match context.iter().find(|(n, _)| n == name) {
                Some((_, v)) => v.clone(),
                None if name.starts_with("matrix.") => String::new(),
                None => panic!("the dry run has no value for `{name}` (in {text:?})"),
            }
        })
        .into_owned()
}

/// A step's `if:` (`NAME == 'V'`, `NAME != 'V'`, or none).
fn step_runs(step: &serde_json::Value, context: &[(String, String)]) -> bool {
    let Some(condition) = step["if"].as_str() else {
        return true;
    };
    let (name, want, equal) = if let Some((n, v)) = condition.split_once("!=") {
        (n, v, false)
    } else if let Some((n, v)) = condition.split_once("==") {
        (n, v, true)
    } else {
        panic!("the dry run cannot evaluate `if: {condition}`")
    };
    let value = substitute(&format!("${{{{ {} }}}}", name.trim()), context);
    (value == want.trim().trim_matches('\'')) == equal
}

/// The `run:` steps of the build legs the dry run does not run, each with the reason: the
/// leg checks its own packages on its own platform, which this machine is not.
const BUILD_STEPS_NOT_DRY_RUN: &[&str] = &[
    // pip refuses a wheel of another platform; the wheel test above installs this one.
    "The wheel installs and runs here",
    // npm skips a package of another os/cpu; the npm test above installs this one's.
    "The npm packages install and run here",
];

/// The release workflow, dry-run (#41): for every leg of its build matrix, the runner's OS
/// faked (`uname`, the target's host triple) and `CI=true` as GitHub sets it everywhere, each
/// shell step the leg runs is run — the test suite step (`scripts/test`), the release build
/// and the packaging — with cargo and the installers as stand-ins. Then the artifacts come
/// back as mode 644, merged, and the publishing job's steps run on them: the npm tarballs
/// still carry mode 755 for the binary, the platform packages are published before the
/// wrapper, and the GitHub release is made public last. The version job refuses a tag that is
/// not Cargo.toml's version and a repository that is not Cargo.toml's.
#[test]
fn release_dry_run() {
    use std::os::unix::fs::PermissionsExt;
    let workflow = ci_yaml(".github/workflows/release.yml");
    let jobs = workflow["jobs"].as_object().unwrap();
    let version = version();
    let home = repository();
    let owner_name = home
        .strip_prefix("https://github.com/")
        .unwrap()
        .to_string();
    let runner = FakeRunner::new();
    let base = |repository: &str| -> Vec<(String, String)> {
        let tag = format!("v{version}");
        [
            ("needs.version.outputs.version", version.as_str()),
            ("github.server_url", "https://github.com"),
            ("github.repository", repository),
            ("github.ref_type", "tag"),
            ("github.ref_name", tag.as_str()),
            ("github.token", "not-a-token"),
            ("secrets.NPM_TOKEN", "not-a-token"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    };

    // The version job: the tag and the repository checked before anything else runs.
    let version_steps = jobs["version"]["steps"].as_array().unwrap();
    for (repository, tag, passes) in [
        (owner_name.as_str(), format!("v{version}"), true),
        ("someone/fork", format!("v{version}"), false),
        (owner_name.as_str(), "v0.0.0-not-this".to_string(), false),
    ] {
        let mut context = base(repository);
        context.retain(|(k, _)| k != "github.ref_name");
        context.push(("github.ref_name".into(), tag.clone()));
        let mut all_passed = true;
        for step in version_steps.iter().filter(|s| s["run"].is_string()) {
            let env = step_env(step, &context);
            let (ok, text, _) =
                runner.step(&substitute(step["run"].as_str().unwrap(), &context), &env);
            all_passed &= ok;
            if !ok {
                assert!(text.contains("::error::"), "a failure says why:\n{text}");
            }
        }
        assert_eq!(
            all_passed, passes,
            "the version job with {repository} at {tag}: passed {all_passed}"
        );
    }

    // Every build leg.
    let build = &jobs["build"];
    let legs = build["strategy"]["matrix"]["include"].as_array().unwrap();
    assert_eq!(legs.len(), 5, "{legs:?}");
    let downloaded = runner.dir.path().join("downloaded/dist");
    for leg in legs {
        let os = leg["os"].as_str().unwrap();
        let target = leg["target"].as_str().unwrap();
        let (runner_os, uname) = match os {
            o if o.starts_with("ubuntu") => ("Linux", "Linux"),
            o if o.starts_with("macos") => ("macOS", "Darwin"),
            o if o.starts_with("windows") => ("Windows", "MINGW64_NT-10.0-20348"),
            other => panic!("a runner the dry run does not know: {other}"),
        };
        let mut context = base(&owner_name);
        context.push(("runner.os".into(), runner_os.into()));
        for (k, v) in leg.as_object().unwrap() {
            context.push((format!("matrix.{k}"), v.as_str().unwrap().to_string()));
        }
        let dist = runner.workspace.join("dist");
        let _ = std::fs::remove_dir_all(&dist);
        let _ = std::fs::remove_dir_all(runner.workspace.join("target"));
        let mut ran = Vec::new();
        for step in build["steps"].as_array().unwrap() {
            let Some(script) = step["run"].as_str() else {
                continue;
            };
            let name = step["name"].as_str().unwrap_or("");
            if !step_runs(step, &context) || BUILD_STEPS_NOT_DRY_RUN.contains(&name) {
                continue;
            }
            let mut env = step_env(step, &context);
            env.push(("DRY_UNAME".into(), uname.into()));
            env.push(("DRY_HOST".into(), target.into()));
            env.push(("RUNNER_OS".into(), runner_os.into()));
            let (ok, text, commands) = runner.step(&substitute(script, &context), &env);
            assert!(
                ok,
                "{os} ({target}), step `{name}` fails:\n{text}\ncommands:\n{}",
                commands.join("\n")
            );
            ran.push((name.to_string(), commands));
        }
        // The test suite: the whole suite on every leg; the static build on Linux only,
        // before the tests that check it.
        let (_, tests) = ran
            .iter()
            .find(|(n, _)| n == "Test suite")
            .unwrap_or_else(|| panic!("{os}: no test step ran"));
        let test_at = tests
            .iter()
            .position(|c| c.starts_with("cargo test --workspace --locked"))
            .unwrap_or_else(|| panic!("{os}: scripts/test ran no cargo test:\n{tests:#?}"));
        let static_at = tests
            .iter()
            .position(|c| c.starts_with("cargo build --release --locked --target"));
        if runner_os == "Linux" {
            assert!(
                static_at.is_some_and(|s| s < test_at),
                "{os}: the static binary is not built before the tests:\n{tests:#?}"
            );
            assert!(
                tests
                    .iter()
                    .any(|c| c.contains(&format!("--target {target}"))),
                "{tests:#?}"
            );
        } else {
            assert_eq!(
                static_at, None,
                "{os}: scripts/build-static runs:\n{tests:#?}"
            );
        }
        // What the leg packaged.
        let exe = if runner_os == "Windows" { ".exe" } else { "" };
        let archive = if runner_os == "Windows" {
            "zip"
        } else {
            "tar.gz"
        };
        let mut made: Vec<String> = walk(&dist)
            .iter()
            .map(|p| p.strip_prefix(&dist).unwrap().display().to_string())
            .collect();
        made.sort();
        let stem = format!("mcpspec-{version}-{target}");
        for expected in [
            format!("archives/{stem}.{archive}"),
            format!("archives/{stem}.{archive}.sha256"),
            format!("npm/mcpspec-{version}.tgz"),
        ] {
            assert!(made.contains(&expected), "{os}: no {expected} in {made:#?}");
        }
        assert!(
            made.iter()
                .any(|f| f.starts_with("wheels/") && f.ends_with(".whl")),
            "{made:#?}"
        );
        let platform_tarballs: Vec<&String> = made
            .iter()
            .filter(|f| f.starts_with("npm/") && !f.ends_with(&format!("/mcpspec-{version}.tgz")))
            .collect();
        assert_eq!(platform_tarballs.len(), 1, "{made:#?}");
        let modes = tarball_modes(&dist.join(platform_tarballs[0]));
        assert!(
            modes.contains(&(format!("package/bin/mcpspec{exe}"), 0o755)),
            "{os}: {modes:?}"
        );
        assert_eq!(
            made.iter().any(|f| f.starts_with("image/")),
            leg["image"].is_string(),
            "{os}: the image binary {made:#?}"
        );
        // actions/upload-artifact then download-artifact (merge-multiple): the files
        // come back with mode 644.
        for file in walk(&dist) {
            let to = downloaded.join(file.strip_prefix(&dist).unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&file, &to).unwrap();
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }

    // Publishing waits for every job that builds, tests or checks, and for the tag's check.
    let publishing = ["image", "publish"];
    for name in publishing {
        let job = &jobs[name];
        let needs: Vec<&str> = job["needs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        for other in jobs.keys().filter(|k| !publishing.contains(&k.as_str())) {
            assert!(
                needs.contains(&other.as_str()),
                "job {name} does not wait for {other}"
            );
        }
        assert_eq!(
            job["if"].as_str(),
            Some("needs.version.outputs.publish == 'true'"),
            "{name}"
        );
    }
    assert!(
        jobs["publish"]["needs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "image"),
        "the packages are published before the image is pushed"
    );

    // The publish job on the downloaded artifacts.
    let publish_dir = runner.workspace.join("dist");
    let _ = std::fs::remove_dir_all(&publish_dir);
    for file in walk(&downloaded) {
        let to = publish_dir.join(file.strip_prefix(&downloaded).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&file, &to).unwrap();
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let context = base(&owner_name);
    let mut commands = Vec::new();
    for step in jobs["publish"]["steps"].as_array().unwrap() {
        if let Some(uses) = step["uses"].as_str() {
            if uses.starts_with("pypa/gh-action-pypi-publish") {
                assert_eq!(
                    step["with"]["skip-existing"], true,
                    "a re-run must skip the wheels up"
                );
                commands.push("pypi-publish".to_string());
            }
            continue;
        }
        let env = step_env(step, &context);
        let name = step["name"].as_str().unwrap_or("");
        let (ok, text, log) =
            runner.step(&substitute(step["run"].as_str().unwrap(), &context), &env);
        assert!(ok, "publish step `{name}` fails:\n{text}\n{log:#?}");
        commands.extend(log);
    }
    let published: Vec<&String> = commands
        .iter()
        .filter(|c| c.starts_with("npm publish"))
        .collect();
    assert_eq!(
        published.len(),
        6,
        "five platform packages and the wrapper: {commands:#?}"
    );
    assert!(
        published[5].ends_with(&format!("dist/npm/mcpspec-{version}.tgz")),
        "the wrapper goes last: {published:#?}"
    );
    assert!(
        published.iter().all(|c| c.contains("--provenance")),
        "{published:#?}"
    );
    let position = |prefix: &str| {
        commands
            .iter()
            .position(|c| c.starts_with(prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` in {commands:#?}"))
    };
    assert!(position("gh release create") < position("pypi-publish"));
    assert!(commands[position("gh release create")].contains("--draft"));
    assert!(position("npm publish") > position("pypi-publish"));
    assert_eq!(
        commands
            .last()
            .map(|c| c.starts_with("gh release edit") && c.contains("--draft=false")),
        Some(true),
        "the release is made public last: {commands:#?}"
    );
    let sums = std::fs::read_to_string(publish_dir.join("archives/SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), 5, "{sums}");
}
