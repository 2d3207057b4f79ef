//! Tests as data: each folder `tests/cases/NAME/` holds a scenario (or several files) and
//! `case.yaml`, the commands to run and what each must give. Found by glob: a new case is
//! a new folder, no Rust. tests/cases/README.md says how to write one and which scenarios
//! stay inline in Rust tests, and why.
//!
//! `case.yaml` (every key but `shows` and `runs` optional):
//!
//! ```yaml
//! shows: exit 1 when an expectation fails      # printed when the case fails
//! stdio: [--defect, NAME]      # `{stdio}`: the example server over stdio with these flags
//! http: []                     # `{url}`: the example server over HTTP with these flags
//! servers:                     # more of them, each by its own name: `{bad}`, `{web}`
//!   bad: { stdio: [--defect, NAME] }
//!   web: { http: [] }
//! env: { NAME: value }         # environment of every run (besides NO_COLOR)
//! copy: true                   # run in a fresh copy of the case folder (runs that write files)
//! cwd: project                 # mcpspec's working folder, inside the case folder
//! runs:
//!   - put: { a.yaml: a-fixed.yaml }   # with `copy`: before this run, a.yaml becomes a-fixed.yaml
//!     args: [run, "{case}/scenario.yaml", --stdio, "{stdio}", --json, "{out}/result.json"]
//!     env: { NAME: value }     # this run only
//!     code: 1
//!     stdout: [FAIL, goodbye]  # each must appear (stderr: in stderr; output: in either)
//!     not_stdout: [PASS]       # none may appear (not_stderr: in stderr)
//!     stdout_is: stdout.txt    # the whole stdout, line by line, as that file of the case
//!                              # says; `~~~` in a line matches any text (durations,
//!                              # paths), as Hurl's `.pattern` files (stderr_is: stderr)
//!     json:                    # in `{out}/result.json` (or `json_file`): where → value
//!       /summary/failed: 1     # a JSON pointer; `null` also matches a missing value
//!       "s@legacy › step name › /outcome/status": failed   # suite id › step name › pointer
//!     json_text: { "/x": part }  # the string there contains `part` (json_starts: starts with)
//!     json_len: { "/x": 3 }      # the array there has 3 items
//!     reports: [...]           # each in a file the run wrote to `{out}`
//!     anywhere: [...]          # each in stdout, stderr or a file in `{out}`
//!     files: { PATH: [...] }   # each in the file PATH of the case folder (its copy)
//!     files_lack: { PATH: [...] }  # none in the file PATH
//!     listing: { DIR: [a, b] } # the folder DIR of the case folder (its copy) or `{out}`
//!                              # holds just these
//!     absent: [...]            # none anywhere, nor in `files` (secrets)
//!     junit_10: [r.xml]        # these files of `{out}` are valid against the Jenkins
//!                              # xUnit plugin's junit-10.xsd (`--junit-flavor jenkins`)
//!     not_junit_10: [r.xml]    # and these are not (the default flavour)
//! ```
//!
//! `{case}` is the case folder (relative to the repository root, mcpspec's cwd; absolute
//! with `copy` or `cwd`), `{out}` a fresh temporary folder for reports. Every `.xml` file a
//! run writes to `{out}` must be valid JUnit. `CASE=NAME cargo test --test cases` runs the
//! cases whose folder name contains NAME.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use common::{HttpServer, JUNIT_10_XSD, repo_root, run_in, stdio_target, xmllint, xmllint_against};
use serde::Deserialize;
use serde_json::Value;

const CASES: &str = "tests/cases";
/// Cases run side by side: each spends most of its time waiting on a child process.
const WORKERS: usize = 3;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    shows: String,
    stdio: Option<Vec<String>>,
    http: Option<Vec<String>>,
    #[serde(default)]
    servers: BTreeMap<String, Server>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    copy: bool,
    cwd: Option<String>,
    runs: Vec<Command>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "lowercase")]
enum Server {
    Stdio(Vec<String>),
    Http(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Command {
    /// Before the run: the file DEST of the case folder's copy gets SOURCE's text.
    #[serde(default)]
    put: BTreeMap<String, String>,
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    code: i32,
    #[serde(default)]
    stdout: Vec<String>,
    #[serde(default)]
    stderr: Vec<String>,
    #[serde(default)]
    output: Vec<String>,
    #[serde(default)]
    not_stdout: Vec<String>,
    #[serde(default)]
    not_stderr: Vec<String>,
    stdout_is: Option<String>,
    stderr_is: Option<String>,
    json_file: Option<String>,
    #[serde(default)]
    json: BTreeMap<String, Value>,
    #[serde(default)]
    json_text: BTreeMap<String, String>,
    #[serde(default)]
    json_starts: BTreeMap<String, String>,
    #[serde(default)]
    json_len: BTreeMap<String, usize>,
    #[serde(default)]
    reports: Vec<String>,
    #[serde(default)]
    anywhere: Vec<String>,
    #[serde(default)]
    files: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    files_lack: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    listing: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    absent: Vec<String>,
    #[serde(default)]
    junit_10: Vec<String>,
    #[serde(default)]
    not_junit_10: Vec<String>,
}

/// A test of a JSON string against the text a case gives (`json_text`, `json_starts`).
type TextTest = fn(&str, &str) -> bool;

/// The text of every file in `dir`, one after the other; every `.xml` one is valid JUnit.
fn files_text(dir: &Path) -> Result<String, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("out dir")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    let mut text = String::new();
    for f in &files {
        if f.extension().is_some_and(|e| e == "xml") {
            xmllint(f).map_err(|e| format!("{} is not valid JUnit: {e}", f.display()))?;
        }
        text.push_str(&std::fs::read_to_string(f).unwrap_or_default());
    }
    Ok(text)
}

/// Every case folder, sorted; a folder without `case.yaml` is a mistake, not a skip.
fn cases() -> Vec<PathBuf> {
    let filter = std::env::var("CASE").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(repo_root().join(CASES))
        .expect("tests/cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(&filter))
        .collect();
    dirs.sort();
    dirs
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read case folder") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The value a `json:` key names: a JSON pointer, or `suite › step › pointer` /
/// `suite › pointer` (suites by id, steps by name, as the console shows them).
fn lookup<'a>(report: &'a Value, key: &str) -> Result<Option<&'a Value>, String> {
    let parts: Vec<&str> = key.split(" › ").collect();
    let (base, pointer) = match parts[..] {
        [pointer] => (report, pointer),
        [suite, pointer] => (find(report, "suites", "id", suite)?, pointer),
        [suite, step, pointer] => {
            let suite = find(report, "suites", "id", suite)?;
            (find(suite, "steps", "name", step)?, pointer)
        }
        _ => return Err(format!("`{key}`: at most `suite › step › /pointer`")),
    };
    Ok(base.pointer(pointer))
}

fn find<'a>(in_: &'a Value, list: &str, key: &str, want: &str) -> Result<&'a Value, String> {
    let items = in_[list]
        .as_array()
        .ok_or(format!("no `{list}` in {in_}"))?;
    items.iter().find(|i| i[key] == want).ok_or_else(|| {
        let have: Vec<&Value> = items.iter().map(|i| &i[key]).collect();
        format!("no {list} item with {key} `{want}`; there are {have:?}")
    })
}

/// The case's complaint, if any, naming the run and showing its output.
fn run_case(dir: &Path) -> Result<(), String> {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(dir.join("case.yaml"))
        .map_err(|e| format!("{CASES}/{name}: no case.yaml ({e})"))?;
    let case: Case =
        serde_saphyr::from_str(&text).map_err(|e| format!("{CASES}/{name}/case.yaml: {e}"))?;
    let copy = case.copy.then(|| {
        let tmp = tempfile::tempdir().expect("tempdir");
        copy_tree(dir, tmp.path());
        tmp
    });
    let folder = copy.as_ref().map_or(dir, |t| t.path()).to_path_buf();
    let case_arg = if copy.is_some() || case.cwd.is_some() {
        folder.display().to_string()
    } else {
        format!("{CASES}/{name}")
    };
    let cwd = case.cwd.as_ref().map_or_else(repo_root, |c| folder.join(c));
    if !cwd.is_dir() {
        return Err(format!(
            "{CASES}/{name}: cwd `{}` is no folder",
            cwd.display()
        ));
    }
    // Each server named by its placeholder: `{stdio}`, `{url}`, `{NAME}`.
    let mut targets: Vec<(String, String)> = Vec::new();
    let mut http_servers = Vec::new();
    let mut all = Vec::new();
    if let Some(flags) = &case.stdio {
        all.push(("stdio".to_string(), Server::Stdio(flags.clone())));
    }
    if let Some(flags) = &case.http {
        all.push(("url".to_string(), Server::Http(flags.clone())));
    }
    for (key, server) in &case.servers {
        let copy = match server {
            Server::Stdio(f) => Server::Stdio(f.clone()),
            Server::Http(f) => Server::Http(f.clone()),
        };
        all.push((key.clone(), copy));
    }
    for (key, server) in all {
        let target = match server {
            Server::Stdio(flags) => {
                let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
                stdio_target(&flags)
            }
            Server::Http(flags) => {
                let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
                let server = HttpServer::start(&flags);
                let url = server.url.clone();
                http_servers.push(server);
                url
            }
        };
        targets.push((format!("{{{key}}}"), target));
    }
    for (i, command) in case.runs.iter().enumerate() {
        let out = tempfile::tempdir().expect("tempdir");
        let fill = |arg: &str| {
            let mut arg = arg
                .replace("{case}", &case_arg)
                .replace("{out}", out.path().to_str().expect("utf-8 temp path"));
            for (key, target) in &targets {
                arg = arg.replace(key, target);
            }
            arg
        };
        if !command.put.is_empty() && copy.is_none() {
            return Err(format!("{CASES}/{name}: `put` needs `copy: true`"));
        }
        for (dest, source) in &command.put {
            std::fs::copy(folder.join(source), folder.join(dest))
                .map_err(|e| format!("{CASES}/{name}: put {dest}: {source}: {e}"))?;
        }
        let args: Vec<String> = command.args.iter().map(|a| fill(a)).collect();
        // A file the case names must be there, unless the run is to write it.
        let writes = [
            "--write-baseline",
            "--json",
            "--junit",
            "--html",
            "--sarif",
            "--out",
        ];
        for (j, arg) in command.args.iter().enumerate() {
            let written = j > 0 && writes.contains(&command.args[j - 1].as_str());
            let file = arg.strip_prefix("{case}/").filter(|_| !written);
            if file.is_some_and(|file| !folder.join(file).exists()) {
                return Err(format!(
                    "{CASES}/{name}: run {} names `{arg}`, which the folder does not hold",
                    i + 1
                ));
            }
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = case
            .env
            .iter()
            .chain(&command.env)
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let r = run_in(&cwd, &args, &env);
        let what = format!(
            "{CASES}/{name} ({}), run {}: {args:?}\n{r:?}",
            case.shows,
            i + 1
        );
        let fail = |why: String| format!("{why}\n  in {what}");
        if r.code != command.code {
            return Err(fail(format!("exit {} instead of {}", r.code, command.code)));
        }
        let written = files_text(out.path()).map_err(fail)?;
        for file in &command.junit_10 {
            xmllint_against(&out.path().join(file), JUNIT_10_XSD).map_err(|e| {
                fail(format!(
                    "{{out}}/{file} is not valid against {JUNIT_10_XSD}: {e}"
                ))
            })?;
        }
        for file in &command.not_junit_10 {
            let path = out.path().join(file);
            if !path.is_file() {
                return Err(fail(format!("{{out}}/{file} was not written")));
            }
            if xmllint_against(&path, JUNIT_10_XSD).is_ok() {
                return Err(fail(format!(
                    "{{out}}/{file} is valid against {JUNIT_10_XSD}"
                )));
            }
        }
        let mut files = String::new();
        for (file, needles) in &command.files {
            let text = std::fs::read_to_string(folder.join(file))
                .map_err(|e| format!("{file}: {e}\n  in {what}"))?;
            for needle in needles {
                if !text.contains(&fill(needle)) {
                    return Err(fail(format!("{needle:?} is not in {file}:\n{text}")));
                }
            }
            files.push_str(&text);
        }
        for (file, needles) in &command.files_lack {
            let text = std::fs::read_to_string(folder.join(file))
                .map_err(|e| format!("{file}: {e}\n  in {what}"))?;
            for needle in needles {
                if text.contains(&fill(needle)) {
                    return Err(fail(format!("{needle:?} is in {file}:\n{text}")));
                }
            }
        }
        for (sub, want) in &command.listing {
            let mut names: Vec<String> = std::fs::read_dir(folder.join(fill(sub)))
                .map_err(|e| fail(format!("{sub}: {e}")))?
                .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            if &names != want {
                return Err(fail(format!("{sub} holds {names:?}, not {want:?}")));
            }
        }
        let everything = format!("{}{written}{files}", r.all_output());
        let musts = [
            ("stdout", &command.stdout, &r.stdout),
            ("stderr", &command.stderr, &r.stderr),
            ("stdout or stderr", &command.output, &r.all_output()),
            ("the reports", &command.reports, &written),
            ("any output", &command.anywhere, &everything),
        ];
        for (place, needles, text) in musts {
            for needle in needles {
                if !text.contains(&fill(needle)) {
                    return Err(fail(format!("{needle:?} is not in {place}")));
                }
            }
        }
        for (place, file, text) in [
            ("stdout", &command.stdout_is, &r.stdout),
            ("stderr", &command.stderr_is, &r.stderr),
        ] {
            let Some(file) = file else { continue };
            let pattern = std::fs::read_to_string(folder.join(file))
                .map_err(|e| fail(format!("{place}_is: {file}: {e}")))?;
            if let Err(why) = matches_pattern(&fill(&pattern), text) {
                return Err(fail(format!("{place} is not as {file} says: {why}")));
            }
        }
        let must_nots = [
            ("stdout", &command.not_stdout, &r.stdout),
            ("stderr", &command.not_stderr, &r.stderr),
            ("some output", &command.absent, &everything),
        ];
        for (place, needles, text) in must_nots {
            for needle in needles {
                if text.contains(&fill(needle)) {
                    return Err(fail(format!("{needle:?} is in {place}:\n{written}{files}")));
                }
            }
        }
        if command.json.is_empty()
            && command.json_text.is_empty()
            && command.json_starts.is_empty()
            && command.json_len.is_empty()
        {
            continue;
        }
        let file = command.json_file.as_deref().unwrap_or("result.json");
        let text = std::fs::read_to_string(out.path().join(file))
            .map_err(|e| format!("{{out}}/{file}: {e}\n  in {what}"))?;
        let report: Value = serde_json::from_str(&text).map_err(|e| fail(e.to_string()))?;
        for (key, want) in &command.json {
            let got = lookup(&report, key).map_err(fail)?;
            let same = match (got, want) {
                (None, Value::Null) => true,
                (got, want) => got == Some(want),
            };
            if !same {
                return Err(fail(format!("{key} is {got:?}, not {want}, in {report:#}")));
            }
        }
        let text_checks: [(_, TextTest, &str); 2] = [
            (&command.json_text, |s, p| s.contains(p), "without"),
            (
                &command.json_starts,
                |s, p| s.starts_with(p),
                "not starting with",
            ),
        ];
        for (checks, holds, lacking) in text_checks {
            for (key, part) in checks {
                let got = lookup(&report, key).map_err(fail)?;
                if !got.and_then(Value::as_str).is_some_and(|s| holds(s, part)) {
                    return Err(fail(format!(
                        "{key} is {got:?}, {lacking} {part:?}, in {report:#}"
                    )));
                }
            }
        }
        for (key, len) in &command.json_len {
            let got = lookup(&report, key).map_err(fail)?;
            if got.and_then(Value::as_array).map(Vec::len) != Some(*len) {
                return Err(fail(format!(
                    "{key} is {got:?}, not {len} items, in {report:#}"
                )));
            }
        }
    }
    Ok(())
}

#[test]
fn every_case_gives_what_it_says() {
    let all = cases();
    assert!(!all.is_empty(), "the cases of tests/cases/ were found");
    let queue = Mutex::new(all.iter());
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..WORKERS {
            s.spawn(|| {
                loop {
                    let Some(dir) = queue.lock().unwrap().next() else {
                        break;
                    };
                    let started = std::time::Instant::now();
                    let outcome = std::panic::catch_unwind(|| run_case(dir))
                        .unwrap_or_else(|_| Err(format!("{} panicked", dir.display())));
                    let name = dir.file_name().unwrap().to_string_lossy();
                    let took = started.elapsed().as_secs_f64();
                    let said = if outcome.is_ok() { "ok" } else { "FAILED" };
                    eprintln!("case {name}: {said} ({took:.1} s)");
                    if let Err(why) = outcome {
                        failures.lock().unwrap().push(why);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        all.len(),
        failures.join("\n\n")
    );
}

/// The wildcard of an expected-output file: any text within one line.
const ANY: &str = "~~~";

/// `text` line by line as `pattern` says: each line equal, or, where the pattern line has
/// [`ANY`], matching it with any text in its place. The first line that differs, when not.
fn matches_pattern(pattern: &str, text: &str) -> Result<(), String> {
    let want: Vec<&str> = pattern.lines().collect();
    let got: Vec<&str> = text.lines().collect();
    for (i, line) in want.iter().enumerate() {
        let Some(actual) = got.get(i) else {
            return Err(format!("line {} is missing: expected {line:?}", i + 1));
        };
        let parts: Vec<String> = line.split(ANY).map(regex::escape).collect();
        let re = regex::Regex::new(&format!("^{}$", parts.join(".*"))).expect("an escaped pattern");
        if !re.is_match(actual) {
            return Err(format!("line {}: expected {line:?}, got {actual:?}", i + 1));
        }
    }
    match got.get(want.len()) {
        Some(extra) => Err(format!(
            "line {} is one too many: {extra:?}",
            want.len() + 1
        )),
        None => Ok(()),
    }
}

#[test]
fn expected_output_patterns_match_lines_with_wildcards() {
    assert!(matches_pattern("a ~~~ b\nc\n", "a 12 ms b\nc\n").is_ok());
    assert!(
        matches_pattern("a (1.5)\n", "a (1x5)\n").is_err(),
        "no regex outside ~~~"
    );
    assert!(
        matches_pattern("a\n", "a\nb\n")
            .unwrap_err()
            .contains("one too many")
    );
    assert!(
        matches_pattern("a\nb\n", "a\n")
            .unwrap_err()
            .contains("missing")
    );
    assert!(
        matches_pattern("x ~~~\n", "y 1\n")
            .unwrap_err()
            .contains("line 1")
    );
}
