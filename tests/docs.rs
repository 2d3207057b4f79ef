//! The docs stay true: README.md and the book's chapters (`docs/src/*.md`).
//!
//! - the check tables are generated from the packs (`mcpspec list PACKS --markdown`);
//! - every ```yaml block is a valid file of its kind (scenario, pack, config,
//!   rules, baseline, injection rules), checked by `mcpspec validate` or by running it;
//!   a block that starts with `# <file of the repository>` is that file (or an excerpt of it);
//!   deliberately partial blocks are marked ```yaml fragment and stay few;
//! - every command of a ```sh block runs when it can here: an `mcpspec` command whose only
//!   target is the example server (others name servers this machine does not have).
// Unix only: the book's `sh` blocks run as shown, symlinked fixtures.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};

/// README.md, then every chapter of the book, as paths relative to the repository.
fn doc_files() -> Vec<PathBuf> {
    let root = common::repo_root();
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(root.join("docs/src"))
        .expect("docs/src exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.strip_prefix(&root).unwrap().to_path_buf())
        .collect();
    chapters.sort();
    let mut files = vec![PathBuf::from("README.md")];
    files.extend(chapters);
    files
}

fn read(file: &Path) -> String {
    std::fs::read_to_string(common::repo_root().join(file)).unwrap()
}

/// One fenced code block.
struct Block {
    file: PathBuf,
    /// 1-based line of the opening fence.
    line: usize,
    /// The words after the backticks: `yaml`, `yaml fragment`, `sh`…
    info: Vec<String>,
    /// The body, without the fence's indentation.
    text: String,
    /// An HTML comment on the line just before the fence: how the example runs
    /// (`<!-- mcpspec ARGS -->`) or why it does not (`<!-- not run: REASON -->`).
    note: Option<String>,
}

impl Block {
    fn at(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }
    fn lang(&self) -> &str {
        self.info.first().map(String::as_str).unwrap_or("")
    }
    fn tagged(&self, word: &str) -> bool {
        self.info.iter().skip(1).any(|w| w == word)
    }
}

/// Every fenced block of a Markdown file (fences may be indented, as inside a list item).
fn blocks(file: &Path) -> Vec<Block> {
    let text = read(file);
    let mut out = Vec::new();
    let mut open: Option<(usize, usize, Vec<String>, Vec<String>)> = None;
    let mut previous = "";
    let mut note = None;
    for (i, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim_start();
        match &mut open {
            // (A fence's info string has no backtick: "```` ```yaml ````" is inline code.)
            None if trimmed.starts_with("```") && !trimmed[3..].contains('`') => {
                let info = trimmed[3..].split_whitespace().map(str::to_string);
                open = Some((i + 1, indent, info.collect(), Vec::new()));
                note = previous
                    .strip_prefix("<!--")
                    .and_then(|c| c.strip_suffix("-->"))
                    .map(|c| c.trim().to_string());
            }
            None => {}
            Some(_) if trimmed == "```" => {
                let (line, _, info, body) = open.take().unwrap();
                out.push(Block {
                    file: file.to_path_buf(),
                    line,
                    info,
                    text: body.join("\n") + "\n",
                    note: note.take(),
                });
            }
            Some((_, fence_indent, _, body)) => {
                let cut = (*fence_indent).min(indent);
                body.push(line[cut..].to_string());
            }
        }
        previous = trimmed;
    }
    assert!(
        open.is_none(),
        "{}: a code block is not closed",
        file.display()
    );
    out
}

fn all_blocks() -> Vec<Block> {
    doc_files().iter().flat_map(|f| blocks(f)).collect()
}

/// The doc block between `<!-- MARKER:begin -->` and `<!-- MARKER:end -->` (in whichever
/// file of the docs holds it, exactly one) is exactly the output of `mcpspec list PACKS --markdown`.
fn assert_generated_block(marker: &str, packs: &[&str]) {
    let mut args = vec!["list"];
    args.extend_from_slice(packs);
    args.push("--markdown");
    let r = common::run(&args);
    assert_eq!(r.code, 0, "{r:?}");
    let begin = format!("<!-- {marker}:begin -->\n");
    let holders: Vec<PathBuf> = doc_files()
        .into_iter()
        .filter(|f| read(f).contains(&begin))
        .collect();
    let [file] = &holders[..] else {
        panic!("exactly one doc file has the {marker}:begin marker: {holders:?}");
    };
    let doc = read(file);
    let start = doc.find(&begin).unwrap() + begin.len();
    let end = doc
        .find(&format!("<!-- {marker}:end -->"))
        .unwrap_or_else(|| panic!("{} has the {marker}:end marker", file.display()));
    assert!(
        doc[start..end] == r.stdout,
        "the {marker} block of {} is stale: replace it with the output of `mcpspec {}`",
        file.display(),
        args.join(" ")
    );
}

#[test]
fn check_tables_are_generated_from_the_packs() {
    assert_generated_block("checks", &["conformance", "cross-era"]);
}

#[test]
fn security_check_table_is_generated_from_the_pack() {
    assert_generated_block("security-checks", &["security"]);
}

#[test]
fn readme_is_short_and_links_only_into_the_repository() {
    let readme = read(Path::new("README.md"));
    assert!(
        readme.len() < 12 * 1024,
        "README.md is {} bytes: the details belong in the book (docs/src/)",
        readme.len()
    );
    let root = common::repo_root();
    for (i, _) in readme.match_indices("](") {
        let target = &readme[i + 2..];
        let target = &target[..target.find(')').expect("a closed link")];
        assert!(
            !target.contains("://") && !target.starts_with("//"),
            "README.md links outside the repository: {target}"
        );
        let path = target.split('#').next().unwrap();
        assert!(
            path.is_empty() || root.join(path).exists(),
            "README.md links to {target}, which does not exist"
        );
    }
}

/// Every chapter of docs/src/ is in SUMMARY.md and every chapter SUMMARY.md lists exists
/// (mdbook would otherwise leave one out silently, or fail only where it is installed).
#[test]
fn summary_lists_every_chapter() {
    let summary = read(Path::new("docs/src/SUMMARY.md"));
    let mut listed: Vec<String> = summary
        .match_indices("](")
        .map(|(i, _)| {
            let t = &summary[i + 2..];
            t[..t.find(')').unwrap()].to_string()
        })
        .collect();
    listed.sort();
    let mut files: Vec<String> = doc_files()
        .iter()
        .skip(1)
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|n| n != "SUMMARY.md")
        .collect();
    files.sort();
    assert_eq!(
        listed, files,
        "docs/src/SUMMARY.md lists exactly the chapters"
    );
}

/// What a ```yaml block is, from its info string or its top-level keys.
#[derive(Debug, PartialEq)]
enum Kind {
    /// `# path` on the first line names a file of the repository this block shows.
    RepoFile(PathBuf),
    Scenario,
    Pack,
    Config,
    Rules,
    Baseline,
    /// An `injection_rules` file of the security pack.
    InjectionRules,
    /// An eval set (`*.eval.yaml`).
    EvalSet,
    /// `{{#include FILE}}` of a CI recipe (not an mcpspec file).
    Ci,
    Fragment,
}

/// The kind a word of the info string names (```yaml pack).
fn named_kind(word: &str) -> Option<Kind> {
    Some(match word {
        "scenario" => Kind::Scenario,
        "pack" => Kind::Pack,
        "config" => Kind::Config,
        "rules" => Kind::Rules,
        "baseline" => Kind::Baseline,
        "injection-rules" => Kind::InjectionRules,
        "evalset" => Kind::EvalSet,
        "ci" => Kind::Ci,
        "fragment" => Kind::Fragment,
        _ => return None,
    })
}

fn kind_of(b: &Block) -> Kind {
    if let Some(kind) = b.info.iter().skip(1).find_map(|w| named_kind(w)) {
        return kind;
    }
    if let Some(first) = b.text.lines().next().and_then(|l| l.strip_prefix("# ")) {
        let path = first.split_whitespace().next().unwrap_or("");
        if path.contains('/') && common::repo_root().join(path).is_file() {
            return Kind::RepoFile(PathBuf::from(path));
        }
    }
    let top: Vec<&str> = b
        .text
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            if l.starts_with("- ") {
                "-"
            } else {
                l.split(':').next().unwrap()
            }
        })
        .collect();
    let has = |k: &str| top.contains(&k);
    // A reader copies a block into a file and runs it: a bare list of steps is no file
    // mcpspec reads (#38 item 20, the notifications example of expectations.md).
    assert!(
        !has("-"),
        "{}: a bare list of steps is not a scenario file a reader can run: write it whole \
         (`scenario: NAME`, then `steps:`)",
        b.at()
    );
    if has("evalset") {
        Kind::EvalSet
    } else if has("scenario") {
        Kind::Scenario
    } else if has("name") && has("version") {
        Kind::Pack
    } else if has("targets") || has("paths") || has("defaultTarget") {
        Kind::Config
    } else if has("fail") || has("ignore") || has("accept") {
        Kind::Rules
    } else if has("server") || has("client") {
        Kind::Baseline
    } else if has("disable") || has("rules") {
        Kind::InjectionRules
    } else {
        panic!(
            "{}: cannot tell what this YAML block is (top-level keys {top:?}): mark it ```yaml KIND \
             with KIND one of scenario, pack, config, rules, baseline, injection-rules, evalset, fragment",
            b.at()
        )
    }
}

/// Text without comments and blank lines, to compare a block with the file it shows.
fn significant_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| split_comment(l).0.trim_end())
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(str::to_string)
        .collect()
}

fn validate(file: &Path, what: &str, b: &Block) {
    let r = common::run(&["validate", &file.display().to_string()]);
    assert_eq!(
        r.code,
        0,
        "{}: the {what} block is not valid:\n{r:?}",
        b.at()
    );
}

#[test]
fn every_yaml_block_is_a_valid_file_of_its_kind() {
    let root = common::repo_root();
    let dir = tempfile::tempdir().unwrap();
    // Scenario blocks are written to scenarios/, so a `contract` step's `contract/…`
    // finds the example snapshot and rules, as examples/scenarios/contract.yaml does.
    std::fs::create_dir(dir.path().join("scenarios")).unwrap();
    std::os::unix::fs::symlink(
        root.join("examples/scenarios/contract"),
        dir.path().join("scenarios/contract"),
    )
    .unwrap();
    let mut fragments = Vec::new();
    let mut checked = 0;
    for (n, b) in all_blocks()
        .iter()
        .filter(|b| b.lang() == "yaml")
        .enumerate()
    {
        let kind = kind_of(b);
        let written = |sub: &str, name: &str, text: &str| {
            let folder = dir.path().join(format!("{sub}{n}"));
            std::fs::create_dir_all(&folder).unwrap();
            let path = folder.join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        match kind {
            Kind::Fragment => {
                fragments.push(b.at());
                continue;
            }
            Kind::Ci => {
                let include = b
                    .text
                    .trim()
                    .strip_prefix("{{#include ")
                    .and_then(|t| t.strip_suffix("}}"))
                    .unwrap_or_else(|| {
                        panic!("{}: a ci block is one {{{{#include FILE}}}}", b.at())
                    });
                let file = root.join(b.file.parent().unwrap()).join(include);
                let text = std::fs::read_to_string(&file)
                    .unwrap_or_else(|e| panic!("{}: {}: {e}", b.at(), file.display()));
                // `mcpspec run …` (or `load …`), or the mcpspec action with `run:` (its arguments) or
                // `eval-compare:`.
                assert!(
                    text.contains("mcpspec run")
                        || text.contains("mcpspec load")
                        || (text.contains("/mcpspec@")
                            && (text.contains("          run: ")
                                || text.contains("          eval-compare: "))),
                    "{}: a CI recipe runs mcpspec",
                    b.at()
                );
            }
            Kind::RepoFile(path) => {
                let shown = significant_lines(&b.text);
                let file = significant_lines(&read(&path));
                let mut rest = file.iter();
                for line in &shown {
                    assert!(
                        rest.any(|l| l == line),
                        "{}: the block shows {} but this line is not in it (in order): {line:?}",
                        b.at(),
                        path.display()
                    );
                }
                // A file of a pack is valid as part of it (groups, parameters).
                let pack = path
                    .ancestors()
                    .skip(1)
                    .find(|d| root.join(d).join("pack.yaml").is_file())
                    .unwrap_or(&path);
                let r = common::run(&["validate", &pack.display().to_string()]);
                let at = b.at();
                assert_eq!(r.code, 0, "{at}: {} is not valid:\n{r:?}", pack.display());
            }
            Kind::Scenario => {
                let path = dir.path().join(format!("scenarios/block{n}.yaml"));
                std::fs::write(&path, &b.text).unwrap();
                validate(&path, "scenario", b);
                run_example(b, &path, dir.path());
            }
            Kind::Pack => validate(&written("pack", "pack.yaml", &b.text), "pack", b),
            Kind::Config => {
                let path = written("config", "mcpspec.yaml", &b.text);
                // The folders `paths:` names are the reader's: here, empty ones.
                let listed = b.text.lines().find_map(|l| l.strip_prefix("paths: ["));
                for entry in listed
                    .and_then(|l| l.split(']').next())
                    .unwrap_or("")
                    .split(',')
                {
                    let entry = entry.trim();
                    if entry.contains('/') {
                        std::fs::create_dir_all(path.parent().unwrap().join(entry)).unwrap();
                    }
                }
                validate(&path, "config", b)
            }
            Kind::Rules => validate(&written("rules", "rules.yaml", &b.text), "rules", b),
            Kind::EvalSet => {
                let path = written("evalset", "set.eval.yaml", &b.text);
                validate(&path, "eval set", b);
                run_eval_example(b, &path, dir.path());
            }
            Kind::Baseline => {
                let path = written("baseline", "baseline.yaml", &b.text);
                validate(&path, "baseline", b);
                // Its ids name real checks only when it is run with the packs it lists.
                run_documented(b, &path, dir.path());
            }
            Kind::InjectionRules => {
                // The security pack loads the file when its lint runs: an unknown id or a bad
                // pattern makes the step an error.
                let path = written("injection", "rules.yaml", &b.text);
                let set = format!("injection_rules={}", path.display());
                let target = common::stdio_target(&[]);
                let r = common::run(&[
                    "run",
                    "security",
                    "--filter",
                    "security-injection",
                    "--stdio",
                    &target,
                    "--set",
                    &set,
                    "--set",
                    "safe_tools=echo",
                ]);
                assert_eq!(
                    r.code,
                    0,
                    "{}: the injection rules do not load:\n{r:?}",
                    b.at()
                );
                assert!(
                    r.stdout.contains("PASS"),
                    "{}: the lint ran:\n{r:?}",
                    b.at()
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} YAML blocks were checked");
    // Four of them are pack manifests with `git:`/`archive:` imports (sharing-packs.md): they
    // validate only with a lock and a reachable repository, which tests/remote_packs.rs has.
    assert!(
        fragments.len() <= 5,
        "partial YAML blocks are the exception, not the rule: {fragments:?}"
    );
}

/// The example server as the book names it (`target/release/…`, the README's build, alone
/// or inside a quoted `--stdio` command line) → the one built for the tests.
fn with_built_server(word: &str) -> String {
    let server = common::example_server().display().to_string();
    let recorder = format!("{} record ", common::mcpspec().display());
    word.replace("target/release/mcpspec-example-server", &server)
        .replace("target/release/mcpspec record ", &recorder)
}

/// Every command of the book uses the README's release build: a reader who followed the
/// README has `target/release` and no `target/debug` (#38 item 20).
#[test]
fn book_commands_use_the_release_build() {
    for file in doc_files() {
        for (n, line) in read(&file).lines().enumerate() {
            assert!(
                !line.contains("target/debug"),
                "{}:{}: the README builds `target/release`, not `target/debug`: {line}",
                file.display(),
                n + 1
            );
        }
    }
}

/// `<!-- mcpspec ARGS -->` just before a block: the commands the example runs with (`{file}`
/// is the block, written to a file; several joined by ` && mcpspec `) and the exit code the
/// book says the last one has (` → exit N` at the end; default 0, as for the others).
fn documented_commands(b: &Block) -> Option<(Vec<Vec<String>>, i32)> {
    let command = b.note.as_deref()?.strip_prefix("mcpspec ")?;
    let (command, code) = match command.split_once(" → exit ") {
        Some((c, code)) => (c, code.trim().parse().expect("→ exit N")),
        None => (command, 0),
    };
    let commands = command
        .split(" && mcpspec ")
        .map(|c| {
            shell_words::split(c).unwrap_or_else(|e| panic!("{}: cannot split {c:?}: {e}", b.at()))
        })
        .collect();
    Some((commands, code))
}

/// Run the example's documented commands (see [`documented_commands`]) in `dir`, if it has
/// any: the last one's run.
fn run_documented(b: &Block, file: &Path, dir: &Path) -> Option<(common::Run, Vec<String>)> {
    let (commands, code) = documented_commands(b)?;
    let mut last = None;
    for (i, words) in commands.iter().enumerate() {
        let args: Vec<String> = words
            .iter()
            .map(|w| with_built_server(&w.replace("{file}", &file.display().to_string())))
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = common::run_in(dir, &args, &[]);
        let expected = if i + 1 == commands.len() { code } else { 0 };
        assert_eq!(
            r.code,
            expected,
            "{}: `mcpspec {}` does not exit {expected} as the book says:\n{r:?}",
            b.at(),
            words.join(" ")
        );
        last = Some((r, args.iter().map(|a| a.to_string()).collect()));
    }
    last
}

/// An eval set example with a `<!-- mcpspec eval run {file} … -->` note runs as the chapter
/// says: through the local model server the chapter starts on 127.0.0.1:8088 — here on a
/// free port, written into the set in its place (other eval sets are validated only).
fn run_eval_example(b: &Block, file: &Path, dir: &Path) {
    if documented_commands(b).is_none() {
        return;
    }
    let model = common::model_server::ModelServer::start(&[]);
    assert!(
        b.text.contains("http://127.0.0.1:8088"),
        "{}: a run eval set points its profiles at the local model server on 127.0.0.1:8088",
        b.at()
    );
    std::fs::write(file, b.text.replace("http://127.0.0.1:8088", &model.url)).unwrap();
    run_documented(b, file, dir);
}

/// A scenario example runs as the book states it: with the command of its
/// `<!-- mcpspec … -->` comment, or (tagged `run`) against the plain example server over stdio.
/// One that cannot run here says why (`<!-- not run: REASON -->`).
fn run_example(b: &Block, file: &Path, dir: &Path) {
    let run = run_documented(b, file, dir).or_else(|| {
        b.tagged("run").then(|| {
            let target = common::stdio_target(&[]);
            let args: Vec<String> = ["run", &file.display().to_string(), "--stdio", &target]
                .map(String::from)
                .to_vec();
            let r = common::run_in(
                dir,
                &args.iter().map(String::as_str).collect::<Vec<_>>(),
                &[],
            );
            assert_eq!(
                r.code,
                0,
                "{}: the scenario fails against the example server:\n{r:?}",
                b.at()
            );
            (r, args)
        })
    });
    if let Some((r, mut args)) = run {
        if r.code == 0 && !r.stdout.contains(" 0 skipped") {
            // A step skipped for want of a capability or a parameter shows nothing: the example
            // runs where it does what the book says. A step of another era is skipped by design.
            args.push("-v".into());
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let r = common::run_in(dir, &args, &[]);
            for line in r
                .stdout
                .lines()
                .filter(|l| l.trim_start().starts_with("SKIP "))
            {
                assert!(
                    line.contains("step applies to eras"),
                    "{}: a step of the example is skipped: run it with the server, flags and era \
                     it needs (and say so in the chapter):\n{line}\n{r:?}",
                    b.at()
                );
            }
        }
        return;
    }
    assert!(
        b.note
            .as_deref()
            .is_some_and(|n| n.starts_with("not run: ")),
        "{}: say how this example runs: `<!-- mcpspec run {{file}} --stdio \"target/release/mcpspec-example-server FLAGS\" --era ERA -->` \
         on the line before the fence (the chapter should say the same in words), or why it cannot: `<!-- not run: REASON -->`",
        b.at()
    );
}

/// The shell lines of a block, each with its comment: `\` continuations joined. In a
/// ```console block only the lines after a `$ ` prompt (the rest is their output).
fn shell_lines(b: &Block) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in b.text.lines() {
        let line = match line.strip_prefix("$ ") {
            Some(command) => command,
            None if b.lang() == "console" && pending.is_empty() => continue,
            None => line,
        };
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head);
            continue;
        }
        pending.push_str(line);
        let full = std::mem::take(&mut pending);
        let (command, comment) = split_comment(&full);
        if !command.trim().is_empty() {
            out.push((command.trim().to_string(), comment.trim().to_string()));
        }
    }
    out
}

/// `cmd  # comment` → (cmd, comment), a `#` inside quotes left alone.
fn split_comment(line: &str) -> (&str, &str) {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') if i == 0 || line[..i].ends_with(' ') => {
                return (&line[..i], &line[i + 1..]);
            }
            _ => {}
        }
    }
    (line, "")
}

/// Why a documented command cannot run here, if it cannot: it needs a server other than the
/// example server, a shell, or is a placeholder.
fn not_runnable(words: &[String], scratch: &Path) -> Option<String> {
    let root = common::repo_root();
    // The paths before the first flag are inputs; the reader's own do not exist here.
    if let Some(w) = words[1..]
        .iter()
        .take_while(|w| !w.starts_with('-'))
        .find(|w| {
            // A file an earlier command of the book wrote (in the scratch folder) is there.
            (w.contains('/') || w.ends_with(".json"))
                && !root.join(w).exists()
                && !scratch.join(w).exists()
        })
    {
        return Some(format!("the reader's file {w:?}"));
    }
    if let Some(w) = words
        .iter()
        .find(|w| w.contains('$') || w.contains("...") || w.contains('…'))
    {
        return Some(format!("placeholder or shell variable {w:?}"));
    }
    if words.iter().any(|w| w == "--url") {
        return Some("an HTTP server of the reader's".into());
    }
    // `mcpspec record … -- SERVER`: the server after `--`.
    if let Some(server) = words.iter().skip_while(|w| *w != "--").nth(1)
        && !server.starts_with("target/release/mcpspec-example-server")
    {
        return Some(format!("the reader's server {server:?}"));
    }
    for pair in words.windows(2).filter(|p| p[0] == "--stdio") {
        // The recorder in front of the example server runs too (`mcpspec record … -- SERVER`).
        let server = pair[1]
            .strip_prefix("target/release/mcpspec record ")
            .and_then(|rest| rest.split(" -- ").nth(1))
            .unwrap_or(&pair[1]);
        if !server.starts_with("target/release/mcpspec-example-server") {
            return Some(format!("the reader's server {:?}", pair[1]));
        }
    }
    None
}

#[test]
fn every_command_shown_runs_where_it_can() {
    let root = common::repo_root();
    // A scratch folder that sees the repository's files, so reports land outside the tree.
    let dir = tempfile::tempdir().unwrap();
    for entry in ["examples", "specs", "schema", "tests"] {
        std::os::unix::fs::symlink(root.join(entry), dir.path().join(entry)).unwrap();
    }
    let mut ran = Vec::new();
    let mut not_run = Vec::new();
    for b in all_blocks()
        .iter()
        .filter(|b| matches!(b.lang(), "sh" | "console" | "shell"))
    {
        for (line, comment) in shell_lines(b) {
            for segment in line.split(" && ") {
                let words = shell_words::split(segment)
                    .unwrap_or_else(|e| panic!("{}: cannot split {segment:?}: {e}", b.at()));
                let Some(program) = words.first() else {
                    continue;
                };
                let is_mcpspec = matches!(program.as_str(), "mcpspec" | "target/release/mcpspec");
                if !is_mcpspec {
                    // `cargo build` is what the test harness did; `scripts/test` is this run.
                    not_run.push(format!("{}: {segment} (not mcpspec)", b.at()));
                    continue;
                }
                if let Some(why) = not_runnable(&words, dir.path()) {
                    not_run.push(format!("{}: {segment} ({why})", b.at()));
                    continue;
                }
                let args: Vec<String> = words[1..].iter().map(|w| with_built_server(w)).collect();
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let r = common::run_in(dir.path(), &args, &[]);
                assert_eq!(r.code, 0, "{}: `{segment}` failed:\n{r:?}", b.at());
                // `# ok: …` after a command is what it prints.
                if let Some(expected) = comment.strip_prefix("ok:") {
                    assert!(
                        r.stdout.contains(&format!("ok:{expected}")),
                        "{}: `{segment}` does not print `ok:{expected}`:\n{r:?}",
                        b.at()
                    );
                }
                ran.push(format!("{}: {segment}", b.at()));
            }
        }
    }
    eprintln!(
        "ran:\n  {}\nnot run:\n  {}",
        ran.join("\n  "),
        not_run.join("\n  ")
    );
    assert!(
        ran.iter()
            .any(|c| c.starts_with("README.md:") && c.contains("run examples/scenarios")),
        "the README's first command ran: {ran:?}"
    );
    assert!(
        ran.len() >= 5,
        "only {} documented commands ran: {ran:?}",
        ran.len()
    );
}

/// Every kind of the change-kind table (docs/src/contracts.md) is one `mcpspec diff` knows:
/// a rules file failing on all of them is valid (an unknown kind is an error with
/// did-you-mean). `tests/contract.rs` checks the other way: every change the example
/// server's `--change` flags produce is in the table, classified as the diff does.
#[test]
fn change_kind_table_names_only_known_kinds() {
    let mut kinds: Vec<String> = common::change_kind_table()
        .into_iter()
        .flat_map(|r| r.kinds)
        .collect();
    kinds.sort();
    kinds.dedup();
    assert!(kinds.len() > 50, "{kinds:?}");
    let (dir, path) =
        common::scenario_file("rules.yaml", &format!("fail: [{}]\n", kinds.join(", ")));
    let r = common::run(&["validate", &path.display().to_string()]);
    assert_eq!(
        r.code, 0,
        "the change-kind table names a kind mcpspec does not know:\n{r:?}"
    );
    drop(dir);
}

/// mdbook's id of a heading: lower case, spaces to `-`, other punctuation dropped.
fn heading_id(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every link between chapters of the book reaches a chapter, and its `#anchor` a heading.
#[test]
fn links_between_chapters_resolve() {
    let mut checked = 0;
    for file in doc_files().iter().skip(1) {
        let text = read(file);
        for (i, _) in text.match_indices("](") {
            let target = &text[i + 2..];
            let target = &target[..target.find(')').expect("a closed link")];
            if target.contains("://") || target.starts_with('<') {
                continue;
            }
            let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
            let chapter = file.parent().unwrap().join(if path.is_empty() {
                file.file_name().unwrap().to_str().unwrap()
            } else {
                path
            });
            assert!(
                common::repo_root().join(&chapter).is_file(),
                "{}: link to {target}: no such file",
                file.display()
            );
            if !anchor.is_empty() {
                let ids: Vec<String> = read(&chapter)
                    .lines()
                    .filter_map(|l| {
                        l.trim_start_matches('#')
                            .strip_prefix(' ')
                            .filter(|_| l.starts_with('#'))
                    })
                    .map(heading_id)
                    .collect();
                assert!(
                    ids.iter().any(|id| id == anchor),
                    "{}: link to {target}: no heading with that id in {} ({ids:?})",
                    file.display(),
                    chapter.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} links between chapters");
}

/// The project layout of config.md runs as the chapter shows it: its `mcpspec.yaml` (the
/// `local` target pointed at the example server), a scenario in `tests/mcp/` and the
/// baseline the configuration names inside that same folder — which is a baseline, not a
/// scenario (it was loaded as one: "unknown key `server`", exit 2).
#[test]
fn config_chapter_layout_runs() {
    let config = blocks(Path::new("docs/src/config.md"))
        .into_iter()
        .find(|b| b.lang() == "yaml" && kind_of(b) == Kind::Config)
        .expect("config.md shows an mcpspec.yaml");
    let server = common::example_server().display().to_string();
    assert!(
        config.text.contains("stdio: node build/index.js"),
        "{}",
        config.text
    );
    let text = config
        .text
        .replace("stdio: node build/index.js", &format!("stdio: {server}"));
    let baseline = text
        .lines()
        .find_map(|l| l.strip_prefix("expectedFailures: "))
        .expect("the chapter names a baseline")
        .trim()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mcpspec.yaml"), &text).unwrap();
    let folder = dir.path().join("tests/mcp");
    std::fs::create_dir_all(&folder).unwrap();
    // `parameters:` are template variables of every scenario: `{{ city }}` is Paris.
    std::fs::write(
        folder.join("weather.yaml"),
        "scenario: weather\nvars: { city: Boston }\nsteps:\n  - name: city\n    request: { method: tools/call, params: \
         { name: get_weather, arguments: { city: \"{{ city }}\" } } }\n    expect:\n      \
         - { path: \"$.structuredContent.city\", equals: Paris }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join(&baseline),
        "server: []   # known failures, none yet\nclient: []\n",
    )
    .unwrap();
    let env = [("QA_TOKEN", "t0ken")];
    let r = common::run_in(dir.path(), &["validate"], &env);
    assert_eq!(r.code, 0, "validate of the chapter's layout:\n{r:?}");
    let r = common::run_in(dir.path(), &["run", "--filter", "weather*"], &env);
    assert_eq!(r.code, 0, "run of the chapter's layout:\n{r:?}");
    assert!(r.stdout.contains("PASS"), "{r:?}");
}

/// errors.md's example error is what `mcpspec validate` prints for its mistake, byte for byte
/// (its list of step keys went stale as keys were added).
#[test]
fn errors_chapter_example_is_the_real_message() {
    let shown = blocks(Path::new("docs/src/errors.md"))
        .into_iter()
        .find(|b| b.text.starts_with("error: unknown key `expct`"))
        .expect("errors.md shows the error of a misspelt `expect`");
    let dir = tempfile::tempdir().unwrap();
    // `expct` on line 8, column 5, as the chapter shows.
    let bad = "scenario: s\ndescription: d\nsteps:\n  - name: list\n    request: { method: tools/list }\n    \
               expect:\n      - isError: false\n    expct:\n      - isError: false\n";
    std::fs::write(dir.path().join("bad.yaml"), bad).unwrap();
    let r = common::run_in(dir.path(), &["validate", "bad.yaml"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.starts_with(&shown.text),
        "{}: the example is not what mcpspec prints; it prints:\n{}",
        shown.at(),
        r.stderr
    );
}

/// getting-started.md's `mcpspec init` transcript: the files every project gets are listed as
/// init lists them (it said `.mcpspec/schema/ (2 files)` when init wrote 3).
#[test]
fn getting_started_init_transcript_matches_init() {
    let shown = blocks(Path::new("docs/src/getting-started.md"))
        .into_iter()
        .find(|b| b.text.starts_with("$ mcpspec init"))
        .expect("getting-started.md shows an init transcript");
    let dir = tempfile::tempdir().unwrap();
    let target = common::stdio_target(&[]);
    let r = common::run_in(dir.path(), &["init", "my-tests", "--stdio", &target], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    // Lines of any server: not the server's name and counts, its tools, or the elision.
    let generic = |l: &&str| {
        !l.starts_with("$ ")
            && !l.starts_with("connected to")
            && !l.starts_with("found ")
            && !l.contains('…')
            && !l.contains("/tools/")
            && !l.contains("/contract/")
    };
    for line in shown.text.lines().filter(generic) {
        assert!(
            r.stdout.lines().any(|l| l == line),
            "{}: init does not print {line:?}:\n{}",
            shown.at(),
            r.stdout
        );
    }
}

/// Every command that runs (`mcpspec eval run`, and a group that runs on its own as well,
/// `load` and `load compare`) with its help, at a fixed width: what `mcpspec help COMMAND`
/// prints, made the way the binary makes it (its clap definitions, parsing `help COMMAND`).
fn cli_sections() -> Vec<(String, String)> {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, out: &mut Vec<String>) {
        for sub in cmd.get_subcommands() {
            if sub.get_name() == "help" {
                continue;
            }
            let runs = !sub.has_subcommands()
                || sub
                    .get_arguments()
                    .any(|a| !matches!(a.get_id().as_str(), "help" | "version"));
            if runs {
                out.push(sub.get_bin_name().unwrap_or(sub.get_name()).to_string());
            }
            if sub.has_subcommands() {
                walk(sub, out);
            }
        }
    }
    let mut cmd = mcpspec::face::cli::Cli::command().term_width(100);
    cmd.build();
    let mut names = Vec::new();
    walk(&cmd, &mut names);
    names
        .into_iter()
        .map(|name| {
            let mut argv = vec!["mcpspec", "help"];
            argv.extend(name.split_whitespace().skip(1));
            let shown = mcpspec::face::cli::Cli::command()
                .term_width(100)
                .try_get_matches_from(&argv)
                .expect_err("`help COMMAND` shows the help");
            assert_eq!(shown.kind(), clap::error::ErrorKind::DisplayHelp, "{name}");
            let help: String = shown
                .render()
                .to_string()
                .lines()
                .map(|l| l.trim_end().to_string() + "\n")
                .collect();
            (name, help)
        })
        .collect()
}

/// The command reference of cli.md: every command's help ([`cli_sections`]).
fn cli_reference() -> String {
    cli_sections()
        .iter()
        .map(|(name, help)| format!("### `{name}`\n\n```text\n{help}```\n\n"))
        .collect()
}

/// `mcpspec help COMMAND` prints, for every command, exactly its section of the reference:
/// one source serves both (#38 item 20 — `help eval run` printed the long help, with the
/// `--junit-flavor` values explained, while the reference showed the short one).
#[test]
fn help_of_every_command_is_its_reference_section() {
    for (name, help) in cli_sections() {
        let mut args = vec!["help"];
        args.extend(name.split_whitespace().skip(1));
        let r = common::run_in(&common::repo_root(), &args, &[("COLUMNS", "100")]);
        assert_eq!(r.code, 0, "{name}: {r:?}");
        let printed: String = r
            .stdout
            .lines()
            .map(|l| l.trim_end().to_string() + "\n")
            .collect();
        assert!(
            printed == help,
            "`mcpspec {}` differs from the reference of `{name}`:\n--- printed\n{printed}\n--- reference\n{help}",
            args.join(" ")
        );
    }
}

/// cli.md's reference is generated from the clap definitions: a flag or command added without
/// it fails here (`UPDATE_GOLDEN=1` rewrites the block), as the check tables do.
#[test]
fn cli_reference_is_generated_from_the_clap_definitions() {
    let path = common::repo_root().join("docs/src/cli.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (begin, end) = ("<!-- cli:begin -->\n", "<!-- cli:end -->");
    let start = doc.find(begin).expect("cli.md has <!-- cli:begin -->") + begin.len();
    let stop = doc.find(end).expect("cli.md has <!-- cli:end -->");
    let generated = cli_reference();
    if common::updating_golden() {
        std::fs::write(
            &path,
            format!("{}{generated}{}", &doc[..start], &doc[stop..]),
        )
        .unwrap();
        return;
    }
    assert!(
        doc[start..stop] == generated,
        "the command reference of docs/src/cli.md is stale: run \
         `UPDATE_GOLDEN=1 cargo test --test docs cli_reference` to regenerate it"
    );
    for flag in [
        "--update-snapshots",
        "--offline",
        "--watch",
        "--last-failed",
    ] {
        assert!(generated.contains(flag), "{flag} is in the reference");
    }
    for command in [
        "mcpspec pack build",
        "mcpspec eval run",
        "mcpspec report merge",
    ] {
        assert!(generated.contains(&format!("### `{command}`")), "{command}");
    }
}
