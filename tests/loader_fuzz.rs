//! A bounded, deterministic fuzz of the loader: the repository's own scenario, pack,
//! config, rules and baseline files, mutated (byte flips, truncation, deep nesting, huge
//! numbers, invalid UTF-8, duplicated lines, splices), are validated in-process as
//! `mcpspec validate` / `run` load them. Every mutant must load or be refused with
//! positioned errors: no panic, no stack overflow, bounded time. A failure prints the
//! seed and the mutant; `FUZZ_SEED=N FUZZ_CASES=M` reruns or widens the search.
#![allow(unsafe_code, reason = "the child's peak memory read with libc::wait4")]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{repo_root, run};
use mcpspec::ground::load_error::LoadErrors;

/// Each mutant is loaded on a thread with the stack of a process's main thread, where
/// `mcpspec validate` does its work (test threads have only 2 MiB).
const STACK: usize = 8 * 1024 * 1024;
/// The whole fuzz stops generating after this long (it stays deterministic: a prefix of
/// the same sequence).
const BUDGET: Duration = Duration::from_secs(15);
const DEFAULT_CASES: u64 = 400;
/// One load taking longer than this is a hang.
const CASE_LIMIT: Duration = Duration::from_secs(10);

/// xorshift64*: tiny, seeded, enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Scenario,
    /// A file inside a pack folder (the folder is loaded).
    Pack,
    Config,
    Rules,
    Baseline,
}

struct Seed {
    kind: Kind,
    /// The file to mutate (for a pack, one of its files).
    file: PathBuf,
    /// The pack folder, for `Kind::Pack`.
    pack: Option<PathBuf>,
}

fn seeds() -> Vec<Seed> {
    let root = repo_root();
    let mut seeds = Vec::new();
    let yaml_files = |dir: &Path| -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        files
    };
    for file in yaml_files(&root.join("examples/scenarios")) {
        seeds.push(Seed {
            kind: Kind::Scenario,
            file,
            pack: None,
        });
    }
    for pack in [
        "specs/security",
        "specs/cross-era",
        "specs/conformance-2026-07-28",
    ] {
        let dir = root.join(pack);
        for file in yaml_files(&dir).into_iter().take(4) {
            seeds.push(Seed {
                kind: Kind::Pack,
                file,
                pack: Some(dir.clone()),
            });
        }
    }
    for (kind, file) in [
        (Kind::Config, "tests/golden/init/mcpspec.yaml"),
        (Kind::Rules, "examples/scenarios/contract/rules.yaml"),
        (Kind::Baseline, "tests/interop/baselines/python.yaml"),
    ] {
        seeds.push(Seed {
            kind,
            file: root.join(file),
            pack: None,
        });
    }
    seeds
}

/// Keys whose values the loader checks beyond their YAML type (` KEY: ` as written).
const CHECKED_KEYS: &[&str] = &[
    " path: ",
    " timeout: ",
    " interval: ",
    " count: ",
    " schemaFile: ",
    " matches: ",
    " params: ",
    " text: ",
    " equals: ",
    " schema: ",
    " length: ",
    " jobs: ",
];

/// Values put in place of a key's value: deep nesting of every kind the loader parses
/// (flow collections, JSONPath, templates), numbers beyond every range, durations that
/// overflow a deadline.
fn hostile_values() -> Vec<Vec<u8>> {
    let mut s: Vec<Vec<u8>> = [
        "2147483648",
        "18446744073709551616",
        "-1",
        "1e400",
        ".nan",
        "18446744073709551615s",
        "99999999999h",
        "0s",
        "/dev/zero",
        ".",
    ]
    .iter()
    .map(|t| t.as_bytes().to_vec())
    .collect();
    // Bombs: values that load fast and cost without bound once evaluated or compiled.
    // (Patterns just past the 32 KiB bound here: the binary test below takes the 1 MiB ones.)
    s.extend(
        bombs(40_000)
            .into_iter()
            .map(|(_, _, value)| value.into_bytes()),
    );
    for n in [100, 4000] {
        s.push(format!("\"$[?{}@.a{}]\"", "(".repeat(n), ")".repeat(n)).into_bytes());
        s.push(format!("\"$.a{}\"", "[?@.b".repeat(n) + &"]".repeat(n)).into_bytes());
        // Filters in filters: parsing time doubles per level.
        s.push(format!("\"$.a{}\"", "[?@.b".repeat(n / 5) + &"]".repeat(n / 5)).into_bytes());
        s.push(format!("\"{{{{ {}a{} }}}}\"", "(".repeat(n), ")".repeat(n)).into_bytes());
        s.push(format!("\"{}1{}\"", "{{ [".repeat(n), "] }}".repeat(n)).into_bytes());
        s.push(format!("{}1{}", "[".repeat(n), "]".repeat(n)).into_bytes());
        s.push(format!("{}1{}", "{a: ".repeat(n), "}".repeat(n)).into_bytes());
    }
    s
}

/// Template and regex bombs, as (what, the key they go under, a YAML value): each passed
/// `validate` once and then took gigabytes or minutes.
fn bombs(long: usize) -> Vec<(&'static str, &'static str, String)> {
    vec![
        ("list repeat", "text", "\"{{ [1]*100000000 }}\"".into()),
        (
            "list repeat in text",
            "text",
            "\"x{{ [1]*100000000 }}\"".into(),
        ),
        (
            "list repeat joined to text",
            "text",
            "\"{{ 'x' ~ ([1]*100000000) }}\"".into(),
        ),
        (
            "list repeat as string",
            "text",
            "\"{{ ([1]*100000000)|string }}\"".into(),
        ),
        (
            "a list that shares itself, as text",
            "text",
            "\"{% set a = [1,1,1,1,1,1,1,1,1,1] %}{% set b = [a,a,a,a,a,a,a,a,a,a] %}{% set c = [b,b,b,b,b,b,b,b,b,b] %}{% set d = [c,c,c,c,c,c,c,c,c,c] %}{% set e = [d,d,d,d,d,d,d,d,d,d] %}{% set f = [e,e,e,e,e,e,e,e,e,e] %}{% set g = [f,f,f,f,f,f,f,f,f,f] %}{{ g|string|length }}\"".into(),
        ),
        (
            "nested loops",
            "text",
            "\"{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\""
                .into(),
        ),
        (
            "long regex",
            "matches",
            format!("\"({}\"", "a".repeat(long)),
        ),
        (
            "huge compiled regex",
            "matches",
            "\"(?:a{1000}){1000}\"".into(),
        ),
        (
            "schema pattern of 1 MiB",
            "schema",
            format!("{{ type: string, pattern: \"{}\" }}", ".".repeat(long)),
        ),
        // "did you mean" compared it with every rule id: minutes for 1 MiB.
        ("unknown rule of 1 MiB", "rule", "k".repeat(long)),
        (
            "schema patternProperties key",
            "schema",
            format!(
                "{{ patternProperties: {{ \"{}\": {{}} }} }}",
                "x".repeat(long)
            ),
        ),
    ]
}

/// Lines inserted by the mutations: keys with values beyond their ranges, deep block
/// nesting, YAML features the fast loader leaves to serde-saphyr.
fn hostile_snippets() -> Vec<Vec<u8>> {
    let deep = |open: &str, middle: &str, close: &str, n: usize| {
        format!("{}{middle}{}", open.repeat(n), close.repeat(n)).into_bytes()
    };
    let mut s: Vec<Vec<u8>> = [
        "count: 2147483648",
        "count: 18446744073709551616",
        "count: -1",
        "timeout: 18446744073709551615s",
        "timeout: 0s",
        "interval: 99999999999h",
        "retry: { count: 4294967295, interval: 1000000000d }",
        "jobs: 99999999999999",
        "length: 1e400",
        "gte: .inf",
        "code: 99999999999999999999",
        "schemaFile: /dev/zero",
        "schemaFile: .",
        "scenario: a\nscenario: b",
        "&a [*a, *a]",
        "!!binary AAAA",
        "\t",
        "\u{feff}",
    ]
    .iter()
    .map(|t| t.as_bytes().to_vec())
    .collect();
    for n in [70, 1000, 5000] {
        s.push(deep("[", "1", "]", n));
        s.push(deep("{a: ", "1", "}", n));
        let mut path = b"path: \"$".to_vec();
        path.extend(deep("[?(", "@.a", ")]", n / 2));
        path.push(b'"');
        s.push(path);
        let mut template = b"x: \"{{ ".to_vec();
        template.extend(deep("(", "a", ")", n));
        template.extend(b" }}\"");
        s.push(template);
        let mut block = Vec::new();
        for depth in 0..n.min(2000) {
            block.extend(format!("{}k:\n", " ".repeat(depth)).into_bytes());
        }
        s.push(block);
    }
    s
}

fn mutate(
    rng: &mut Rng,
    original: &[u8],
    others: &[Vec<u8>],
    hostile: &[Vec<u8>],
    values: &[Vec<u8>],
) -> Vec<u8> {
    let mut text = original.to_vec();
    let rounds = 1 + rng.below(3);
    for _ in 0..rounds {
        let at = rng.below(text.len() + 1);
        // The start of the line `at` is on, and its indentation.
        let line_start = text[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let indent: Vec<u8> = text[line_start..]
            .iter()
            .take_while(|&&b| b == b' ')
            .copied()
            .collect();
        // Hostile values (3) are the likeliest: they reach the checks behind the parser.
        let op = rng.below(12);
        match if op >= 9 { 3 } else { op } {
            0 => {
                // Flip a byte to something structural or undecodable.
                if at < text.len() {
                    text[at] = *rng.pick(b":-[]{}\"'&*!|>#%@`\n\t \xff\xc3\x00");
                }
            }
            1 => text.truncate(at),
            2 => {
                // A hostile line, indented like its neighbour.
                let mut line = indent.clone();
                line.extend(rng.pick(hostile));
                line.push(b'\n');
                text.splice(line_start..line_start, line);
            }
            3 => {
                // A hostile value in place of the value of a key the loader checks
                // (anywhere in the file), else of any key on this line; up to the end of
                // the line, or of the entry in a flow mapping.
                let checked: Vec<usize> = CHECKED_KEYS
                    .iter()
                    .flat_map(|key| {
                        let text = &text;
                        (0..text.len().saturating_sub(key.len()))
                            .filter(move |&i| text[i..].starts_with(key.as_bytes()))
                            .map(move |i| i + key.len() - 2)
                    })
                    .collect();
                let colons: Vec<usize> = if !checked.is_empty() && rng.below(3) > 0 {
                    checked
                } else {
                    let end = text[line_start..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(text.len(), |i| line_start + i);
                    (line_start..end)
                        .filter(|&i| text[i] == b':' && text.get(i + 1) == Some(&b' '))
                        .collect()
                };
                if !colons.is_empty() {
                    let colon = *rng.pick(&colons);
                    let end = text[colon..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(text.len(), |i| colon + i);
                    let line_start = text[..colon]
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |i| i + 1);
                    let flow = text[line_start..colon].contains(&b'{');
                    let value_end = if flow {
                        (colon..end)
                            .find(|&i| text[i] == b',' || text[i] == b'}')
                            .unwrap_or(end)
                    } else {
                        end
                    };
                    let mut value = b" ".to_vec();
                    value.extend(rng.pick(values));
                    text.splice(colon + 1..value_end, value);
                }
            }
            4 => {
                // Invalid UTF-8: a lone continuation byte, an overlong form, a cut sequence.
                let bad: &[&[u8]] = &[b"\x80", b"\xc0\xaf", b"\xe2\x82", b"\xff\xfe"];
                text.splice(at..at, rng.pick(bad).iter().copied());
            }
            5 => {
                // Duplicate the line (duplicate keys, duplicate step names).
                let end = text[line_start..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(text.len(), |i| line_start + i + 1);
                let line = text[line_start..end].to_vec();
                text.splice(line_start..line_start, line);
            }
            6 => {
                // Splice in a slice of another file.
                let other = rng.pick(others);
                let from = rng.below(other.len());
                let len = rng.below(400).min(other.len() - from);
                text.splice(at..at, other[from..from + len].iter().copied());
            }
            7 => {
                // Replace a number with a huge one.
                if let Some(d) = text[at..].iter().position(u8::is_ascii_digit) {
                    let start = at + d;
                    let end = text[start..]
                        .iter()
                        .position(|b| !b.is_ascii_digit())
                        .map_or(text.len(), |i| start + i);
                    let huge: &[&[u8]] = &[
                        b"4294967296",
                        b"18446744073709551616",
                        b"2147483648",
                        b"1e999",
                    ];
                    text.splice(start..end, rng.pick(huge).iter().copied());
                }
            }
            _ => {
                // Delete a range.
                let end = (at + rng.below(200)).min(text.len());
                text.drain(at..end);
            }
        }
    }
    text
}

/// Load `path` as `mcpspec` loads a file of this kind.
fn load(kind: Kind, path: &Path) -> Result<(), LoadErrors> {
    match kind {
        Kind::Scenario | Kind::Pack => {
            let inputs = mcpspec::language::dsl::params::ParamInputs {
                release_steps: true,
                ..Default::default()
            };
            mcpspec::language::dsl::load::load_all(&[path.to_path_buf()], &inputs).map(|_| ())
        }
        Kind::Config => mcpspec::face::config::Config::find(Some(path)).map(|_| ()),
        Kind::Rules => mcpspec::language::contract_rules::Rules::load(path).map(|_| ()),
        Kind::Baseline => mcpspec::face::baseline::Baseline::load(path).map(|_| ()),
    }
}

/// How a guarded load ended.
enum Outcome {
    Hung,
    Panicked,
    Loaded,
    Refused(LoadErrors),
}

/// Load `target` as `mcpspec` loads a file of this kind, and render its errors as the
/// console does (a snippet can panic too), on a thread of its own: a panic or a load
/// that does not finish in [`CASE_LIMIT`] is an outcome, not the end of the test (a hung
/// thread is left behind: the test ends with the failure).
fn load_guarded(kind: Kind, target: PathBuf) -> Outcome {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            let outcome = std::panic::catch_unwind(|| {
                load(kind, &target).inspect_err(|errors| {
                    errors.render();
                })
            });
            let _ = tx.send(outcome);
        })
        .unwrap();
    match rx.recv_timeout(CASE_LIMIT) {
        Err(_) => Outcome::Hung,
        Ok(Err(_)) => Outcome::Panicked,
        Ok(Ok(Ok(()))) => Outcome::Loaded,
        Ok(Ok(Err(errors))) => Outcome::Refused(errors),
    }
}

/// The lines of `text` as YAML counts them: a line break is LF, CRLF or a lone CR (NEL,
/// LS and PS are content).
fn yaml_lines(text: &str) -> Vec<&str> {
    text.split("\r\n")
        .flat_map(|part| part.split(['\n', '\r']))
        .collect()
}

/// What is wrong with the way a mutant was refused, if anything: an error must have a
/// position (or be about the whole file), and in the mutated file itself a position
/// must exist (a line of it; a column at most one past its last character).
fn judge(errors: &LoadErrors, file: &Path, text: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(text);
    let lines = yaml_lines(&text);
    for e in &errors.0 {
        let positioned = e.pos.is_some();
        // File-level errors that have no better place: an empty file.
        let file_level = e.message == "file is empty";
        if !positioned && !file_level {
            return Some(format!("an error without file:line:col: {}", e.render()));
        }
        let Some(pos) = e.pos.as_ref().filter(|p| Path::new(p.file_name()) == file) else {
            continue;
        };
        let fits = lines
            .get(pos.line as usize - 1)
            .is_some_and(|line| pos.col as usize <= line.chars().count() + 1);
        if !fits {
            return Some(format!(
                "an error at {}:{}, not a place in the file: {}",
                pos.line,
                pos.col,
                e.render()
            ));
        }
    }
    if errors.0.is_empty() {
        return Some("an empty error list".into());
    }
    None
}

#[test]
fn mutated_inputs_load_or_fail_with_positions_never_crash() {
    // On a thread with the main thread's stack (8 MiB), where the binary loads files
    // (a test thread has 2 MiB; compile workers get 8 MiB too, dsl/compile/many.rs).
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(mutated_inputs_on_this_thread)
        .unwrap()
        .join()
        .unwrap();
}

fn mutated_inputs_on_this_thread() {
    let seed: u64 = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6d63_7073_7065_6321);
    let cases: u64 = std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    let seeds = seeds();
    let originals: Vec<Vec<u8>> = seeds
        .iter()
        .map(|s| std::fs::read(&s.file).unwrap())
        .collect();
    let hostile = hostile_snippets();
    let values = hostile_values();
    let started = Instant::now();
    let mut problems = Vec::new();
    let mut ran = 0;
    let (mut loaded, mut refused) = (0, 0);
    for case in 0..cases {
        if started.elapsed() > BUDGET {
            break;
        }
        let case_seed = seed ^ case.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut rng = Rng(case_seed);
        let index = rng.below(seeds.len());
        let s = &seeds[index];
        let mutant = mutate(&mut rng, &originals[index], &originals, &hostile, &values);
        let dir = tempfile::tempdir().unwrap();
        let (target, file) = match &s.pack {
            Some(pack) => {
                let copy = dir.path().join(pack.file_name().unwrap());
                std::fs::create_dir(&copy).unwrap();
                for entry in std::fs::read_dir(pack).unwrap() {
                    let p = entry.unwrap().path();
                    if p.is_file() {
                        std::fs::copy(&p, copy.join(p.file_name().unwrap())).unwrap();
                    }
                }
                let file = copy.join(s.file.file_name().unwrap());
                (copy, file)
            }
            None => {
                let file = dir.path().join(s.file.file_name().unwrap());
                (file.clone(), file)
            }
        };
        std::fs::write(&file, &mutant).unwrap();
        let kind = s.kind;
        let outcome = load_guarded(kind, target);
        let hung = matches!(outcome, Outcome::Hung);
        ran += 1;
        let problem = match outcome {
            Outcome::Hung => Some(format!("still loading after {CASE_LIMIT:?}")),
            Outcome::Panicked => Some("panicked".to_string()),
            Outcome::Loaded => {
                loaded += 1;
                None
            }
            Outcome::Refused(errors) => {
                refused += 1;
                judge(&errors, &file, &mutant)
            }
        };
        if let Some(p) = problem {
            let shown = String::from_utf8_lossy(&mutant);
            let shown: String = shown.chars().take(1500).collect();
            problems.push(format!(
                "case {case} (FUZZ_SEED={seed} FUZZ_CASES={}), {kind:?} {}: {p}\n--- mutant (first 1500 chars)\n{shown}",
                case + 1,
                s.file.display()
            ));
            if problems.len() >= 5 || hung {
                break;
            }
        }
    }
    eprintln!(
        "{ran} mutants in {:?}: {loaded} loaded, {refused} refused",
        started.elapsed()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    assert!(ran >= 50, "too few mutants in the time budget: {ran}");
    assert!(
        refused > 0 && loaded > 0,
        "the mutations both break and keep files"
    );
}

/// The binary on the most hostile inputs: exit 2 with a position, never a signal
/// (a stack overflow aborts) or exit 101 (a panic).
#[test]
fn the_binary_refuses_hostile_inputs_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let steps = "scenario: s\nsteps:\n  - name: a\n    request: { method: tools/list }\n";
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "deep flow",
            format!(
                "{steps}    params: {}1{}\n",
                "[".repeat(20_000),
                "]".repeat(20_000)
            )
            .into_bytes(),
        ),
        (
            "deep JSONPath",
            format!(
                "{steps}    expect:\n      - {{ path: \"$[?{}@.a{}]\", exists: true }}\n",
                "(".repeat(4000),
                ")".repeat(4000)
            )
            .into_bytes(),
        ),
        (
            "deep template",
            format!(
                "{steps}    params: {{ x: \"{{{{ {}a{} }}}}\" }}\n",
                "(".repeat(4000),
                ")".repeat(4000)
            )
            .into_bytes(),
        ),
        (
            "deep inline schema",
            format!(
                "{steps}    expect:\n      - schema: {}{{}}{}\n",
                "{ items: ".repeat(3000),
                " }".repeat(3000)
            )
            .into_bytes(),
        ),
        ("undecodable", [steps.as_bytes(), b"    # \xff\n"].concat()),
    ];
    for (what, text) in cases {
        let path = dir.path().join("s.yaml");
        std::fs::write(&path, text).unwrap();
        let out = run(&["validate", path.to_str().unwrap()]);
        assert_eq!(out.code, 2, "{what}: {out:?}");
        assert!(
            out.stderr.contains(&format!("--> {}:", path.display())),
            "{what}: the error has file:line:col: {}",
            out.stderr.chars().take(2000).collect::<String>()
        );
    }
}

/// Peak resident set (kB) and wall time of `mcpspec ARGS`, its exit code, and its stderr:
/// the child is reaped with `wait4`, whose `ru_maxrss` is that child's own peak. Linux
/// only: `ru_maxrss` is bytes on macOS, and Windows has no `wait4`.
#[cfg(target_os = "linux")]
#[allow(clippy::zombie_processes)] // reaped by `wait4` below, not `Child::wait`
fn measured(args: &[&str], limit: Duration) -> (i32, Duration, i64, String) {
    use std::process::{Command, Stdio};
    let started = Instant::now();
    let mut child = Command::new(common::mcpspec())
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcpspec starts");
    let stderr = common::drain(child.stderr.take().unwrap());
    let pid = child.id() as libc::pid_t;
    let (mut status, mut usage): (libc::c_int, libc::rusage) = (0, unsafe { std::mem::zeroed() });
    loop {
        // SAFETY: a child of this process, reaped once, here.
        let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if got == pid {
            break;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            panic!("mcpspec {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (
        code,
        started.elapsed(),
        usage.ru_maxrss,
        stderr.join().unwrap(),
    )
}

/// Each bomb through the binary: `validate` refuses it with exit 2 and a position, at
/// once and in little memory, and its error does not repeat the input (a few kB, not MBs).
#[test]
#[cfg(target_os = "linux")]
fn bombs_are_refused_in_bounded_time_and_memory() {
    /// Peak RSS allowed (the input itself is at most 1 MiB, read and parsed a few times).
    const PEAK_KB: i64 = 200 * 1024;
    /// Wall time allowed, on a busy machine (they took 14 s to 444 s before).
    const WALL: Duration = Duration::from_secs(30);
    let dir = tempfile::tempdir().unwrap();
    for (what, key, value) in bombs(1 << 20) {
        let step = match key {
            "text" => format!(
                "    request: {{ method: tools/call, params: {{ name: echo, arguments: {{ text: {value} }} }} }}\n"
            ),
            "rule" => format!("    rule: {value}\n    request: {{ method: tools/list }}\n"),
            "matches" => format!(
                "    request: {{ method: tools/list }}\n    expect:\n      - {{ path: \"$.tools[0].name\", matches: {value} }}\n"
            ),
            _ => format!(
                "    request: {{ method: tools/list }}\n    expect:\n      - schema: {value}\n"
            ),
        };
        let path = dir.path().join("bomb.yaml");
        std::fs::write(
            &path,
            format!("scenario: bomb\nsteps:\n  - name: a\n{step}"),
        )
        .unwrap();
        let (code, wall, peak_kb, stderr) = measured(
            &["validate", path.to_str().unwrap()],
            Duration::from_secs(120),
        );
        let shown: String = stderr.chars().take(1500).collect();
        assert_eq!(code, 2, "{what}: {shown}");
        assert!(
            stderr.contains(&format!("--> {}:", path.display())),
            "{what}: {shown}"
        );
        assert!(wall < WALL, "{what}: took {wall:?}");
        assert!(peak_kb < PEAK_KB, "{what}: peaked at {peak_kb} kB");
        assert!(
            stderr.len() < 8 * 1024,
            "{what}: {} bytes of error output",
            stderr.len()
        );
    }
}

/// Every YAML file of the repository (tests, specs, examples, docs, CI), under `root`.
fn every_yaml_file(root: &Path) -> Vec<PathBuf> {
    const SKIPPED: [&str; 4] = ["target", "vendor", ".git", "node_modules"];
    let mut files = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if !SKIPPED.contains(&name.as_str()) {
                    folders.push(path);
                }
            } else if name.ends_with(".yaml") || name.ends_with(".yml") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// What YAML reads as a line break (CR, LF) or as content a line splitter may not
/// (NEL, LS, PS), and the tab YAML refuses as indentation: each put in one place.
const INSERTED: [&str; 6] = ["\u{85}", "\u{2028}", "\u{2029}", "\t", "\r", "\t\n"];

/// The mutants of one file: each of [`INSERTED`] at a place of its own (after a value,
/// at a line's start, anywhere), and the whole file with CR-only line ends.
fn insertions(rng: &mut Rng, text: &[u8]) -> Vec<Vec<u8>> {
    let boundaries: Vec<usize> = (0..=text.len())
        .filter(|&i| i == text.len() || text[i] & 0xc0 != 0x80)
        .collect();
    let line_ends: Vec<usize> = (0..text.len()).filter(|&i| text[i] == b'\n').collect();
    let mut mutants: Vec<Vec<u8>> = INSERTED
        .iter()
        .map(|inserted| {
            let at = match (rng.below(2), line_ends.is_empty()) {
                (0, false) => *rng.pick(&line_ends) + rng.below(2),
                _ => *rng.pick(&boundaries),
            };
            let mut mutant = text.to_vec();
            mutant.splice(at..at, inserted.bytes());
            mutant
        })
        .collect();
    mutants.push(
        text.iter()
            .map(|&b| if b == b'\n' { b'\r' } else { b })
            .collect(),
    );
    mutants
}

/// Every YAML file of the repository, with a NEL, LS, PS, tab or CR put in, and with
/// CR-only line ends, loaded as a scenario (the configuration as one): loaded or refused
/// with errors at places of the file, rendered; never a panic, never over
/// [`CASE_LIMIT`], and the whole within a gigabyte (issue #40: a NEL after a flow
/// collection panicked the snippet renderer).
#[test]
fn every_yaml_file_with_line_breaks_and_separators_put_in_loads_or_is_refused() {
    let root = repo_root();
    let files = every_yaml_file(&root);
    assert!(files.len() > 250, "{} YAML files found", files.len());
    let mut rng = Rng(0x6e65_6c5f_6c73_7073);
    let mut problems = Vec::new();
    let mut ran = 0;
    let dir = tempfile::tempdir().unwrap();
    for original in &files {
        let text = std::fs::read(original).unwrap();
        let name = original.file_name().unwrap();
        let kind = if name == "mcpspec.yaml" {
            Kind::Config
        } else {
            Kind::Scenario
        };
        for mutant in insertions(&mut rng, &text) {
            let file = dir.path().join(name);
            std::fs::write(&file, &mutant).unwrap();
            ran += 1;
            let problem = match load_guarded(kind, file.clone()) {
                Outcome::Hung => Some(format!("still loading after {CASE_LIMIT:?}")),
                Outcome::Panicked => Some("panicked".to_string()),
                Outcome::Loaded => None,
                Outcome::Refused(errors) => judge(&errors, &file, &mutant),
            };
            if let Some(p) = problem {
                let shown: String = String::from_utf8_lossy(&mutant).chars().take(800).collect();
                problems.push(format!(
                    "{}: {p}\n--- mutant (first 800 chars)\n{shown:?}",
                    original.strip_prefix(&root).unwrap().display()
                ));
            }
        }
        if problems.len() >= 5 {
            break;
        }
    }
    eprintln!("{ran} mutants of {} files", files.len());
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    assert!(ran >= 1500, "{ran} mutants");
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getrusage fills the struct it is given.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
        assert!(
            usage.ru_maxrss < 1024 * 1024,
            "peaked at {} kB",
            usage.ru_maxrss
        );
    }
}

/// 100 aliases of one 10 MiB string (issue #40: 2.0 GB, and 300 aborted under a 4 GB
/// cap): refused where the text they stand for crosses the bound, in little memory.
#[test]
#[cfg(target_os = "linux")]
fn aliases_of_a_large_string_are_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("aliases.yaml");
    let aliases = vec!["*big"; 100].join(", ");
    let text = format!(
        "scenario: aliases\nsteps:\n  - name: a\n    request:\n      method: tools/call\n      params:\n        big: &big {}\n        copies: [{aliases}]\n",
        "x".repeat(10 << 20)
    );
    std::fs::write(&path, text).unwrap();
    let (code, _, peak_kb, stderr) = measured(
        &["validate", path.to_str().unwrap()],
        Duration::from_secs(120),
    );
    let shown: String = stderr.chars().take(1500).collect();
    assert_eq!(code, 2, "{shown}");
    assert!(
        stderr.contains("the aliases of the file stand for more than 64 MiB of text"),
        "{shown}"
    );
    assert!(
        stderr.contains(&format!("--> {}:8:", path.display())),
        "{shown}"
    );
    assert!(peak_kb < 1024 * 1024, "peaked at {peak_kb} kB");
}

/// A thousand regular expressions of 900 bytes in one scenario, each within its own bound
/// (once 38 s and 1.36 GB to validate): the file's budget refuses them with one error at the
/// first one past it, at once.
#[test]
#[cfg(target_os = "linux")]
fn a_thousand_patterns_in_one_file_are_refused_by_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("patterns.yaml");
    let expectations: String = (0..1000)
        .map(|i| {
            format!(
                "      - {{ path: \"$.x\", matches: \"^{i:03}{}\" }}\n",
                "[a-z]".repeat(179)
            )
        })
        .collect();
    std::fs::write(
        &path,
        format!("scenario: s\nsteps:\n  - name: a\n    request: {{ method: tools/list }}\n    expect:\n{expectations}"),
    )
    .unwrap();
    let (code, wall, _, stderr) = measured(
        &["validate", path.to_str().unwrap()],
        Duration::from_secs(120),
    );
    let shown: String = stderr.chars().take(1500).collect();
    assert_eq!(code, 2, "{shown}");
    assert!(stderr.contains("too many regular expressions"), "{shown}");
    assert!(stderr.contains("1 error found"), "{shown}");
    assert!(
        stderr.contains(&format!("--> {}:", path.display())),
        "{shown}"
    );
    assert!(wall < Duration::from_secs(30), "took {wall:?}");
}
